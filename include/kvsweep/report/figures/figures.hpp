#pragma once
/// The list of a run's figures: a heatmap per model and grid metric, and the telephone figures.

#include <string>
#include <vector>

#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

struct Figure {
  std::string file;   // name inside RUN_DIR/report/
  std::string title;
  std::string probe;
  std::string svg;    // empty when rendered without content (names only)
};

enum class RenderSvg { yes, no };

/// heatmap-<probe>-<metric>-<model>.svg for every probe metric with values, per model; for probes of
/// kind telephone also telephone-<probe>-hops-<model>.svg and telephone-<probe>-delta.svg.
std::vector<Figure> render_figures(const RunData& data, const RunSummary& summary, RenderSvg render = RenderSvg::yes);

}  // namespace kvsweep::report
