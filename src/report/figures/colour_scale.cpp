#include "kvsweep/report/figures/colour_scale.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kvsweep/report/format.hpp"
#include "kvsweep/report/figures/svg.hpp"

namespace kvsweep::report {

double ColourScale::t(double value) const {
  double x = 0.5;
  if (basis == Basis::delta) {
    x = hi > 0 ? 0.5 + 0.5 * (value - centre) / hi : 0.5;
  } else if (hi > lo) {
    x = (value - lo) / (hi - lo);
  }
  x = std::clamp(x, 0.0, 1.0);
  return basis != Basis::neutral && !higher_is_better ? 1.0 - x : x;
}

std::string ColourScale::colour_at(double x) const {
  if (basis != Basis::neutral) return viridis(x);
  // Light to mid grey: darker is higher, nothing says better.
  const int level = static_cast<int>(std::lround(240 - 100 * x));
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", level, level, level);
  return buf;
}

std::string ColourScale::ink(double value) const {
  return basis == Basis::neutral ? "#111111" : ink_on_viridis(t(value));
}

std::pair<std::string, std::string> ColourScale::end_labels(int decimals) const {
  if (basis == Basis::delta) return {"Δ " + signed_fixed(higher_is_better ? hi : -hi, decimals),
                                     "Δ " + signed_fixed(higher_is_better ? -hi : hi, decimals)};
  if (basis == Basis::neutral || higher_is_better) return {fixed(hi, decimals), fixed(lo, decimals)};
  return {fixed(lo, decimals), fixed(hi, decimals)};
}

std::string ColourScale::caption() const {
  switch (basis) {
    case Basis::range: return "colour: the metric's range";
    case Basis::delta: return "colour: Δ to the reference, symmetric";
    case Basis::neutral: return "diagnostic: shade is the value, not better or worse";
  }
  return "";
}

ColourScale heatmap_scale(const probe::MetricSpec& metric, std::optional<std::pair<double, double>> declared,
                          std::optional<double> reference, std::span<const double> means, double min_half_width) {
  ColourScale s;
  s.higher_is_better = metric.higher_is_better();
  double lo = 0.0, hi = 0.0;
  if (!means.empty()) {
    lo = *std::min_element(means.begin(), means.end());
    hi = *std::max_element(means.begin(), means.end());
  }
  if (!metric.is_judged()) {
    s.basis = ColourScale::Basis::neutral;
    s.lo = declared ? declared->first : lo;
    s.hi = declared ? declared->second : hi;
    return s;
  }
  if (declared && declared->second > declared->first) {
    s.basis = ColourScale::Basis::range;
    s.lo = declared->first;
    s.hi = declared->second;
    return s;
  }
  s.basis = ColourScale::Basis::delta;
  s.centre = reference ? *reference : (lo + hi) / 2;
  double half = std::max(std::fabs(hi - s.centre), std::fabs(lo - s.centre));
  half = std::max(half, min_half_width);
  s.hi = half;
  s.lo = -half;
  return s;
}

}  // namespace kvsweep::report
