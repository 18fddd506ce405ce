#include "kvsweep/stats/sequential.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kvsweep::stats {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kBetCap = 0.75;  // c: every wealth factor stays >= 1 - c (Waudby-Smith & Ramdas use 1/2 or 3/4)

/// The boundary in [lo, hi] between the μ0 that `rejected` refutes and those it does not, by bisection
/// (rejection taken as monotone in μ0; `rejected_at_lo` says which side lo is on).
double bisect_boundary(double lo, double hi, bool rejected_at_lo, const auto& rejected) {
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (rejected(mid) == rejected_at_lo ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

/// log K_n of the bet against H0: E[d] <= mu0 for d in [lo, hi] (see the header for the steps).
double betting_log_wealth_above(std::span<const double> d, double lo, double hi, double mu0) {
  double w = 0.0;
  if (!(mu0 > lo)) {
    // H0 "E[d] <= lo" allows only d = lo: any larger difference refutes it outright.
    const bool refuted = std::any_of(d.begin(), d.end(), [&](double x) { return x > lo; });
    if (refuted) w = kInf;
    return w;
  }
  const double lambda_max = kBetCap / (mu0 - lo);
  const double prior_var = (hi - lo) * (hi - lo) / 16.0;
  double sum = 0.0, sum_sq_dev = 0.0;  // Σ y_j and Σ (y_j − ŷ)² over the items before i (Welford)
  double mean = 0.0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double y = d[i] - mu0;
    double lambda = 0.0;
    if (i > 0) {
      const double var = (prior_var + sum_sq_dev) / static_cast<double>(i + 1);
      lambda = std::clamp(mean / (var + mean * mean), 0.0, lambda_max);
    }
    w += std::log1p(lambda * y);
    // Welford's update of the running mean and sum of squared deviations.
    sum += y;
    const double previous_mean = mean;
    mean = sum / static_cast<double>(i + 1);
    sum_sq_dev += (y - previous_mean) * (y - mean);
  }
  return w;
}

double betting_log_wealth_below(std::span<const double> d, double lo, double hi, double mu0) {
  std::vector<double> negated(d.size());
  std::transform(d.begin(), d.end(), negated.begin(), [](double x) { return -x; });
  return betting_log_wealth_above(negated, -hi, -lo, -mu0);
}

ConfidenceInterval normal_mixture_confidence_sequence(std::span<const double> d, double alpha, double g) {
  const std::size_t n = d.size();
  if (n < 2) return {-kInf, kInf};
  // Derivation of step 1. Shift by μ0: y_i ~ N(δσ, σ²). Under H1, δ ~ N(0, g); under both, p(σ) ∝ 1/σ.
  // Integrating δ: Σ(y − δσ)²/σ² = Σy²/σ² − 2δ n ȳ/σ + n δ², and ∫ e^{δa − nδ²/2} N(δ; 0, g) dδ =
  // (1 + ng)^{−1/2} e^{a² g / (2(1 + ng))} with a = n ȳ / σ. Integrating σ: ∫ σ^{−n−1} e^{−Q/(2σ²)} dσ ∝ Q^{−n/2},
  // with Q0 = Σy² = S + nȳ² under H0 and Q1 = S + nȳ²/(1 + ng) under H1. So BF = (1 + ng)^{−1/2} (Q0/Q1)^{n/2},
  // and Q0/Q1 = (1 + t²/ν) / (1 + t²/(ν(1 + ng))) with t² = n ȳ² ν / S.
  const double nd = static_cast<double>(n);
  const double nu = nd - 1.0;
  const double m = mean(d);
  double s = 0.0;
  for (double x : d) s += (x - m) * (x - m);
  const double b = 1.0 + nd * g;
  // Step 2: BF = 1/alpha ⇔ (1 + x/ν) = A (1 + x/(ν b)) with A = (alpha^−2 b)^{1/n}.
  const double a = std::exp((std::log(b) - 2.0 * std::log(alpha)) / nd);
  if (a >= b) return {-kInf, kInf};
  const double x_star = nu * (a - 1.0) / (1.0 - a / b);
  // Step 3: t² < x* ⇔ (m − μ0)² < x* S / (ν n).
  const double half = std::sqrt(x_star * s / (nu * nd));
  return {m - half, m + half};
}

namespace {

/// The verdict alone (no betting bounds: those take a bisection), for first_decision's every step.
Decision sequential_verdict(std::span<const double> d, double margin, const SequentialSpec& spec) {
  if (!spec.bounded) {
    const ConfidenceInterval cs = normal_mixture_confidence_sequence(d, spec.alpha, spec.g);
    return verdict_of(cs.lower, cs.upper, margin);
  }
  const double threshold = -std::log(spec.alpha);
  if (betting_log_wealth_above(d, spec.lo, spec.hi, -margin) >= threshold) return Decision::non_inferior;
  if (betting_log_wealth_below(d, spec.lo, spec.hi, -margin) >= threshold) return Decision::inferior;
  return Decision::unknown;
}

}  // namespace

NonInferiority sequential_noninferiority(std::span<const double> d, double margin, const SequentialSpec& spec) {
  NonInferiority r;
  r.margin = margin;
  r.n = d.size();
  r.estimate = d.empty() ? std::numeric_limits<double>::quiet_NaN() : mean(d);
  if (!spec.bounded) {
    const ConfidenceInterval cs = normal_mixture_confidence_sequence(d, spec.alpha, spec.g);
    r.lower = cs.lower;
    r.upper = cs.upper;
    r.verdict = verdict_of(r.lower, r.upper, margin);
    return r;
  }
  const double threshold = -std::log(spec.alpha);
  r.verdict = sequential_verdict(d, margin, spec);
  const auto rejects_above = [&](double mu0) { return betting_log_wealth_above(d, spec.lo, spec.hi, mu0) >= threshold; };
  const auto rejects_below = [&](double mu0) { return betting_log_wealth_below(d, spec.lo, spec.hi, mu0) >= threshold; };
  // lower: the smallest μ0 that "E[d] <= μ0" is not refuted at; upper: the largest for "E[d] >= μ0".
  r.lower = rejects_above(spec.lo) ? bisect_boundary(spec.lo, spec.hi, true, rejects_above) : spec.lo;
  r.upper = rejects_below(spec.hi) ? bisect_boundary(spec.lo, spec.hi, false, rejects_below) : spec.hi;
  return r;
}

SequentialDecision first_decision(std::span<const double> d, double margin, const SequentialSpec& spec,
                                  std::size_t min_items) {
  SequentialDecision out;
  for (std::size_t n = std::max<std::size_t>(min_items, 1); n <= d.size(); ++n) {
    if (sequential_verdict(d.first(n), margin, spec) != Decision::unknown) {
      out.result = sequential_noninferiority(d.first(n), margin, spec);
      out.decided_at = n;
      return out;
    }
  }
  out.result = sequential_noninferiority(d, margin, spec);
  return out;
}

}  // namespace kvsweep::stats
