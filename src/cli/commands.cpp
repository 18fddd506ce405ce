#include "kvsweep/cli/commands.hpp"

#include <cmath>
#include <string>

namespace kvsweep::cli {

void register_commands(CLI::App& app, Commands& commands) {
  register_run(app, commands);
  register_tiny_model(app, commands);
  register_report(app, commands);
  register_merge(app, commands);
  register_recall_tools(app, commands);
  register_recommend(app, commands);
  register_published(app, commands);
}

CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          std::size_t used = 0;
          const double v = std::stod(text, &used);
          if (used == text.size() && std::isfinite(v)) return {};
        } catch (const std::exception&) {
        }
        return "expected a finite number, got '" + text + "'";
      },
      "FINITE");
}

}  // namespace kvsweep::cli
