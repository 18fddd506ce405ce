#pragma once
/// Whether a probe can show a difference on this model at all: its calibration metric on the
/// reference cell, and a warning when that sits at the floor or the ceiling of its range.

#include <string>
#include <vector>

#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

/// One line per model for a probe that declares a calibration metric (none otherwise), e.g.
/// "Calibration (tiny): primary_matched is 0.00 of 0–20 on the reference cell tiny/f16/f16
/// (2 items). Warning: floored — recall cannot show a difference on this model." Floored and
/// saturated mean within 2 % of the range's end.
std::vector<std::string> calibration_lines(const RunData& data, const RunSummary& summary, const ProbeDef& probe);

}  // namespace kvsweep::report
