#include "kvsweep/probe/margin.hpp"

#include <algorithm>
#include <cmath>
#include <charconv>

namespace kvsweep::probe {

namespace {

/// The shortest decimal that reads back as `v` (the range ends are finite).
std::string shortest(double v) {
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

}  // namespace

Margin default_margin(const MetricSpec& metric, const std::optional<Probe::Calibration>& calibration,
                      std::span<const double> reference) {
  if (metric.threshold)
    return {*metric.threshold, "default: its distance threshold " + shortest(*metric.threshold) +
                                   (metric.threshold_why.empty() ? std::string() : " (" + metric.threshold_why + ")")};
  switch (metric.kind) {
    case MetricKind::binary: return {0.05, "default: 5 points of a rate (binary)"};
    case MetricKind::count: {
      if (calibration && calibration->metric == metric.name && calibration->hi > calibration->lo) {
        const double range = calibration->hi - calibration->lo;
        return {range / 20.0, "default: 5% of its range " + shortest(calibration->lo) + "–" +
                                  shortest(calibration->hi) + " (count)"};
      }
      double top = 1.0;
      for (double v : reference) top = std::max(top, std::abs(v));
      return {top / 20.0, "default: 5% of the reference's largest value " + shortest(top) + " (count)"};
    }
    case MetricKind::continuous: break;
  }
  return {0.02, "default: 0.02 (continuous)"};
}

double orient(double value, const MetricSpec& metric) {
  if (metric.higher_is_better()) return value;
  return metric.is_binary() ? 1.0 - value : -value;
}

}  // namespace kvsweep::probe
