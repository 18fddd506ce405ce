#pragma once
/// The heatmap figure: one model's `ctk × ctv` grid of one probe metric as annotated, coloured cells.

#include <string>

#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

/// An SVG document: K types down, V types across, each cell coloured by its mean (viridis, the
/// better end yellow whichever way the metric points) and annotated with the mean and its Δ to the
/// reference (`*` when significant after Holm); the reference cell outlined; cells without values
/// grey with their outcome; a legend bar from worst to best; the gradient verdict underneath.
std::string heatmap_svg(const RunData& data, const RunSummary& summary, const std::string& model,
                        const std::string& probe, const std::string& metric);

}  // namespace kvsweep::report
