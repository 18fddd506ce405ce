#include "kvsweep/sweep/store/cell_journal.hpp"

#include <algorithm>

namespace kvsweep::sweep {

void fold_cell(std::vector<ManifestCell>& cells, const ManifestCell& entry) {
  const bool skipped = entry.outcome_text() == "skipped";
  for (auto& c : cells) {
    if (c.key() != entry.key()) continue;
    if (!skipped) c = entry;  // a resumed cell that only skipped items keeps its earlier outcome
    return;
  }
  ManifestCell added = entry;
  if (skipped) {
    added.outcome = "ok";
    added.message = "outcome rebuilt from the records: every item is recorded ok or settled";
  }
  cells.push_back(std::move(added));
}

namespace {

/// Whether `cell` already holds `entry`: equal but for the attention path, which the runner decides across
/// the cells after journaling them (resolve_attention_paths) — the manifest's copy is the decided one.
bool holds(const ManifestCell& cell, const ManifestCell& entry) {
  ManifestCell a = cell, b = entry;
  for (ManifestCell* c : {&a, &b}) {
    if (!c->effective) continue;
    c->effective->path.reset();
    c->effective->path_reason.reset();
  }
  return to_json(a) == to_json(b);
}

}  // namespace

std::vector<ManifestCell> rebuild_cells(std::vector<ManifestCell> cells, std::span<const ManifestCell> journal) {
  for (const auto& entry : journal) {
    const auto held = std::ranges::find_if(cells, [&](const ManifestCell& c) { return c.key() == entry.key(); });
    if (held != cells.end() && holds(*held, entry)) continue;
    fold_cell(cells, entry);
  }
  return cells;
}

}  // namespace kvsweep::sweep
