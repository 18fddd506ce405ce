#pragma once
/// The precision-gradient test: does a metric follow the storage bits of the KV cache across the cells of a grid?

#include <cstddef>
#include <span>
#include <string_view>

#include "kvsweep/stats/tests.hpp"

namespace kvsweep::stats {

/// "gradient?" of the published tables: yes (the metric improves with bits), no, or reversed
/// (it significantly gets worse with more bits — anti-physical, the signature of something else).
enum class Gradient { yes, no, reversed };

std::string_view to_string(Gradient gradient);

struct GradientResult {
  std::size_t n = 0;   // cells correlated
  double rho = 0.0;    // Spearman's rho of bits vs metric (NaN when either side is constant)
  double p = 1.0;      // two-sided (spearman)
  Gradient verdict = Gradient::no;
};

/// Spearman's rho between `bits` (e.g. bits_per_value(K) + bits_per_value(V) per cell) and the
/// cell's `metric`. The verdict is `yes` when p < alpha and the sign says more bits is better
/// (rho > 0 for a higher-is-better metric, rho < 0 otherwise), `reversed` when p < alpha the
/// other way, `no` otherwise — including a flat grid (constant metric: rho and p NaN) and n <= 2
/// (p NaN). Sizes that differ → n 0, NaNs, `no`.
GradientResult precision_gradient(std::span<const double> bits, std::span<const double> metric, bool higher_is_better,
                                  double alpha = 0.05);

}  // namespace kvsweep::stats
