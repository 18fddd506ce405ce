#include "kvsweep/sweep/run/run_manifest.hpp"

#include <chrono>

#include "kvsweep/config/slot_env.hpp"
#include "kvsweep/core/clock.hpp"
#include "kvsweep/sweep/run/attention_paths.hpp"
#include "kvsweep/sweep/store/cell_journal.hpp"

namespace kvsweep::sweep {

nlohmann::json cell_result_json(const CellResult& r) {
  nlohmann::json j = r.cell.to_json();
  j["id"] = r.cell.id();
  j["is_reference"] = r.cell.is_reference;
  if (r.cell.support) j["support"] = true;
  j["outcome"] = server::to_string(r.outcome);
  j["message"] = r.message;
  j["items_ok"] = r.items_ok;
  j["items_failed"] = r.items_failed;
  j["items_skipped"] = r.items_skipped;
  if (r.items_settled > 0) j["items_settled"] = r.items_settled;
  j["restarts"] = r.restarts;
  j["ready_s"] = r.ready_s;
  j["wall_s"] = r.wall_s;
  j["stop_s"] = r.stop_s;
  j["items_wall_s"] = r.items_wall_s;
  j["server_ms"] = r.server_ms;
  j["effective"] = server::to_json(r.effective);
  if (!r.started_at.empty()) {
    j["started_at"] = r.started_at;
    j["finished_at"] = r.finished_at;
  }
  if (r.load_avg >= 0) j["load_avg"] = r.load_avg;
  if (!r.lifecycle.empty()) j["lifecycle"] = r.lifecycle;
  if (r.slot >= 0) {
    j["slot"] = r.slot;
    j["slot_env"] = config::env_for_record(r.slot_env);
  }
  return j;
}

void RunManifest::open() {
  if (auto old = RunStore::read_manifest(m_store.dir()); old) {
    if (auto read = Manifest::from_json(*old)) m_manifest = std::move(*read);
  }
  // A manifest that lost cells (a crash between the journal and the manifest's rename) gets them back.
  if (auto journal = RunStore::read_cells(m_store.dir()); !journal.empty())
    m_manifest.cells = rebuild_cells(m_manifest.cell_list(), journal);
}

std::string RunManifest::update(const std::vector<CellResult>& results, const std::string& status) {
  std::string error;  // the first failure; the manifest is still written after a journal failure
  // Keep outcomes of cells this invocation does not touch (resume, shards, --only).
  std::vector<ManifestCell> cells = m_manifest.cell_list();
  for (const auto& r : results) {
    if (r.outcome == server::CellOutcome::pending) continue;
    const nlohmann::json j = cell_result_json(r);
    // The journal first: a crash before the manifest's rename loses nothing a resume cannot rebuild.
    if (m_journaled.insert(r.cell.key()).second) {
      if (auto journaled = m_store.append_cell(j); !journaled && error.empty()) error = journaled.error().message;
    }
    fold_cell(cells, *ManifestCell::from_json(j));
  }
  m_paths = resolve_attention_paths(cells);
  m_manifest.cells = cells;
  m_manifest.status = status;
  m_manifest.updated_at = core::iso8601(std::chrono::system_clock::now());
  if (status != "running") m_manifest.finished_at = m_manifest.updated_at;
  if (auto w = m_store.write_manifest(to_json(m_manifest)); !w && error.empty()) error = w.error().message;
  return error;
}

}  // namespace kvsweep::sweep
