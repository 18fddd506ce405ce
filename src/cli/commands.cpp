#include "kvsweep/cli/commands.hpp"

namespace kvsweep::cli {

void register_commands(CLI::App& app, Commands& commands) {
  register_run(app, commands);
  register_tiny_model(app, commands);
  register_report(app, commands);
  register_merge(app, commands);
  register_recall_tools(app, commands);
  register_recommend(app, commands);
}

}  // namespace kvsweep::cli
