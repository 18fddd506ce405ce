#pragma once
/// The telephone probe's figures (seed 000): similarity to the original vs hop for every cell, and the
/// sorted Δ-vs-reference bar chart.

#include <string>
#include <utility>
#include <vector>

#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

/// Mean sim_original per hop (1-based, index 0 = hop 1) over the ok chains of one cell that reached
/// that hop, from each record's response.hops[]; empty when no chain has hops.
std::vector<double> mean_similarity_by_hop(const RunData& data, std::size_t cell, const std::string& probe);

/// One line per cell of `model`: colour by K type, dash by V type (solid for the grid's first V
/// type, as seed 000 draws f16 KV solid and q8_0 dashed), the reference drawn heavier; the
/// probe's threshold as a grey dashed line; a legend with each cell's final value.
std::string telephone_hops_svg(const RunData& data, const std::string& model, const std::string& probe);

/// The metric the Δ chart shows: final_similarity when the probe has it, else its main metric.
std::string telephone_delta_metric(const RunData& data, const RunSummary& summary, const std::string& probe);

/// Horizontal bars of Δ = cell − reference of telephone_delta_metric() for every non-reference
/// cell of every model, sorted from best to worst: blue better, vermillion worse, pale when not
/// significant after Holm, whiskers the 95% bootstrap CI of the paired difference.
std::string telephone_delta_svg(const RunData& data, const RunSummary& summary, const std::string& probe);

}  // namespace kvsweep::report
