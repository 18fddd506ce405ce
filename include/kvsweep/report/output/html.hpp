#pragma once
/// The index.html writer: one self-contained page with the report's tables, the grids and every
/// figure inlined as SVG, linking the JSON and CSV files beside it.

#include <span>
#include <string>

#include "kvsweep/report/figures/figures.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

/// report_document() as one HTML page, with the files of a full bundle. `figures` carry their SVG text
/// (RenderSvg::yes); each is inlined without its XML declaration.
std::string write_html(const RunData& data, const RunSummary& summary, std::span<const Figure> figures);

}  // namespace kvsweep::report
