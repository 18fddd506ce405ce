#include <cstdio>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/sweep/store/merge.hpp"

namespace kvsweep::cli {

void register_merge(CLI::App& app, Commands& commands) {
  auto* sub = app.add_subcommand("merge",
                                 "Join run directories (the shards of one sweep, --shard I/N) into one run that "
                                 "reports exactly as an unsharded one");
  struct Opts {
    std::vector<std::string> inputs;
    std::string out;
    bool allow_build_change = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("runs", o->inputs, "Run directories to join (same config)")->required()->expected(2, -1);
  sub->add_option("-o,--output", o->out, "The merged run directory (new)")->required();
  sub->add_flag("--allow-build-change", o->allow_build_change,
                "Merge runs made with different server builds (llama-server --version differs) anyway; the merged "
                "manifest lists each run's build");
  sub->callback([&commands, o] {
    commands.action = [o] {
      std::vector<std::filesystem::path> in(o->inputs.begin(), o->inputs.end());
      auto r = sweep::merge_runs(in, o->out, o->allow_build_change);
      if (!r) throw core::FatalError("merge: " + r.error().message);
      std::printf("merged %zu runs into %s: %zu cells, %zu records (%zu duplicates dropped, %zu records of support "
                  "copies of the reference cell dropped)\n",
                  r->runs, o->out.c_str(), r->cells, r->records, r->duplicates_dropped, r->support_dropped);
      if (!r->missing_shards.empty()) {
        std::string list;
        for (const auto& s : r->missing_shards) list += (list.empty() ? "" : ", ") + s;
        std::fprintf(stderr, "kvsweep merge: missing shards %s: the merged run is partial "
                             "(merge all the shards again when they finish)\n", list.c_str());
      }
      return core::exit_code::ok;
    };
  });
}

}  // namespace kvsweep::cli
