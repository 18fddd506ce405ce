#pragma once
/// summary.json as one type: the run's context, its probes and cells, every cell × probe × metric
/// summary with its values by item, the tests against the reference, the grids, headlines, cost and
/// variant effects. make_summary() builds it from a run; to_json()
/// writes it and Summary::from_json() reads it back, both by the field lists of summary_fields.hpp, so
/// what is written reads back equal and writes the same bytes again. compare, the published comparison
/// and the published export take it, from a run directory or from a file alike.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/input/context.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::report {

/// A model of the run's context (context.models[]).
struct SummaryModel {
  std::string name;
  std::string path;
  std::string sha256;
};

/// A probe and its metric declarations. A summary written before declarations existed is read with
/// the older inference (`inferred`): every metric quality, direction from "higher_is_better", binary
/// from "binary".
struct SummaryProbe {
  std::string name;
  std::string kind;
  std::size_t items = 0;
  bool deterministic = false;
  bool declared = false;  // as written: the run declared its metrics
  bool inferred = false;  // `metrics` were inferred from an older summary without declarations
  std::string pass_metric;  // MetricRoles: "" when the probe has none
  std::string main_metric;
  std::vector<probe::MetricSpec> metrics;
  std::vector<std::string> binary;  // the metrics the tables count as 0/1 (MetricRoles::binary)

  /// The summary carries complete declarations for the probe's metrics.
  bool has_declarations() const { return declared && !inferred && !metrics.empty(); }
};

/// A cell of the run's grid. `variant` is "" when the run has no variants (the field is absent).
struct SummaryCell : core::CellKey {
  std::string id;
  bool is_reference = false;
  std::string outcome;
  std::string message;
  double kv_mib = 0.0;      // NaN when the manifest does not say (null)
  std::string path;         // the attention path and why; "" when the manifest does not say
  std::string path_reason;
  /// What the cell's server reported of itself; summary.json keeps `found`, `declared` and
  /// sweep::reported_settings() of it (compare explains a change by them).
  std::optional<sweep::CellEffective> effective;
  std::vector<DeviceBuffers> memory;  // per device, MiB at the cell's -c; empty when the manifest does not say
};

/// A cell tested against another: `reference` is the id of the reference cell (vs_reference) or of the
/// base variant's cell (vs_base).
struct SummaryTest {
  std::string reference;
  ReferenceTest test;
};

/// One metric of one (cell, probe): its statistics (n, mean, sd, min, max, median: NaN where the document
/// writes null), its 95% interval and test, and its values by item in item order.
struct SummaryMetric : stats::Summary {
  std::string name;
  double ci_lower = 0.0;
  double ci_upper = 0.0;
  std::optional<SummaryTest> vs_reference;  // absent for the reference itself or without pairs
  std::vector<std::pair<std::string, double>> values;

  /// The finite values by item: what compare and the published comparison pair and count.
  std::map<std::string, double> finite_values() const;
};

/// One (cell, probe) result; metrics in the probe's metric order.
struct SummaryResult : core::CellKey {
  std::string cell;
  std::string probe;
  std::string outcome;
  std::size_t items_ok = 0;
  std::size_t items_failed = 0;
  std::vector<std::string> failed_items;
  std::size_t items_settled = 0;  // items an adaptive run did not run, its verdicts settled (absent when 0)
  std::vector<SummaryMetric> metrics;

  const SummaryMetric* metric(std::string_view name) const;
};

/// A (model, variant, probe, metric) grid: its precision gradients and K / V marginal means.
struct SummaryGrid {
  std::string model;
  std::string variant;
  std::string probe;
  std::string metric;
  bool higher_is_better = true;
  stats::GradientResult gradient;
  stats::GradientResult k_gradient;
  stats::GradientResult v_gradient;
  std::vector<AxisMean> rows;     // K types (n, mean and ci of each)
  std::vector<AxisMean> columns;  // V types
  double k_spread = 0.0;
  double v_spread = 0.0;
};

/// Seed 001's summary row of a (model, variant, probe).
struct SummaryHeadline {
  std::string model;
  std::string variant;
  std::string probe;
  std::size_t combos = 0;
  std::size_t k = 0;
  std::string pass_metric;
  stats::Summary pass_count;  // mean and sd
  std::string main_metric;
  stats::Summary main;        // mean, sd, min and max
  stats::Gradient gradient = stats::Gradient::no;
};

/// What a variant changes against the base variant in one (model, K, V, probe, metric).
struct SummaryVariantEffect {
  std::string model;
  std::string base;
  std::string variant;
  std::string type_k;
  std::string type_v;
  std::string probe;
  std::string metric;
  double base_mean = 0.0;
  double variant_mean = 0.0;
  SummaryTest vs_base;
};

struct Summary {
  int schema_version = kReportSchemaVersion;
  nlohmann::json context;  // context_block(); null when a document has none
  SummaryOptions options;  // "statistics": how the numbers below were computed
  std::vector<SummaryProbe> probes;
  std::vector<SummaryCell> cells;
  std::vector<SummaryResult> results;
  std::vector<SummaryGrid> grids;
  std::vector<SummaryHeadline> headlines;
  nlohmann::ordered_json cost;  // cost_json(); null when a document has none
  std::vector<SummaryVariantEffect> variant_effects;  // only in a run with variants

  // What compare and the published comparison read of the context (set_context()): "" or empty when
  // the context does not say.
  std::string run_name;
  std::string config_hash;
  std::string server_version;
  std::string server_build_commit;
  std::vector<SummaryModel> models;

  /// Sets `context` and the fields read from it; throws core::FatalError naming the key when one has
  /// another type.
  void set_context(nlohmann::json block);
  const SummaryModel* model(std::string_view name) const;
  const SummaryProbe* probe(std::string_view name) const;

  /// Reads a summary.json. Fails with ErrorKind::parse and "<which>: <key path>: what is wrong" when it is
  /// not an object of kind "kvsweep-summary" with a "results" array, its schema_version is not one this
  /// kvsweep reads, or a field has the wrong type. Fields older summaries lack read as empty.
  static core::Expected<Summary> from_json(const nlohmann::ordered_json& doc, std::string_view which);
};

/// summary.json's document (keys in writing order; NaN written as null).
nlohmann::ordered_json to_json(const Summary& summary);

/// A run's Summary, as its summary.json holds it: what compare and the published comparison read of a run
/// directory, and what `kvsweep report` writes.
Summary make_summary(const RunData& data, const RunSummary& summary, const Generator& generator);

}  // namespace kvsweep::report
