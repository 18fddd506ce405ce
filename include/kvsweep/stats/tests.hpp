#pragma once
/// Hypothesis tests for comparing cells: McNemar, Wilcoxon signed-rank, Holm correction and Spearman's rho.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kvsweep/stats/precision.hpp"  // bits_per_value, the x of the precision-gradient test

namespace kvsweep::stats {

/// Two-sided McNemar p-value from the discordant pairs of a paired pass/fail table:
/// b = items only the reference passed, c = items only the cell passed (McNemar 1947).
/// b + c < 25: exact binomial test of b against Binomial(b + c, 1/2),
///   p = min(1, 2 * sum_{i <= min(b,c)} C(b+c, i) / 2^(b+c)); e.g. b = 1, c = 9 → 0.021484375.
/// b + c >= 25: chi-square with continuity correction (Edwards 1948),
///   X^2 = max(0, |b - c| - 1)^2 / (b + c), p = P(chi2_1 >= X^2). The max(0, ·) keeps b = c at
///   p = 1; statsmodels' mcnemar(exact=False) squares |b - c| - 1 = -1 there instead.
/// b = c = 0 (no discordant pair) → 1.
double mcnemar_p(std::uint64_t b, std::uint64_t c);

struct WilcoxonResult {
  std::size_t n = 0;      // pairs left after dropping zero differences
  double w_plus = 0.0;    // sum of ranks of positive differences x - y
  double w_minus = 0.0;   // sum of ranks of negative differences
  double p = 1.0;         // two-sided
  bool exact = false;     // true when p comes from the exact null distribution
};

/// Wilcoxon signed-rank test for paired samples x, y (Wilcoxon 1945), two-sided.
/// Differences d = x - y; zeros dropped (Wilcoxon's method, scipy's zero_method="wilcox");
/// |d| ranked with ties averaged. With n <= 25 and no ties, p = min(1, 2 P(W <= min(W+, W-)))
/// under the exact null distribution of W+ (every sign pattern of ranks 1..n equally likely,
/// 2^n patterns counted by dynamic programming). Otherwise the normal approximation without
/// continuity correction (scipy's default):
///   z = (W+ - n(n+1)/4) / sqrt(n(n+1)(2n+1)/24 - sum(t^3 - t)/48), t over tie groups.
/// scipy switches to the normal approximation whenever zeros were dropped; here the exact
/// distribution of the n non-zero differences is used.
/// Edge cases: x, y of different sizes or any NaN → p NaN; every difference zero (n = 0) → p = 1,
/// no evidence of a shift (scipy reports NaN).
WilcoxonResult wilcoxon_signed_rank(std::span<const double> x, std::span<const double> y);

/// Holm's step-down adjusted p-values (Holm 1979), in input order: with the m p-values sorted
/// ascending p_(1) <= ... <= p_(m), adj_(i) = min(1, max_{j <= i} (m - j + 1) p_(j)).
/// NaN entries stay NaN and are not counted in m.
std::vector<double> holm_adjust(std::span<const double> p_values);

struct SpearmanResult {
  std::size_t n = 0;
  double rho = 0.0;  // Pearson correlation of the average ranks (Spearman 1904), so ties are handled
  double p = 1.0;    // two-sided, t = rho sqrt((n - 2) / (1 - rho^2)) on n - 2 df (as scipy.stats.spearmanr)
};

/// Spearman's rank correlation of paired x, y. Edge cases: sizes differ or any NaN → rho and p
/// NaN; n < 2 or either side constant → rho NaN, p NaN (no ranks to correlate); n = 2 → rho = ±1,
/// p NaN (0 degrees of freedom); |rho| = 1 with n > 2 → p = 0.
SpearmanResult spearman(std::span<const double> x, std::span<const double> y);

}  // namespace kvsweep::stats
