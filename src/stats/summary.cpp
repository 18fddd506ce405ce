#include "kvsweep/stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double statistic_of(std::span<const double> sample, Statistic statistic) {
  if (statistic == Statistic::mean) return mean(sample);
  return median(sample);
}

}  // namespace

double mean(std::span<const double> values) {
  if (values.empty()) return kNaN;
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double median(std::span<const double> values) {
  if (values.empty()) return kNaN;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t mid = sorted.size() / 2;
  return sorted.size() % 2 == 1 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
}

double quantile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty() || !(q >= 0.0 && q <= 1.0)) return kNaN;
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

Summary summarize(std::span<const double> values) {
  Summary s;
  s.n = values.size();
  if (values.empty()) {
    s.mean = s.sd = s.min = s.max = s.median = kNaN;
    return s;
  }
  s.mean = mean(values);
  // Two-pass sum of squared deviations: numerically safer than sum(x^2) - n mean^2.
  if (values.size() < 2) {
    s.sd = kNaN;  // undefined for n = 1: the n - 1 divisor is zero
  } else {
    double ss = 0.0;
    for (double v : values) ss += (v - s.mean) * (v - s.mean);
    s.sd = std::sqrt(ss / static_cast<double>(values.size() - 1));
  }
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  s.median = median(values);
  return s;
}

namespace {

/// The (1 - confidence)/2 and (1 + confidence)/2 quantiles of the resampled statistics.
ConfidenceInterval percentile_interval(std::vector<double>& stats, double confidence) {
  std::sort(stats.begin(), stats.end());
  const double alpha = 1.0 - confidence;
  return {quantile_sorted(stats, alpha / 2.0), quantile_sorted(stats, 1.0 - alpha / 2.0)};
}

}  // namespace

ConfidenceInterval bootstrap_ci(std::span<const double> values, const BootstrapOptions& options) {
  if (values.empty() || options.iterations == 0 || !(options.confidence > 0.0 && options.confidence < 1.0)) {
    return {kNaN, kNaN};
  }
  SplitMix64 rng(options.seed);
  const std::size_t n = values.size();
  std::vector<double> resample(n);
  std::vector<double> stats;
  stats.reserve(options.iterations);
  for (std::size_t it = 0; it < options.iterations; ++it) {
    for (std::size_t k = 0; k < n; ++k) resample[k] = values[rng.below(n)];
    stats.push_back(statistic_of(resample, options.statistic));
  }
  return percentile_interval(stats, options.confidence);
}

ConfidenceInterval bootstrap_ratio_ci(std::span<const double> numerator, std::span<const double> denominator,
                                      const BootstrapOptions& options) {
  const std::size_t n = numerator.size();
  if (n == 0 || denominator.size() != n || options.iterations == 0 ||
      !(options.confidence > 0.0 && options.confidence < 1.0)) {
    return {kNaN, kNaN};
  }
  SplitMix64 rng(options.seed);
  std::vector<double> stats;
  stats.reserve(options.iterations);
  for (std::size_t it = 0; it < options.iterations; ++it) {
    double num = 0.0, den = 0.0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = rng.below(n);
      num += numerator[i];
      den += denominator[i];
    }
    if (den != 0.0) stats.push_back(num / den);
  }
  if (stats.empty()) return {kNaN, kNaN};
  return percentile_interval(stats, options.confidence);
}

}  // namespace kvsweep::stats
