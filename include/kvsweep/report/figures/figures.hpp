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

/// Which metrics get a heat map: those that gate a verdict (report::gates with the run's own gates: a
/// probe's "gate", else quality and the distances with a threshold), or every metric with a grid
/// (`kvsweep report --heatmaps all`). The grids' CSV files are written for every metric either way.
enum class Heatmaps { gated, all };

/// heatmap-<probe>-<metric>-<model>.svg per model for every gated metric with values (every metric with
/// `Heatmaps::all`); for probes of kind telephone also telephone-<probe>-hops-<model>.svg and
/// telephone-<probe>-delta.svg; for probes of kind twins twins-<probe>-flips-<model>.svg; for probes of
/// kind longkl longkl-<probe>-depth-<model>.svg.
std::vector<Figure> render_figures(const RunData& data, const RunSummary& summary, RenderSvg render = RenderSvg::yes,
                                   Heatmaps heatmaps = Heatmaps::gated);

}  // namespace kvsweep::report
