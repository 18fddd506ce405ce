#pragma once
/// How much worse than the reference a cell may be on a quality metric before it is inferior (the
/// non-inferiority margin), and the orientation that makes higher better: one rule for the runner's
/// adaptive stop and the report's recommendation.

#include <optional>
#include <span>
#include <string>

#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

struct Margin {
  double value = 0.0;
  std::string basis;  // "default: 5 points (binary)", "--margin", …
};

/// The default margin of a metric and the words that explain it:
///   binary → 0.05 (5 points of a pass rate);
///   count → 5% of its range: the probe's declared calibration range when it is this metric (recall's
///     primary_matched: 0..lines, so 1 line of 20), else the largest value the reference cell reached
///     (at least 1);
///   continuous → 0.02 (similarities and rates in [0, 1], divergences in nats).
Margin default_margin(const MetricSpec& metric, const std::optional<Probe::Calibration>& calibration,
                      std::span<const double> reference);

/// The value turned so that higher is better: 1 − v for a lower-is-better binary metric, −v for the
/// other lower-is-better ones.
double orient(double value, const MetricSpec& metric);

}  // namespace kvsweep::probe
