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
/// For a kld probe also, per model: the corpus's perplexity under the reference (flagged near random
/// above kNearRandomPpl) and the noise floor beside the distance thresholds.
std::vector<std::string> calibration_lines(const RunData& data, const RunSummary& summary, const ProbeDef& probe);

/// A corpus the reference reads above this perplexity is near random for the model: natural
/// English reads at 10–30 (SmolLM2-135M: 23 on the built-in text), kld's random-bodies code corpus
/// at 110–128 on SmolLM2, where same_top_p fell to 74 % for q8_0 K on CUDA (near-tied tokens).
inline constexpr double kNearRandomPpl = 60;

}  // namespace kvsweep::report
