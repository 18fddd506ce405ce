#pragma once
/// The longkl probe's figure: the mean KL lower bound against depth (log scale), one line per cell.

#include <string>

#include "kvsweep/report/analysis/longkl_depth.hpp"
#include "kvsweep/report/input/run_data.hpp"

namespace kvsweep::report {

/// The SVG for one group's curves (longkl_depth()).
std::string longkl_depth_svg(const RunData& data, const DepthCurves& curves);

}  // namespace kvsweep::report
