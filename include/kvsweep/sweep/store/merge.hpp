#pragma once
/// Merging run directories (shards of one sweep) into one run: one run identity required (config,
/// models, embedder, input files, server build and environment: `check_identity`),
/// records unioned, an ok triple present in two runs must be identical; a shard's support copy
/// of a reference cell gives way to the shard that owns the cell.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::sweep {

struct MergeSummary {
  std::size_t runs = 0;
  std::size_t records = 0;
  std::size_t duplicates_dropped = 0;  // identical records seen in more than one run
  std::size_t support_dropped = 0;     // records of support cells whose owning shard is merged too
  std::size_t cells = 0;
  std::vector<std::string> missing_shards;  // "I/N" of shards not among the inputs (the run is then partial)
};

/// Joins `inputs` into a new run directory `output` (absent, or an empty directory). The run is
/// built in a hidden sibling (".NAME.merging") and renamed to `output` once whole, so a merge killed
/// midway leaves `output` as it was and the same command can run again. Inputs of different server
/// builds are refused unless `allow_build_change` (then recorded in the manifest).
core::Expected<MergeSummary> merge_runs(const std::vector<std::filesystem::path>& inputs,
                                        const std::filesystem::path& output, bool allow_build_change = false);

/// A manifest's server build in words: backend, `llama-server --version`'s version and "built with"
/// line ("llama-server 0.5.0-dev (build 1, commit de3ff81) (built with GNU 12.2.0 for Linux x86_64)").
std::string server_build(const Manifest& manifest);

}  // namespace kvsweep::sweep
