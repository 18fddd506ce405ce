#include "kvsweep/sweep/run/run_journal.hpp"

#include <chrono>

#include "kvsweep/config/slot_env.hpp"
#include "kvsweep/core/clock.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/sweep/run/attention_paths.hpp"
#include "kvsweep/sweep/store/cell_journal.hpp"

namespace kvsweep::sweep {

ManifestCell manifest_cell(const CellResult& r) {
  ManifestCell c;
  c.set_key(r.cell.key());
  c.id = r.cell.id();
  c.is_reference = r.cell.is_reference;
  if (r.cell.support) c.support = true;
  c.outcome = std::string(server::to_string(r.outcome));
  c.message = r.message;
  c.items_ok = r.items_ok;
  c.items_failed = r.items_failed;
  c.items_skipped = r.items_skipped;
  if (r.items_settled > 0) c.items_settled = r.items_settled;
  c.restarts = r.restarts;
  c.ready_s = r.ready_s;
  c.wall_s = r.wall_s;
  c.stop_s = r.stop_s;
  c.items_wall_s = r.items_wall_s;
  c.server_ms = r.server_ms;
  // What the server reported, through its one JSON form (server::to_json: which keys a log gives).
  c.effective = CellEffective::from_json(server::to_json(r.effective));
  if (!r.started_at.empty()) {
    c.started_at = r.started_at;
    c.finished_at = r.finished_at;
  }
  if (r.load_avg >= 0) c.load_avg = r.load_avg;
  if (!r.lifecycle.empty()) c.lifecycle = r.lifecycle;
  if (r.slot >= 0) {
    c.slot = r.slot;
    c.slot_env = config::env_for_record(r.slot_env);
  }
  return c;
}

void RunJournal::open() {
  // A manifest that lost cells (a crash between the journal and the manifest's rename) gets them back:
  // read_manifest folds the journal in. A journal without a manifest (a crash before the first one) too.
  auto journal = RunStore::read_cells(m_store.dir());
  if (!journal) throw core::FatalError(journal.error().message);
  m_journal_lines = static_cast<int>(journal->size());
  if (auto old = RunStore::read_manifest(m_store.dir())) m_manifest = std::move(*old);
  else if (!journal->empty()) m_manifest.cells = rebuild_cells({}, *journal);
}

std::string RunJournal::update(const std::vector<CellResult>& results, const std::string& status) {
  std::string error;  // the first failure; the manifest is still written after a journal failure
  // Keep outcomes of cells this invocation does not touch (resume, shards, --only).
  std::vector<ManifestCell> cells = m_manifest.cell_list();
  for (const auto& r : results) {
    if (r.outcome == server::CellOutcome::pending) continue;
    const ManifestCell cell = manifest_cell(r);
    // The journal first: a crash before the manifest's rename loses nothing a resume cannot rebuild.
    if (m_journaled.insert(r.cell.key()).second) {
      if (auto journaled = m_store.append_cell(cell); !journaled && error.empty()) error = journaled.error().message;
      else if (journaled) ++m_journal_lines;
    }
    fold_cell(cells, cell);
  }
  m_paths = resolve_attention_paths(cells);
  // The host's compute as llama.cpp reported it, once a cell's server logged it (kept across resumes).
  if (m_manifest.compute.is_null()) m_manifest.compute = host_compute(cells);
  m_manifest.cells = cells;
  m_manifest.journaled = m_journal_lines;
  m_manifest.status = status;
  m_manifest.updated_at = core::iso8601(std::chrono::system_clock::now());
  if (status != "running") m_manifest.finished_at = m_manifest.updated_at;
  if (auto w = m_store.write_manifest(m_manifest); !w && error.empty()) error = w.error().message;
  return error;
}

}  // namespace kvsweep::sweep
