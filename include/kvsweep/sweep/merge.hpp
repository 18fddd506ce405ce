#pragma once
/// Merging run directories (shards of one sweep) into one run: same config hash required,
/// records unioned, an ok triple present in two runs must be identical.

#include <filesystem>
#include <string>
#include <vector>

#include "kvsweep/core/error.hpp"

namespace kvsweep::sweep {

struct MergeSummary {
  std::size_t runs = 0;
  std::size_t records = 0;
  std::size_t duplicates_dropped = 0;  // identical records seen in more than one run
  std::size_t cells = 0;
};

/// Joins `inputs` into a new run directory `output` (which must not hold records).
core::Expected<MergeSummary> merge_runs(const std::vector<std::filesystem::path>& inputs,
                                        const std::filesystem::path& output);

}  // namespace kvsweep::sweep
