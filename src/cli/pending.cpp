// Commands of DESIGN.md that are not built yet: listed in --help, and say so when run.
#include <cstdio>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/core/exit_codes.hpp"

namespace kvsweep::cli {

void register_pending(CLI::App& app, Commands& commands) {
  struct Pending {
    const char* name;
    const char* help;
    const char* issue;
  };
  static const Pending pending[] = {
      {"corpus", "Generate corpora, e.g. `corpus random-bodies` (not built yet)", "issue 5"},
      {"extract", "List named functions with their body lines (not built yet)", "issue 5"},
      {"sample", "Stratified sample of recall targets (not built yet)", "issue 5"},
      {"score", "Score one recall answer: JSON in on stdin, JSON out (not built yet)", "issue 5"},
  };
  for (const auto& p : pending) {
    auto* sub = app.add_subcommand(p.name, p.help);
    sub->allow_extras();
    sub->callback([&commands, p] {
      commands.action = [p] {
        std::fprintf(stderr, "kvsweep %s: not built yet (%s)\n", p.name, p.issue);
        return core::exit_code::error;
      };
    });
  }
}

}  // namespace kvsweep::cli
