#pragma once
/// The decision a sweep is for: per model, each cell's non-inferiority verdict against the reference
/// on every quality metric, the Pareto frontier of KV bytes per token against quality, the cheapest
/// cell that is non-inferior everywhere, and whether K or V is the more sensitive half of the cache.

#include <cstddef>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/probe/margin.hpp"
#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/report/analysis/cost.hpp"
#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/stats/noninferiority.hpp"

namespace kvsweep::report {

struct RecommendOptions {
  /// Margins the user set: "probe.metric" or "metric" → margin in the metric's units (oriented:
  /// how much worse than the reference the cell may be).
  std::map<std::string, double> margins;
  /// --gate: the metrics that decide verdicts ("probe.metric" or "metric"); empty: each probe's config
  /// "gate", else every quality metric.
  std::set<std::string> gate;
  double alpha = 0.05;           // each bound is one-sided 1 − alpha
  std::optional<int> context;    // memory is shown at this context (default: the run's n_ctx)
  /// --vram GiB: only a cell whose model + KV (at `context`) + compute buffers fit is recommended, on
  /// every GPU device it used (or, in a run without GPU buffers, all its buffers together).
  std::optional<double> vram_gib;
  /// --max-slowdown R: a cell is recommended only when its pp and its tg are each at least R × the
  /// reference's (0.9: at most 10% slower), as CellCost::pp_x_worst / tg_x_worst; unknown speed fails.
  std::optional<double> max_slowdown;
  SummaryOptions summary;        // bootstrap settings for the speeds
};

/// Whether `metric` decides verdicts: --gate when given (PROBE.METRIC or METRIC), else the probe's
/// config "gate", else its role (MetricSpec::gated_by_default: quality, and distance with a threshold;
/// a change metric only when named). The report draws heat maps for these (figures: Heatmaps::gated).
bool gates(const ProbeDef& probe, const probe::MetricSpec& metric, const RecommendOptions& options = {});

/// The margin a metric gets unless the user sets one: probe::default_margin with the calibration the
/// run's manifest declared for the probe.
using Margin = probe::Margin;
Margin default_margin(const ProbeDef& probe, const probe::MetricSpec& metric, const Values& reference);

/// One cell's verdict on one metric against its reference, on the items both answered.
struct MetricVerdict {
  std::string probe;
  std::string metric;
  probe::MetricKind kind = probe::MetricKind::continuous;
  bool higher_is_better = true;
  Margin margin;
  std::string bound;  // "Newcombe hybrid score (paired)" or "paired t"; the anytime-valid test for adaptive cells
  stats::NonInferiority result;
  /// The most items the probe could give (ProbeDef::items_max): advice for more stops there.
  std::optional<std::size_t> items_max;
  /// Adaptive sweeps: the cell stopped before its last item (items recorded skipped/settled), so the
  /// verdict is the sequential test's (stats/sequential), on its items in the order they ran.
  struct Adaptive {
    std::size_t items_run = 0;      // the cell's ok items
    std::size_t items_planned = 0;  // ok + settled + failed
    std::size_t decided_at = 0;     // the paired item at which the verdict was reached; 0: never (unknown)
    std::string by;                 // sweep::MetricState::by: what settled it
    double p_decided = -1.0;        // binary: the full run's predictive probability of a verdict; −1: not computed
  };
  std::optional<Adaptive> adaptive;
};

/// The reusable verdict: pairs `cell` with `reference` by item, orients both so that higher is better
/// and applies noninferiority_paired_binary (binary metrics) or noninferiority_mean (the rest).
/// Adaptive sweeps call this after every item.
MetricVerdict metric_verdict(const probe::MetricSpec& metric, const Values& cell, const Values& reference,
                             const Margin& margin, double alpha = 0.05);

/// What one judged metric (quality, distance, change) of a cell shows against its reference on the items
/// both answered, for the headline to word by role (explain): how many 0/1 items moved each way, the means,
/// and the margin and verdict where it gates. Values only.
struct Evidence {
  std::string probe;
  std::string metric;
  probe::MetricRole role = probe::MetricRole::quality;
  probe::MetricKind kind = probe::MetricKind::continuous;
  bool higher_is_better = true;
  std::size_t n = 0;       // paired items
  std::size_t worse = 0;   // 0/1 metrics: pairs where the reference is on the good side and the cell is not
  std::size_t better = 0;  // 0/1 metrics: the other way round
  double cell_mean = 0.0;       // over the pairs
  double reference_mean = 0.0;  // over the pairs
  double change = 0.0;          // oriented mean change, cell − reference (+ is better)
  /// Gated: its margin and verdict. A distance that declares a threshold and does not gate keeps the
  /// threshold as `margin` (no verdict).
  std::optional<double> margin;
  std::optional<stats::Decision> verdict;
};

struct CellVerdict {
  std::size_t cell = 0;
  std::vector<MetricVerdict> metrics;       // every quality metric of every probe with reference data
  /// Every judged metric (gated or not) of every probe both answered, in probe and declaration order.
  std::vector<Evidence> evidence;
  std::vector<std::string> missing_probes;  // probes the reference answered and this cell did not
  std::size_t non_inferior = 0, inferior = 0, unknown = 0;
  bool eligible = false;  // non-inferior on every gated metric, no probe missing, and fast enough
  /// Why --max-slowdown dropped the cell ("tg 0.82× < 0.90×"); empty when it did not.
  std::string too_slow;
  /// min over metrics of lower bound ÷ margin: above −1 means non-inferior everywhere; the quality axis
  /// of the frontier, over the metrics with a bound. NaN when none has one or a probe is missing.
  double score = 0.0;
  double kv_bytes_per_token = 0.0;
};

/// K against V for one probe: the lowest-precision type t with both t/ref_v and ref_k/t cells, compared
/// on the probe's first quality metric (paired test on the items both answered). Values only:
/// explain() words them.
struct AxisSensitivity {
  enum class Finding { no_quality_metric, no_axis_pair, k_more_sensitive, v_more_sensitive, not_told_apart };
  std::string probe;
  std::string metric;
  Finding finding = Finding::no_quality_metric;
  std::string type;           // t (a finding from k_more_sensitive on)
  std::string ref_k, ref_v;   // the reference's types
  double dk = 0.0, dv = 0.0;  // oriented mean change of t/ref_v and of ref_k/t against the reference (+ is better)
  std::string test;           // t/ref_v against ref_k/t: "mcnemar" or "wilcoxon"
  std::size_t n_pairs = 0;
  double p = 1.0;
  double alpha = 0.05;
  /// not_told_apart, when no test on n_pairs pairs can reach alpha: the pairs (McNemar: discordant) it takes.
  std::optional<std::size_t> pairs_needed;
};

/// The K-versus-V finding in one English sentence (recommend's Markdown and JSON).
std::string explain(const AxisSensitivity& finding);

struct ModelRecommendation {
  std::string model;
  std::optional<std::size_t> reference;  // index into RunData::cells()
  /// The reference has no ok record: nothing was measured, no cell is compared with it (cells, frontier
  /// and k_vs_v stay empty) and nothing is advised.
  bool nothing_measured = false;
  std::vector<CellVerdict> cells;        // non-reference cells that started, in grid order
  /// indices into RunData::cells(), by KV bytes per token (reference included; a cell with an inferior
  /// verdict never)
  std::vector<std::size_t> frontier;
  std::optional<std::size_t> recommended;
  /// Eligible cells --vram left out, in grid order, with what they need ("CUDA0 30.4 MiB (…)" or
  /// "memory not recorded").
  std::vector<std::pair<std::size_t, std::string>> over_vram;
  std::vector<AxisSensitivity> k_vs_v;
};

struct Recommendation {
  double alpha = 0.05;
  std::set<std::string> gate;  // --gate, as given (empty: each probe's config "gate", else every quality metric)
  std::optional<double> vram_gib;
  std::optional<double> max_slowdown;
  CostTable costs;
  std::vector<ModelRecommendation> models;
};

Recommendation recommend(const RunData& data, const RecommendOptions& options = {});

/// Indices of the points on the Pareto frontier of (cost, quality), lower cost and higher quality
/// better: a point is on it when no other has cost <= and quality >= with one strict. Points with a
/// NaN coordinate are never on it; equal points are both on it. Sorted by cost, then index.
std::vector<std::size_t> pareto_frontier(const std::vector<double>& cost, const std::vector<double>& quality);

/// What recommend prints: the method, then per model the answer (the recommended pair with its cost, or
/// the verdict and why), the cells' verdict counts, adaptive and non-non-inferior verdicts, K versus V.
Document recommend_document(const RunData& data, const Recommendation& rec);
std::string recommend_markdown(const RunData& data, const Recommendation& rec);
nlohmann::ordered_json recommend_json(const RunData& data, const Recommendation& rec);

}  // namespace kvsweep::report
