#pragma once
/// summary.json read back, typed: the parts compare and the published comparison use, checked once
/// with errors "<which>: results[3].metrics.passed.mean: expected a number, got string \"x\"".

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/metric_spec.hpp"

namespace kvsweep::report {

/// A model of the run's context.
struct SummaryModel {
  std::string name;
  std::string path;
  std::string sha256;
};

/// A probe and its metric declarations. A summary written before declarations existed gets the
/// older inference: every metric quality, direction from "higher_is_better", binary from "binary".
struct SummaryProbe {
  std::string name;
  std::string kind;
  std::size_t items = 0;
  bool deterministic = false;
  bool declared = false;  // the summary carries complete declarations for its metrics
  std::vector<probe::MetricSpec> metrics;
};

/// A cell of the run's grid. `variant` is "" when the run has no variants (the field is absent).
struct SummaryCell : core::CellKey {
  std::string id;
  std::string outcome;
};

/// One metric of one (cell, probe): its summary and its finite values by item key. NaN where the
/// document writes null.
struct SummaryMetric {
  std::string name;
  std::size_t n = 0;
  double mean = 0.0;
  double ci_lower = 0.0;
  double ci_upper = 0.0;
  std::map<std::string, double> values;
};

/// One (cell, probe) result; metrics in document order (sorted by name).
struct SummaryResult : core::CellKey {
  std::string cell;
  std::string probe;
  std::string outcome;
  std::size_t items_failed = 0;
  std::size_t items_settled = 0;  // items an adaptive run did not run, its verdicts settled (0 when absent)
  std::vector<SummaryMetric> metrics;

  const SummaryMetric* metric(std::string_view name) const;
};

/// A (model, variant, probe, metric) grid and its precision-gradient verdict.
struct SummaryGrid {
  std::string model;
  std::string variant;
  std::string probe;
  std::string metric;
  std::string gradient;  // the verdict, "" when the document has none
};

/// A (model, variant, probe) headline row.
struct SummaryHeadline {
  std::string model;
  std::string variant;
  std::string probe;
  std::string pass_metric;
  std::string main_metric;
  std::string gradient;
};

struct SummaryDocument {
  int schema_version = 0;
  std::string run_name;
  std::string config_hash;  // the run's config hash ("" in a document without one)
  std::string server_version;
  std::string server_build_commit;
  std::vector<SummaryModel> models;
  std::vector<SummaryProbe> probes;
  std::vector<SummaryCell> cells;
  std::vector<SummaryResult> results;
  std::vector<SummaryGrid> grids;
  std::vector<SummaryHeadline> headlines;

  const SummaryModel* model(std::string_view name) const;
  const SummaryProbe* probe(std::string_view name) const;
};


/// Reads a summary document (summary_document(), or a summary.json). Fails with ErrorKind::parse
/// and "<which>: <key path>: what is wrong" when it is not an object of kind "kvsweep-summary" with
/// a "results" array, its schema_version is not one this kvsweep reads, or a field it reads has the
/// wrong type. Fields it does not need are not checked; fields older summaries lack read as empty.
core::Expected<SummaryDocument> read_summary_document(const nlohmann::json& doc, std::string_view which);

}  // namespace kvsweep::report
