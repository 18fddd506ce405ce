#pragma once
/// The report.md writer: seed 001's summary table per probe, the per-cell statistics, the gradient
/// and K-vs-V verdicts, the `ctk\ctv` grids, links to the figures and the cell outcomes.

#include <span>
#include <string>

#include "kvsweep/report/figures/figures.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

/// report_document() as Markdown, with the files of a full bundle; `figures` are linked by file name
/// (they sit beside report.md).
std::string write_markdown(const RunData& data, const RunSummary& summary, std::span<const Figure> figures);

}  // namespace kvsweep::report
