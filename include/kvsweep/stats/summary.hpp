#pragma once
/// Descriptive summaries of a sample and its seeded percentile-bootstrap confidence interval.

#include <cstddef>
#include <cstdint>
#include <span>

namespace kvsweep::stats {

/// n, mean, sample sd, min, max and median of a sample. With n = 0 every number is NaN; with
/// n = 1 the sd is NaN (the sample standard deviation, divisor n - 1, is undefined for one value).
struct Summary {
  std::size_t n = 0;
  double mean = 0.0;
  double sd = 0.0;
  double min = 0.0;
  double max = 0.0;
  double median = 0.0;
};

Summary summarize(std::span<const double> values);

/// Arithmetic mean; NaN for an empty sample.
double mean(std::span<const double> values);

/// Middle value, or the mean of the two middle values for even n; NaN for an empty sample.
double median(std::span<const double> values);

/// Quantile of an ASCENDING sorted sample by linear interpolation between order statistics,
/// h = (n - 1) q (Hyndman & Fan 1996, definition 7; numpy's and R's default). NaN if empty.
double quantile_sorted(std::span<const double> sorted, double q);

/// The statistic a bootstrap resamples.
enum class Statistic { mean, median };

struct BootstrapOptions {
  Statistic statistic = Statistic::mean;
  std::size_t iterations = 2000;
  double confidence = 0.95;  // in (0, 1)
  std::uint64_t seed = 0;
};

struct ConfidenceInterval {
  double lower = 0.0;
  double upper = 0.0;
};

/// Percentile bootstrap interval (Efron & Tibshirani, "An Introduction to the Bootstrap", 1993,
/// ch. 13): `iterations` resamples of n values drawn with replacement by SplitMix64(seed), the
/// statistic of each, and the (1 - confidence)/2 and (1 + confidence)/2 quantiles of those
/// (quantile_sorted). The same seed gives the same interval on every platform.
/// Edge cases: empty sample, zero iterations or confidence outside (0, 1) → both bounds NaN;
/// n = 1 → both bounds equal the value (every resample is that value).
ConfidenceInterval bootstrap_ci(std::span<const double> values, const BootstrapOptions& options = {});

/// The same percentile bootstrap for a ratio of sums, Σ numerator ÷ Σ denominator, resampling the
/// pairs (numerator[i], denominator[i]) together (`statistic` is ignored). NaN bounds when the spans
/// are empty or of different sizes; a resample whose denominators sum to 0 is skipped.
ConfidenceInterval bootstrap_ratio_ci(std::span<const double> numerator, std::span<const double> denominator,
                                      const BootstrapOptions& options = {});

}  // namespace kvsweep::stats
