#pragma once
/// Anytime-valid non-inferiority: confidence sequences and betting tests on paired differences whose
/// error rate holds although they are looked at after every item, for adaptive sweeps that stop a
/// cell once its verdict is settled.

#include <cstddef>
#include <span>

#include "kvsweep/stats/noninferiority.hpp"
#include "kvsweep/stats/summary.hpp"

namespace kvsweep::stats {

/// A confidence sequence for the mean of Gaussian paired differences of unknown variance: the set of
/// means μ0 at which the scale-invariant normal-mixture Bayes factor stays below 1/alpha.
///
/// Why this test: the fixed-n rule for counts and continuous metrics is the paired t, which assumes
/// Gaussian differences; this is its sequential twin under the same assumption. A Bayes factor whose
/// nuisance scale σ carries the right-Haar prior dσ/σ is a test martingale under H0: μ = μ0 for every σ
/// (Hendriksen, de Heide & Grünwald 2021, "Optional stopping with Bayes factors", §4; Lai 1976, "On
/// confidence sequences", Ann. Statist. 4:265), so by Ville's inequality P(∃n: BF_n ≥ 1/alpha) ≤ alpha:
/// the sequence covers μ at every n at once with probability ≥ 1 − alpha, whenever it is checked.
/// Identical outputs (every difference equal, as greedy decoding gives) shrink it to a point, as they
/// do the fixed t, once (1 + n g)^(n−1) > alpha^−2 (n ≥ 5 at alpha 0.05, g 1).
///
/// Steps, for n differences with mean m, S = Σ(d − m)², ν = n − 1 and effect-size prior δ ~ N(0, g)
/// (Gönen, Johnson, Lu & Westfall 2005, Am. Stat. 59:252, with fixed g; derived again in sequential.cpp):
///   1. BF_n(μ0) = (1 + n g)^(−1/2) · ((1 + t²/ν) / (1 + t²/(ν(1 + n g))))^(n/2), t = (m − μ0)·sqrt(n ν / S);
///      BF grows with t², so {BF < 1/alpha} is {t² < x*}, an interval around m.
///   2. A = (alpha^−2 (1 + n g))^(1/n). If A ≥ 1 + n g no finite t reaches 1/alpha: the interval is the
///      whole line. Else x* = ν (A − 1) / (1 − A / (1 + n g)).
///   3. half width = sqrt(x* S / (ν n)); the interval is m ± half width (a point when S = 0).
/// Edge cases: n < 2 → (−inf, +inf) (one difference says nothing about scale-free effect size).
ConfidenceInterval normal_mixture_confidence_sequence(std::span<const double> differences, double alpha,
                                                      double g = 1.0);

/// Bounded differences d in [lo, hi] (a paired binary metric: [−1, 1]): two one-sided tests by betting
/// (Waudby-Smith & Ramdas 2023, "Estimating means of bounded random variables by betting", JRSS-B
/// 86:1, §3–4; Shafer 2021). Nonparametric, as the fixed-n Newcombe bound it stands in for.
/// For H0: E[d] ≤ μ0 the gambler's wealth is K_n = Π (1 + λ_i (d_i − μ0)) with λ_i chosen from the
/// items before i only (predictable) in [0, c / (μ0 − lo)], c = 3/4, so every factor stays ≥ 1/4;
/// under H0 K is a nonnegative supermartingale, and Ville's inequality bounds P(∃n: K_n ≥ 1/alpha)
/// by alpha. λ_i is the approximate growth-rate-adaptive bet (aGRAPA, ibid. §B.3):
///   λ_i = clip(ŷ / (v̂ + ŷ²), 0, c / (μ0 − lo)), with y_j = d_j − μ0, ŷ the mean of y_1..y_{i−1}
///   (0 before any item, so the first item is not bet on) and v̂ = ((hi − lo)²/16 + Σ_{j<i} (y_j − ŷ)²) / i.
/// H0: E[d] ≥ μ0 is the same with d ↦ −d. Returns log K_n.
double betting_log_wealth_above(std::span<const double> differences, double lo, double hi, double mu0);
double betting_log_wealth_below(std::span<const double> differences, double lo, double hi, double mu0);

/// Which sequential test decides: the normal mixture (counts, continuous) or betting on [lo, hi] (binary).
struct SequentialSpec {
  bool bounded = false;
  double lo = -1.0;  // the range of a difference when bounded
  double hi = 1.0;
  double alpha = 0.05;
  double g = 1.0;
};

/// The verdict at n = differences.size() against −margin (differences oriented: positive = the cell is
/// better). Normal mixture: lower/upper are the confidence sequence and the verdict follows them as in
/// noninferiority_mean. Betting: non-inferior when the wealth against "E[d] ≤ −margin" reaches 1/alpha,
/// inferior when the wealth against "E[d] ≥ −margin" does; lower/upper are the betting confidence
/// sequence's bounds (by bisection over μ0 in [lo, hi], treating rejection as monotone in μ0; reported
/// only, the verdict comes from the two tests at the margin). items_needed is never set.
NonInferiority sequential_noninferiority(std::span<const double> differences, double margin,
                                         const SequentialSpec& spec);

/// The first decision in a sequence: the verdict at the first n ≥ min_items at which
/// sequential_noninferiority decides; later items cannot undo it (the bounds hold at every n at once,
/// so keeping the first exclusion of −margin is the running intersection of the sequence). When no n
/// decides: the result at the last n, verdict unknown. `decided_at` is that n (0 when none decided).
struct SequentialDecision {
  NonInferiority result;
  std::size_t decided_at = 0;
};
SequentialDecision first_decision(std::span<const double> differences, double margin, const SequentialSpec& spec,
                                  std::size_t min_items);

}  // namespace kvsweep::stats
