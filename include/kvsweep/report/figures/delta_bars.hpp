#pragma once
/// A sorted horizontal bar chart of paired differences with their bootstrap intervals: the
/// telephone Δ-vs-reference figure and the variant-effect figure draw the same way.

#include <string>
#include <vector>

#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

struct DeltaBar {
  std::string label;
  const ReferenceTest* test;  // delta, delta_ci, significant
};

struct DeltaChart {
  std::string title;
  std::string subtitle;         // what Δ is
  std::string metric;           // the x-axis label is "Δ <metric>"
  bool higher_is_better = true; // blue for better, vermillion for worse
  std::string empty_text;       // shown when there are no bars
};

/// Bars sorted best first; pale when not significant, `*` when significant.
std::string delta_bars_svg(const DeltaChart& chart, std::vector<DeltaBar> bars);

}  // namespace kvsweep::report
