#pragma once
/// summary.json's text: make_summary() of a run, written by to_json(Summary).

#include <string>

#include <nlohmann/json.hpp>

#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/analysis/summary.hpp"
#include "kvsweep/report/input/context.hpp"
#include "kvsweep/report/input/run_data.hpp"

namespace kvsweep::report {

/// to_json(make_summary()): the document, keys in writing order.
nlohmann::ordered_json summary_document(const RunData& data, const RunSummary& summary, const Generator& generator);

/// summary_document() indented by two spaces, with a final newline.
std::string write_summary_json(const RunData& data, const RunSummary& summary, const Generator& generator);

}  // namespace kvsweep::report
