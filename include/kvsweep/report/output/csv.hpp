#pragma once
/// The CSV writers: a `ctk\ctv` grid of cell means per probe metric (one block of rows per model),
/// and long.csv with one row per record, ready for pandas or R.

#include <string>
#include <utility>
#include <vector>

#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

/// (probe, metric) pairs that have at least one value, in probe and metric order.
std::vector<std::pair<std::string, std::string>> grid_metrics(const RunData& data, const RunSummary& summary);

/// "model,ctk\ctv,<V types…>" then one row per model and K type; a cell without values is empty.
/// Numbers are the shortest text that reads back exactly.
std::string write_grid_csv(const RunData& data, const RunSummary& summary, const std::string& probe,
                           const std::string& metric);

/// One row per record in file order: run, cell, status, attempt, whether the row is the one that
/// counts, timings, the error, and one column per metric of any probe (empty where not measured).
std::string write_long_csv(const RunData& data);

}  // namespace kvsweep::report
