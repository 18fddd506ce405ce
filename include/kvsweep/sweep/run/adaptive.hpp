#pragma once
/// The adaptive stop of one cell and probe: its items in a seeded order, each ok item's quality
/// metrics paired with the reference's same item, and the rule that says when every gated metric is
/// settled and the rest of the items can be skipped: anytime-valid verdicts (stats/sequential) and,
/// for pass/fail metrics, the full run's own verdict once certain or futile (stats/curtailment).

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/probe/margin.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/stats/sequential.hpp"

namespace kvsweep::sweep {

/// A probe's items in the order an adaptive cell runs them: splitmix64 + Fisher–Yates over the
/// probe's own order, the same in every cell (so early stops compare like items) and every run.
std::vector<probe::Item> adaptive_order(std::vector<probe::Item> items, std::uint64_t seed);

/// Which sequential test a metric gets: betting on [−1, 1] for binary metrics (the fixed-n bound is
/// Newcombe's, nonparametric), the normal mixture for the rest (the fixed-n bound is the paired t).
stats::SequentialSpec sequential_spec(const probe::MetricSpec& metric, double alpha);

/// How one gated metric of a cell stands, and what settled it.
struct MetricState {
  stats::NonInferiority result;  // the verdict and the bounds behind it
  std::size_t decided_at = 0;    // the item count of the first decision; 0 when none
  /// "normal mixture" or "betting" (the anytime-valid test decided), "curtailment" (every outcome of the
  /// items left gives the full design this verdict), "futility" (unknown: the full design would decide
  /// with predictive probability below sweep.adaptive.futility, or with none); empty while open.
  std::string by;
  double p_decided = -1.0;  // binary: the predictive probability that the full design decides; −1 if not computed
  bool settled() const { return !by.empty(); }
};

/// The adaptive rule: decisions from min_items paired items on, each at alpha; futility below `futility`.
struct AdaptiveRule {
  double alpha = 0.05;
  std::size_t min_items = 5;
  double futility = 0.1;
};
AdaptiveRule adaptive_rule(const config::AdaptiveConfig& config);

/// One gated metric after the first n of a cell's paired items, for n = min_items, min_items + 1, …,
/// cell.size(): the first n at which it is decided, else its state at the last n. The cell's and the
/// reference's oriented values come pair by pair in the order the cell ran its items; `open_reference`
/// holds the reference's oriented values on the items the cell has not answered (they make the full
/// design's n). At each n, in this order:
///   1. the anytime-valid test on the n differences (sequential_noninferiority): a verdict decides;
///   2. binary: the full design's own verdict (paired_binary_outlook) when every outcome of the items left
///      gives the same one — a decision by curtailment when it is inferior or non-inferior;
///   3. binary, at the last n only: futility when every outcome gives "unknown" or the full design's
///      predictive probability of deciding is below rule.futility (not a decision: more items may yet
///      bring one, so it is judged on all of them).
/// The decisions of 1 and 2 are final, as the runner stops on them: later items cannot undo them. A
/// claim comes from the anytime-valid test (error ≤ alpha although checked after every item) or from the
/// full design's test (error that of the full run, verdict the full run's): at most 2·alpha in all.
/// `known_open`: the n below it are known not to decide (an earlier call saw them), so the scan starts
/// there — the runner calls this after every item, and a scan from min_items each time would cost
/// O(n²) Newcombe tables per item.
MetricState settle_metric(const probe::MetricSpec& metric, double margin, std::span<const double> cell,
                          std::span<const double> reference, std::span<const double> open_reference,
                          const AdaptiveRule& rule, std::size_t known_open = 0);

/// One gated metric of a cell: its margin, the reference's value on each item, and the cell's paired
/// values in the order they came.
struct GatedMetric {
  probe::MetricSpec spec;
  probe::Margin margin;
  std::map<std::string, double> reference;  // item → oriented reference value
  std::vector<double> cell;                 // oriented cell values, in the order the items finished
  std::vector<double> paired_reference;     // the reference's oriented value on each of them
  MetricState state;
  std::size_t checked = 0;  // settle_metric has seen the first `checked` pairs undecided
};

class AdaptiveGate {
 public:
  /// The gated metrics are the probe's quality metrics that the reference's ok records carry; `planned`
  /// is every item the cell runs for the probe (the full design).
  AdaptiveGate(const probe::Probe& probe, const std::vector<probe::Record>& reference_records,
               std::span<const probe::Item> planned, const config::AdaptiveConfig& config);

  /// An ok item of the cell (its record's "metrics"); items the reference has no value for are not paired.
  void add(const std::string& item, const nlohmann::json& metrics);
  /// Whether the cell may stop: at least min_items ok items, and every gated metric settled
  /// (settle_metric over the items in so far, the planned items not in yet open). Never with no gated metric.
  bool settled();
  /// What a `settled` record says: {"items": ok items seen, "min_items", "alpha", "futility", "seed",
  /// "metrics": {name: {"verdict", "margin", "by", "decided_at"?, "p_decided"?}}}.
  nlohmann::json describe() const;

 private:
  config::AdaptiveConfig m_config;
  std::vector<std::string> m_planned;
  std::set<std::string> m_answered;  // the cell's ok items: the planned items not among them are open
  std::vector<GatedMetric> m_metrics;
  std::size_t m_items = 0;
};

}  // namespace kvsweep::sweep
