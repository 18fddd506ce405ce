#pragma once
/// The manifest's attention path per cell, decided across cells: each cell's own verdict (from its
/// log) set against its reference cell's graph splits, which is how `fallback?` is found.

#include <nlohmann/json.hpp>

namespace kvsweep::sweep {

/// Sets `effective.path` and `effective.path_reason` of every manifest cell whose log was read
/// (`effective.attention`): its own path, or `fallback?` when its graph has more splits than the
/// reference cell's of the same model and variant. Cells run in any order, so this runs on the whole
/// list each time the manifest is written.
void resolve_attention_paths(nlohmann::json& cells);

}  // namespace kvsweep::sweep
