#pragma once
/// The adaptive stop of one cell and probe: its items in a seeded order, each ok item's quality
/// metrics paired with the reference's same item, and the anytime-valid verdicts (stats/sequential)
/// that say when every gated metric is settled and the rest of the items can be skipped.

#include <cstddef>
#include <cstdint>
#include <map>
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

/// One gated metric of a cell: its margin, its oriented differences in the order they came, and how
/// it stands.
struct GatedMetric {
  probe::MetricSpec spec;
  probe::Margin margin;
  std::map<std::string, double> reference;  // item → oriented reference value
  std::vector<double> differences;          // oriented cell − reference, in the order items finished
  stats::SequentialDecision decision;
  bool futile = false;  // binary: no outcome of the items left could decide it
  bool settled() const { return decision.decided_at > 0 || futile; }
};

class AdaptiveGate {
 public:
  /// The gated metrics are the probe's quality metrics that the reference's ok records carry.
  AdaptiveGate(const probe::Probe& probe, const std::vector<nlohmann::json>& reference_records,
               const config::AdaptiveConfig& config);

  /// An ok item of the cell (its record's "metrics"); items the reference has no value for are not paired.
  void add(const std::string& item, const nlohmann::json& metrics);
  /// Whether the cell may stop, with `remaining` still to run: at least min_items ok items, and every
  /// gated metric decided or beyond deciding within `remaining`. Never with no gated metric.
  bool settled(std::span<const probe::Item> remaining);
  /// What a `settled` record says: {"items": ok items seen, "min_items", "alpha", "seed",
  /// "metrics": {name: {"verdict", "decided_at" | "futile": true, "margin"}}}.
  nlohmann::json describe() const;

 private:
  config::AdaptiveConfig m_config;
  std::vector<GatedMetric> m_metrics;
  std::size_t m_items = 0;
};

}  // namespace kvsweep::sweep
