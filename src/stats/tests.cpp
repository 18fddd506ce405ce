#include "kvsweep/stats/tests.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kvsweep/stats/distributions.hpp"
#include "kvsweep/stats/ranks.hpp"

namespace kvsweep::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool any_nan(std::span<const double> v) {
  return std::any_of(v.begin(), v.end(), [](double d) { return std::isnan(d); });
}

// Two-sided exact p of the signed-rank statistic for n untied ranks 1..n: the number of the 2^n
// sign patterns whose positive-rank sum is <= t, doubled. count[s] = patterns with W+ = s, built by
// adding one rank at a time (each rank either joins W+ or not). n <= 25 keeps 2^n exact in double
// and count[] in 64 bits.
double wilcoxon_exact_p(std::size_t n, double w_plus, double w_minus) {
  const std::size_t max_sum = n * (n + 1) / 2;
  std::vector<std::uint64_t> count(max_sum + 1, 0);
  count[0] = 1;
  for (std::size_t k = 1; k <= n; ++k) {
    for (std::size_t s = max_sum; s >= k; --s) count[s] += count[s - k];
  }
  // Without ties the ranks are integers, so W+ and W- are too.
  const auto t = static_cast<std::size_t>(std::llround(std::min(w_plus, w_minus)));
  std::uint64_t at_most_t = 0;
  for (std::size_t s = 0; s <= t; ++s) at_most_t += count[s];
  const double p = 2.0 * static_cast<double>(at_most_t) / std::ldexp(1.0, static_cast<int>(n));
  return std::min(1.0, p);
}

}  // namespace

double mcnemar_p(std::uint64_t b, std::uint64_t c) {
  const std::uint64_t n = b + c;
  if (n == 0) return 1.0;
  if (n < 25) {
    // Exact: under H0 each discordant pair falls on either side with probability 1/2.
    const std::uint64_t k = std::min(b, c);
    double binom = 1.0;  // C(n, 0)
    double tail = 0.0;
    for (std::uint64_t i = 0; i <= k; ++i) {
      tail += binom;
      binom = binom * static_cast<double>(n - i) / static_cast<double>(i + 1);  // C(n, i+1), exact for n < 25
    }
    return std::min(1.0, 2.0 * tail / std::ldexp(1.0, static_cast<int>(n)));
  }
  const double diff = static_cast<double>(b > c ? b - c : c - b);
  const double corrected = std::max(0.0, diff - 1.0);
  return chi_square_1df_sf(corrected * corrected / static_cast<double>(n));
}

WilcoxonResult wilcoxon_signed_rank(std::span<const double> x, std::span<const double> y) {
  WilcoxonResult r;
  if (x.size() != y.size() || any_nan(x) || any_nan(y)) {
    r.p = kNaN;
    return r;
  }
  std::vector<double> diff;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] != y[i]) diff.push_back(x[i] - y[i]);
  }
  r.n = diff.size();
  if (r.n == 0) {
    r.p = 1.0;
    return r;
  }
  std::vector<double> magnitude(diff.size());
  std::transform(diff.begin(), diff.end(), magnitude.begin(), [](double d) { return std::fabs(d); });
  const Ranking ranking = average_ranks(magnitude);
  for (std::size_t i = 0; i < diff.size(); ++i) {
    (diff[i] > 0 ? r.w_plus : r.w_minus) += ranking.ranks[i];
  }

  if (r.n <= 25 && ranking.tie_sizes.empty()) {
    r.exact = true;
    r.p = wilcoxon_exact_p(r.n, r.w_plus, r.w_minus);
    return r;
  }
  const double n = static_cast<double>(r.n);
  double tie_term = 0.0;
  for (std::size_t t : ranking.tie_sizes) {
    const double td = static_cast<double>(t);
    tie_term += td * td * td - td;
  }
  const double mean = n * (n + 1.0) / 4.0;
  const double variance = n * (n + 1.0) * (2.0 * n + 1.0) / 24.0 - tie_term / 48.0;
  r.p = normal_two_sided_p((r.w_plus - mean) / std::sqrt(variance));
  return r;
}

std::vector<double> holm_adjust(std::span<const double> p_values) {
  std::vector<double> adjusted(p_values.size(), kNaN);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < p_values.size(); ++i) {
    if (!std::isnan(p_values[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return p_values[i] < p_values[j]; });
  const std::size_t m = order.size();
  double running = 0.0;  // the step-down max keeps adjusted p-values monotone in the raw ones
  for (std::size_t j = 0; j < m; ++j) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - j) * p_values[order[j]]));
    adjusted[order[j]] = running;
  }
  return adjusted;
}

SpearmanResult spearman(std::span<const double> x, std::span<const double> y) {
  SpearmanResult r;
  r.n = x.size();
  r.rho = kNaN;
  r.p = kNaN;
  if (x.size() != y.size() || x.size() < 2 || any_nan(x) || any_nan(y)) return r;
  const std::vector<double> rx = average_ranks(x).ranks;
  const std::vector<double> ry = average_ranks(y).ranks;
  // Average ranks of n values always have mean (n + 1) / 2.
  const double centre = (static_cast<double>(r.n) + 1.0) / 2.0;
  double sxy = 0.0;
  double sxx = 0.0;
  double syy = 0.0;
  for (std::size_t i = 0; i < r.n; ++i) {
    sxy += (rx[i] - centre) * (ry[i] - centre);
    sxx += (rx[i] - centre) * (rx[i] - centre);
    syy += (ry[i] - centre) * (ry[i] - centre);
  }
  if (sxx == 0.0 || syy == 0.0) return r;  // a constant side has no ordering to correlate
  r.rho = std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
  if (r.n < 3) return r;  // n - 2 = 0 degrees of freedom
  if (std::fabs(r.rho) == 1.0) {
    r.p = 0.0;
    return r;
  }
  const double df = static_cast<double>(r.n) - 2.0;
  const double t = r.rho * std::sqrt(df / ((1.0 - r.rho) * (1.0 + r.rho)));
  r.p = student_t_two_sided_p(t, df);
  return r;
}

}  // namespace kvsweep::stats
