#pragma once
/// summary.json made from a run: its context, every cell × probe × metric summary with its raw per-item
/// values, the tests against the reference, gradients and marginal means, as one report::Summary.

#include <string>

#include <nlohmann/json.hpp>

#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/analysis/summary.hpp"
#include "kvsweep/report/input/context.hpp"
#include "kvsweep/report/input/run_data.hpp"

namespace kvsweep::report {

/// The run's summary as summary.json holds it (what compare reads of a run directory).
Summary make_summary(const RunData& data, const RunSummary& summary, const Generator& generator);

/// to_json(make_summary()): the document, keys in writing order.
nlohmann::ordered_json summary_document(const RunData& data, const RunSummary& summary, const Generator& generator);

/// summary_document() indented by two spaces, with a final newline.
std::string write_summary_json(const RunData& data, const RunSummary& summary, const Generator& generator);

}  // namespace kvsweep::report
