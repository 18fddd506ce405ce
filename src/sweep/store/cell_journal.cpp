#include "kvsweep/sweep/store/cell_journal.hpp"

#include "kvsweep/sweep/store/run_store.hpp"

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

std::vector<ManifestCell> rebuild_cells(std::vector<ManifestCell> cells, const std::vector<nlohmann::json>& journal) {
  for (const auto& line : journal)
    if (auto entry = ManifestCell::from_json(line)) fold_cell(cells, *entry);
  return cells;
}

}  // namespace kvsweep::sweep
