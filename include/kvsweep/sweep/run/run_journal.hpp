#pragma once
/// The manifest while a run writes it: the provenance the runner sets once, then each cell's outcome
/// journaled (cells.jsonl) before the manifest that holds it, and the attention paths decided across
/// the cells (attention_paths). The runner's journal, in a unit of its own.

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/server/attention_path.hpp"
#include "kvsweep/sweep/run/cell_result.hpp"
#include "kvsweep/sweep/store/manifest.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::sweep {

/// A cell's outcome as the journal and the manifest hold it.
ManifestCell manifest_cell(const CellResult& result);

/// Not thread-safe: a parallel run calls update() under its own lock.
class RunJournal {
 public:
  explicit RunJournal(RunStore& store) : m_store(store) {}

  /// The manifest as the run directory holds it (an earlier invocation's, cells a crash kept out of it
  /// rebuilt from the journal); the runner sets its provenance before the first update().
  void open();
  Manifest& manifest() { return m_manifest; }

  /// Folds each ended cell of `results` into the manifest's cells (each journaled once per invocation,
  /// before the manifest), decides the attention paths, and writes the manifest with `status`.
  /// Returns "" or why the journal or the manifest could not be written (the run then stops).
  std::string update(const std::vector<CellResult>& results, const std::string& status);

  /// The attention paths the manifest holds, by cell (fallback? needs the reference cell's graph splits).
  const std::map<core::CellKey, server::PathVerdict>& paths() const { return m_paths; }

 private:
  RunStore& m_store;
  Manifest m_manifest;
  std::set<core::CellKey> m_journaled;  // cells whose outcome this invocation put in cells.jsonl
  int m_journal_lines = 0;              // the entries cells.jsonl holds (read_cells), as the manifest records
  std::map<core::CellKey, server::PathVerdict> m_paths;
};

}  // namespace kvsweep::sweep
