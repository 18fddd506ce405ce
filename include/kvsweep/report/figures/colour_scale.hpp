#pragma once
/// How a heatmap maps a cell's mean to a colour without overstating: on the metric's declared range
/// (0–1 for a rate, a probe's calibration range such as recall's 0–lines), else on a Δ scale symmetric
/// around the reference whose half-width is at least the metric's margin; a diagnostic metric (no
/// better side) gets a neutral grey ramp, never better/worse colours.

#include <optional>
#include <span>
#include <string>
#include <utility>

#include "kvsweep/probe/metric_spec.hpp"

namespace kvsweep::report {

struct ColourScale {
  enum class Basis { range, delta, neutral };
  Basis basis = Basis::range;
  double lo = 0.0;      // range/neutral: the value at the scale's low end; delta: −half-width
  double hi = 1.0;      // range/neutral: the value at the high end; delta: +half-width
  double centre = 0.0;  // delta: the reference's mean (Δ = 0 sits mid-scale)
  bool higher_is_better = true;

  /// Position on the colour map in [0, 1]: 1 is the better end (neutral: the higher value); values
  /// beyond the scale are clamped.
  double t(double value) const;
  /// The fill at position t of the map: viridis(t) (better/worse), or a grey ramp (neutral).
  std::string colour_at(double t) const;
  /// colour_at(t(value)).
  std::string colour(double value) const { return colour_at(t(value)); }
  /// Text colour that reads on colour(value).
  std::string ink(double value) const;
  /// The legend's labels for the two ends, top (better, or higher) first: values for a range, "Δ +h" for delta.
  std::pair<std::string, std::string> end_labels(int decimals) const;
  /// One line for the legend: what the scale is anchored to.
  std::string caption() const;
};

/// The scale for one heatmap. `declared`: the metric's declared range (binary: 0–1; a probe's calibration
/// range when it is this metric), else nullopt. `reference`: the reference cell's mean, when it has one.
/// `means`: every cell's mean. `min_half_width`: the smallest Δ half-width (the metric's margin), so that
/// differences inside the margin never span the whole map. A metric that is not quality (diagnostic,
/// or no better side) is neutral, over the declared range or the means' min–max.
ColourScale heatmap_scale(const probe::MetricSpec& metric, std::optional<std::pair<double, double>> declared,
                          std::optional<double> reference, std::span<const double> means, double min_half_width);

}  // namespace kvsweep::report
