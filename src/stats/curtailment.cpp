#include "kvsweep/stats/curtailment.hpp"

#include <cmath>
#include <vector>

namespace kvsweep::stats {

double beta_binomial_pmf(std::size_t x, std::size_t n, double a, double b) {
  if (x > n) return 0.0;
  const double k = static_cast<double>(x), m = static_cast<double>(n);
  const double log_choose = std::lgamma(m + 1.0) - std::lgamma(k + 1.0) - std::lgamma(m - k + 1.0);
  const auto log_beta = [](double p, double q) { return std::lgamma(p) + std::lgamma(q) - std::lgamma(p + q); };
  return std::exp(log_choose + log_beta(k + a, m - k + b) - log_beta(a, b));
}

CompletionOutlook paired_binary_outlook(const PairedTable& seen, OpenItems open, double margin, double alpha,
                                        double prior) {
  const std::size_t a = open.reference_passed, b = open.reference_failed;
  const double z = normal_upper_quantile(alpha);
  const auto completed = [&](std::size_t x, std::size_t y) {
    return PairedTable{seen.both + static_cast<double>(x), seen.only_reference + static_cast<double>(a - x),
                       seen.only_cell + static_cast<double>(y), seen.neither + static_cast<double>(b - y)};
  };
  // Step 3's weights: the predictive distribution of each stratum's passes.
  std::vector<double> wx(a + 1), wy(b + 1);
  for (std::size_t x = 0; x <= a; ++x) wx[x] = beta_binomial_pmf(x, a, prior + seen.both, prior + seen.only_reference);
  for (std::size_t y = 0; y <= b; ++y) wy[y] = beta_binomial_pmf(y, b, prior + seen.only_cell, prior + seen.neither);

  CompletionOutlook out;
  bool all_same = true;
  std::optional<Decision> first;
  // Steps 1 and 2: every completion's verdict.
  for (std::size_t x = 0; x <= a; ++x) {
    for (std::size_t y = 0; y <= b; ++y) {
      const ConfidenceInterval ci = newcombe_paired_interval(completed(x, y), z);
      const Decision v = verdict_of(ci.lower, ci.upper, margin);
      if (!first) first = v;
      all_same = all_same && v == *first;
      if (v != Decision::unknown) out.p_decided += wx[x] * wy[y];
    }
  }
  if (!all_same || !first) return out;
  // The completion nearest to changing the verdict (or the table so far when it is unknown).
  const PairedTable shown = *first == Decision::inferior       ? completed(a, b)
                            : *first == Decision::non_inferior ? completed(0, 0)
                                                              : seen;
  out.certain = noninferiority_paired_binary(shown, margin, alpha);
  out.certain->verdict = *first;  // the table so far may not decide yet; every completion does
  return out;
}

}  // namespace kvsweep::stats
