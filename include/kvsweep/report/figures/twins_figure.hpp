#pragma once
/// The twins probe's figure: flip rate against the reference's measured margin bin, one line per cell
/// with its Wilson 95 % interval at each bin.

#include <string>

#include "kvsweep/report/analysis/twins_bins.hpp"
#include "kvsweep/report/input/run_data.hpp"

namespace kvsweep::report {

/// The SVG for one group's bins (twins_bins()).
std::string twins_flips_svg(const RunData& data, const TwinsBins& bins);

}  // namespace kvsweep::report
