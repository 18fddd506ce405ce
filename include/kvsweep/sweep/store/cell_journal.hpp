#pragma once
/// The manifest's cell outcomes as a fold of the outcomes journal (cells.jsonl, written before
/// each manifest): an entry replaces the one with its cell key, except that a cell a resume only
/// skipped keeps the outcome it had. The runner folds as it goes; a resume folds the whole journal
/// over the manifest it reads, so a manifest that lost cells (a crash between journal and rename)
/// gets them back.

#include <span>
#include <vector>

#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::sweep {

/// Folds one cell entry (the manifest's form) into `cells`. A skipped entry with no earlier
/// outcome (its manifest entry was lost) becomes "ok": a cell is skipped only when every item is
/// recorded ok (or settled), which the records show.
void fold_cell(std::vector<ManifestCell>& cells, const ManifestCell& entry);

/// `cells` with every journal entry (a line of cells.jsonl, RunStore::read_cells) folded in, in order. An
/// entry a cell already holds (equal but for the attention path the runner decided across the cells after
/// journaling it) is not folded again: the cell keeps its decided path.
std::vector<ManifestCell> rebuild_cells(std::vector<ManifestCell> cells, std::span<const ManifestCell> journal);

}  // namespace kvsweep::sweep
