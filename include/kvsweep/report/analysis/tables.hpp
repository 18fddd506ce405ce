#pragma once
/// The report's tables as rows of text, shared by the Markdown and HTML writers so both say the same.

#include <string>
#include <vector>

#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

/// Seed 001's summary table for one probe, one row per model: combos, pass /k (mean ± sd) when the
/// probe has a pass metric, avg main metric (mean ± sd), its range across cells, gradient?.
Table headline_table(const RunData& data, const RunSummary& summary, const std::string& probe);

/// One row per cell: K, V, outcome, items ok/failed, and per metric "mean [95% CI]"; a `*` marks a
/// cell that differs from its reference (p < alpha after Holm), "ref" the reference itself.
Table cell_table(const RunData& data, const RunSummary& summary, const std::string& probe);

/// One row per model and metric: Spearman rho of bits vs the metric with p and the verdict, then the
/// K (row) and V (column) marginal spreads with their own rho and p.
Table gradient_table(const RunData& data, const RunSummary& summary, const std::string& probe);

/// One row per cell: outcome, items ok and failed over all probes, KV buffer, ready time, message.
Table outcome_table(const RunData& data, const RunSummary& summary);

/// A seed-001-style fixed-width `ctk\ctv` grid of cell means with a K-mean column and a V-mean row.
/// Cells that differ from the reference carry `*`; cells without values show "—".
std::string grid_block(const RunData& data, const RunSummary& summary, const std::string& model,
                       const std::string& probe, const std::string& metric);

/// The direction a metric improves in, as an arrow for headers: "↑" or "↓".
std::string better_arrow(bool higher_is_better);
/// The arrow of a declared metric, "(diagnostic)" added for a metric that is reported, not gated.
std::string better_arrow(const MetricDef& metric);

}  // namespace kvsweep::report
