#pragma once
/// The copy model is an instrument: on an unambiguous corpus its reference cell recalls every
/// line, so a recall reference below the ceiling on it means the corpus, not the KV cache, loses
/// lines (short values repeat the punctuation every line shares; at length a wrong line start
/// outscores the right one). The report says so rather than let a quantized cell look better.

#include <cstddef>
#include <string>

#include "kvsweep/report/input/run_data.hpp"

namespace kvsweep::report {

/// Below this share of the calibration range the copy model's reference is not at its ceiling.
inline constexpr double copy_model_ceiling_share = 0.95;

/// For a recall probe whose reference cell (`reference`, a cell of `data`) runs on a model the
/// manifest marks as kvsweep's copy model (models[].copy_model) and recalls `mean` lines, below
/// copy_model_ceiling_share of the range: "Warning: the reference recalls 7.88 of 20 lines: this
/// corpus is too ambiguous for the copy model at 127K tokens; use longer values (…)". The length
/// is the longest prompt of the reference's items (the records' corpus_tokens + question_tokens).
/// Empty otherwise.
std::string copy_model_warning(const RunData& data, std::size_t reference, const ProbeDef& probe, double mean);

/// "127K" for 127,300 tokens (thousands, rounded), "900" below a thousand.
std::string tokens_label(long long tokens);

}  // namespace kvsweep::report
