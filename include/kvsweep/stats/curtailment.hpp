#pragma once
/// Curtailment of a paired binary non-inferiority test: what the full design's own verdict will be
/// once the items still to run are in, judged from the items in so far. For adaptive sweeps, whose
/// reference cell has answered every item, so that the only unknown of an item still to run is the
/// cell's own pass or fail.

#include <cstddef>
#include <optional>

#include "kvsweep/stats/noninferiority.hpp"

namespace kvsweep::stats {

/// The items a cell has not run yet, split by the reference's answer on each.
struct OpenItems {
  std::size_t reference_passed = 0;
  std::size_t reference_failed = 0;
};

/// Where the full design's verdict stands.
struct CompletionOutlook {
  /// The verdict every completion of the table gives (deterministic curtailment), with the bounds of
  /// the completion nearest to changing it: for inferior the one where every item left passes (its
  /// upper bound is still below −margin), for non-inferior the one where every item left fails, for
  /// unknown the table so far. nullopt when completions disagree.
  std::optional<NonInferiority> certain;
  /// The predictive probability that the completed table's verdict is not unknown.
  double p_decided = 0.0;
};

/// The full design is noninferiority_paired_binary on the completed table at alpha. Steps:
///   1. A completion: of the a = open.reference_passed items the cell passes x (both += x,
///      only_reference += a − x); of the b = open.reference_failed items it passes y (only_cell += y,
///      neither += b − y). Every (x, y) in [0, a] × [0, b] is evaluated — no monotonicity of the
///      Newcombe bounds in x or y is assumed.
///   2. Deterministic curtailment (Jennison & Turnbull 2000, "Group Sequential Methods with
///      Applications to Clinical Trials", §10.2): when every completion gives the same verdict, that
///      verdict is the full run's, whatever the items left answer. Stopping there changes no claim and
///      no error rate: the claim is the full design's own.
///   3. Predictive probability (Spiegelhalter, Freedman & Blackburn 1986, "Monitoring clinical trials:
///      conditional or predictive power?", Controlled Clinical Trials 7:8; Lee & Liu 2008, Clinical
///      Trials 5:93): the cell's pass rate where the reference passed, p1 ~ Beta(prior + both,
///      prior + only_reference), and where it failed, p0 ~ Beta(prior + only_cell, prior + neither)
///      (Jeffreys: prior ½); x ~ BetaBinomial(a, p1's posterior), y ~ BetaBinomial(b, p0's), independent.
///      p_decided = Σ P(x) P(y) [verdict(x, y) ≠ unknown]. Used for futility only: a cell whose full
///      run would decide with probability below a threshold stops with "unknown", which claims nothing,
///      so futility can lower power but never raise an error rate.
/// Cost: (a + 1)(b + 1) Newcombe intervals.
CompletionOutlook paired_binary_outlook(const PairedTable& seen, OpenItems open, double margin, double alpha,
                                        double prior = 0.5);

/// P(X = x) for X ~ BetaBinomial(n, a, b): C(n, x) B(x + a, n − x + b) / B(a, b), by log-gamma.
double beta_binomial_pmf(std::size_t x, std::size_t n, double a, double b);

}  // namespace kvsweep::stats
