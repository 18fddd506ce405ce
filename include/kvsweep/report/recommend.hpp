#pragma once
/// The decision a sweep is for: per model, each cell's non-inferiority verdict against the reference
/// on every quality metric, the Pareto frontier of KV bytes per token against quality, the cheapest
/// cell that is non-inferior everywhere, and whether K or V is the more sensitive half of the cache.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/report/cost.hpp"
#include "kvsweep/report/run_data.hpp"
#include "kvsweep/stats/noninferiority.hpp"

namespace kvsweep::report {

struct RecommendOptions {
  /// Margins the user set: "probe.metric" or "metric" → margin in the metric's units (oriented:
  /// how much worse than the reference the cell may be).
  std::map<std::string, double> margins;
  double alpha = 0.05;           // each bound is one-sided 1 − alpha
  std::optional<int> context;    // memory is shown at this context (default: the run's n_ctx)
  SummaryOptions summary;        // bootstrap settings for the speeds
};

/// The default margin of a metric and the words that explain it:
///   binary → 0.05 (5 points of a pass rate);
///   count → 5% of its range: the probe's declared calibration range when it is this metric (recall's
///     primary_matched: 0..lines, so 1 line of 20), else the largest value the reference cell reached
///     (at least 1);
///   continuous → 0.02 (similarities and rates in [0, 1], divergences in nats).
struct Margin {
  double value = 0.0;
  std::string basis;  // "default: 5 points (binary)", "--margin", …
};
Margin default_margin(const ProbeDef& probe, const probe::MetricSpec& metric, const Values& reference);

/// One cell's verdict on one metric against its reference, on the items both answered.
struct MetricVerdict {
  std::string probe;
  std::string metric;
  probe::MetricKind kind = probe::MetricKind::continuous;
  bool higher_is_better = true;
  Margin margin;
  std::string bound;  // "Newcombe hybrid score (paired)" or "paired t"
  stats::NonInferiority result;
};

/// The reusable verdict: pairs `cell` with `reference` by item, orients both so that higher is better
/// and applies noninferiority_paired_binary (binary metrics) or noninferiority_mean (the rest).
/// Adaptive sweeps call this after every item.
MetricVerdict metric_verdict(const probe::MetricSpec& metric, const Values& cell, const Values& reference,
                             const Margin& margin, double alpha = 0.05);

struct CellVerdict {
  std::size_t cell = 0;
  std::vector<MetricVerdict> metrics;       // every quality metric of every probe with reference data
  std::vector<std::string> missing_probes;  // probes the reference answered and this cell did not
  std::size_t non_inferior = 0, inferior = 0, unknown = 0;
  bool eligible = false;  // non-inferior on every gated metric and no probe missing
  /// min over metrics of lower bound ÷ margin: above −1 means non-inferior everywhere; the quality axis
  /// of the frontier, over the metrics with a bound. NaN when none has one or a probe is missing.
  double score = 0.0;
  double kv_bytes_per_token = 0.0;
};

/// K against V for one probe: the lowest-precision type t with both t/ref_v and ref_k/t cells, compared
/// on the probe's first quality metric (paired test on the items both answered).
struct AxisSensitivity {
  std::string probe;
  std::string metric;
  std::string sentence;
};

struct ModelRecommendation {
  std::string model;
  std::optional<std::size_t> reference;  // index into RunData::cells()
  std::vector<CellVerdict> cells;        // non-reference cells that started, in grid order
  std::vector<std::size_t> frontier;     // indices into RunData::cells(), by KV bytes per token (reference included)
  std::optional<std::size_t> recommended;
  std::vector<AxisSensitivity> k_vs_v;
};

struct Recommendation {
  double alpha = 0.05;
  CostTable costs;
  std::vector<ModelRecommendation> models;
};

Recommendation recommend(const RunData& data, const RecommendOptions& options = {});

/// Indices of the points on the Pareto frontier of (cost, quality), lower cost and higher quality
/// better: a point is on it when no other has cost <= and quality >= with one strict. Points with a
/// NaN coordinate are never on it; equal points are both on it. Sorted by cost, then index.
std::vector<std::size_t> pareto_frontier(const std::vector<double>& cost, const std::vector<double>& quality);

std::string recommend_markdown(const RunData& data, const Recommendation& rec);
nlohmann::ordered_json recommend_json(const RunData& data, const Recommendation& rec);

}  // namespace kvsweep::report
