#include "kvsweep/sweep/store/cell_journal.hpp"

#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::sweep {

void fold_cell(nlohmann::json& cells, const nlohmann::json& entry) {
  if (!cells.is_array()) cells = nlohmann::json::array();
  const bool skipped = entry.value("outcome", "") == "skipped";
  for (auto& c : cells) {
    if (!c.is_object() || core::CellKey::from_json(c) != core::CellKey::from_json(entry)) continue;
    if (!skipped) c = entry;  // a resumed cell that only skipped items keeps its earlier outcome
    return;
  }
  nlohmann::json added = entry;
  if (skipped) {
    added["outcome"] = "ok";
    added["message"] = "outcome rebuilt from the records: every item is recorded ok or settled";
  }
  cells.push_back(std::move(added));
}

nlohmann::json rebuild_cells(nlohmann::json cells, const std::vector<nlohmann::json>& journal) {
  if (!cells.is_array()) cells = nlohmann::json::array();
  for (const auto& entry : journal) fold_cell(cells, entry);
  return cells;
}

}  // namespace kvsweep::sweep
