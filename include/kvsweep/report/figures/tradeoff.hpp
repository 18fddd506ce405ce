#pragma once
/// The trade-off figure: a probe's quality against KV memory, one point per cell, with the
/// reference marked, the Pareto frontier drawn and the recommended cell highlighted.

#include <cstddef>
#include <optional>
#include <string>

#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

/// The metric the figure plots for a probe: its first quality metric with values in the summary (empty if none).
std::string tradeoff_metric(const RunData& data, const RunSummary& summary, const std::string& probe);

/// The SVG for one model and probe: x = the cell's KV buffer in MiB at the run's -c, y = the cell mean
/// of tradeoff_metric(); `recommended` is the cell recommend() chose (highlighted), if any.
std::string tradeoff_svg(const RunData& data, const RunSummary& summary, const std::string& model,
                         const std::string& probe, std::optional<std::size_t> recommended);

}  // namespace kvsweep::report
