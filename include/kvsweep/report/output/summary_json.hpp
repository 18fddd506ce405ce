#pragma once
/// The summary.json writer: the run's context, every cell × probe × metric summary with its raw
/// per-item values, the tests against the reference, gradients and marginal means. compare reads it back.

#include <string>

#include <nlohmann/json.hpp>

#include "kvsweep/report/input/context.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

/// The document (keys in writing order; NaN is written as null).
nlohmann::ordered_json summary_document(const RunData& data, const RunSummary& summary, const Generator& generator);

/// summary_document() indented by two spaces, with a final newline.
std::string write_summary_json(const RunData& data, const RunSummary& summary, const Generator& generator);

}  // namespace kvsweep::report
