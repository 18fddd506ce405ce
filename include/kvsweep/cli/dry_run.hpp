#pragma once
/// `kvsweep run CONFIG --dry-run`: the plan before anything runs — cells in run order, per probe its
/// items per cell, the corpus's tokens, the -c every cell gets, and for each gated metric whether the
/// items can ever settle its verdict at its margin, and the time a previous run of the model says it takes.

#include <filesystem>
#include <memory>
#include <vector>

#include "kvsweep/config/config.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/server/backend.hpp"
#include "kvsweep/sweep/run/runner.hpp"

namespace kvsweep::cli {

/// Where runs go without -o: the config's output_dir, a relative one under the working directory.
std::filesystem::path runs_directory(const config::Config& config);

/// The plan's time per model, for the models an earlier complete run under runs_directory() gives
/// rates for ("time: ~4m10s (from run …)"), as the dry run words it; what `run` says before it starts.
std::vector<std::string> time_lines(const config::Config& config,
                                    const std::vector<std::unique_ptr<probe::Probe>>& probes,
                                    const sweep::RunOptions& options);

/// A progress sink that says nothing: --measure's cells are not the plan's.
class Quiet : public sweep::ProgressSink {
 public:
  void plan(std::size_t, std::size_t) override {}
  void cell_started(std::size_t, std::size_t, const sweep::Cell&, int) override {}
  void item_done(const sweep::Cell&, const std::string&, const std::string&, const std::string&, double) override {}
  void cell_done(const sweep::CellResult&) override {}
  void note(const std::string&) override {}
};

/// A fresh directory of its own for --measure's run, under the temp directory (mkdtemp: a name nobody
/// could plant beforehand, mode 0700, never one that exists). Throws core::FatalError when none can be made.
std::filesystem::path measure_directory();

/// Prints the plan on stdout. A probe whose prompt holds a corpus (recall) has it counted in tokens by
/// the model's own tokenizer: `backend` starts one server for the first model (llama-server: loaded
/// with -c 512 for the count, then stopped; external: the attached server) and asks /tokenize; an
/// Ollama backend has no tokenize endpoint, so the count is left out. The time is estimated per model
/// from the complete run under runs_directory() that ran the same model file last. Returns the exit code.
/// With `resumed_dir` (--dry-run --resume DIR, its checks passed): what the run keeps of its records
/// and what it would run, and what the config adds when it grows the run (options.grown).
/// `measure` (--measure): a model without a previous run gets its time from one item of each probe
/// (but those that need the embedding server) run now on its reference cell, in a temporary directory.
int print_dry_run(const config::Config& config, std::vector<std::unique_ptr<probe::Probe>>& probes,
                  const sweep::RunOptions& options, server::Backend& backend, const std::string& resumed_dir = "",
                  bool measure = false);

}  // namespace kvsweep::cli
