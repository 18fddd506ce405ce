#pragma once
/// The manifest's attention path per cell, decided across cells: each cell's own verdict (from its
/// log) set against its reference cell's graph splits, which is how `fallback?` is found.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/server/attention_path.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::sweep {

/// What a cell's log said of its attention, as the manifest keeps it (`effective.attention`).
struct CellAttention {
  core::CellKey key;
  bool is_reference = false;
  server::PathVerdict own;  // the verdict of the cell's own log
  server::GraphSplits splits;
  std::string fa_quants;
};

/// A manifest cell's attention facts, read once; nullopt when its log was not read.
std::optional<CellAttention> cell_attention(const ManifestCell& cell);

/// Each cell's path: its own, or `fallback?` when its graph has more splits than the reference cell's
/// of the same model and variant. Cells run in any order, so this is decided on the whole list.
std::map<core::CellKey, server::PathVerdict> resolve_attention_paths(const std::vector<CellAttention>& cells);

/// Sets `effective.path` and `effective.path_reason` of every manifest cell whose log was read
/// (`effective.attention`) from resolve_attention_paths(), and returns those verdicts by cell.
std::map<core::CellKey, server::PathVerdict> resolve_attention_paths(std::vector<ManifestCell>& cells);

}  // namespace kvsweep::sweep
