#pragma once
/// The report of a run as one Document: report.md and index.html are its two renderings, so they hold
/// the same sections in the same order. Where a new section goes: a function here that adds blocks
/// (as cost_section does in cost.cpp), called from report_document() in report order.

#include <span>
#include <string>
#include <vector>

#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/figures/figures.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

/// Title; context, status, method and the files beside the report; Verdict; per probe its headline
/// table, calibration, Cells, Gradient and K vs V, Grids, Variant effect and Figures; Cost; Cell
/// outcomes. `files` are the report's other files, linked in that order; `figures` are shown per probe
/// (pass none when no figure is written).
Document report_document(const RunData& data, const RunSummary& summary, std::span<const Figure> figures,
                         const std::vector<std::string>& files);

/// What `kvsweep report --format all` writes beside the figures: summary.json, long.csv, the grids'
/// CSVs, report.md and index.html, in that order.
std::vector<std::string> bundle_files(const RunData& data, const RunSummary& summary);

/// "Run status: complete · 9 cells · 108 records."; a run that ended with a group whose reference cell
/// has no ok record: "Run status: failed · nothing measured for tiny (its reference cell has no ok
/// record) · 4 cells · 0 records." (run_status, unmeasured_groups).
std::string status_line(const RunData& data);

/// One item per model: "tiny: **verdict**: sentence" (recommend's headline with the default margins).
std::vector<Text> verdict_items(const RunData& data);

/// The sentence that says how the numbers were made.
std::string method_note(const RunData& data, const RunSummary& summary);

}  // namespace kvsweep::report
