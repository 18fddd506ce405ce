#pragma once
/// Non-inferiority of a cell against its reference: one-sided confidence bounds on a paired
/// difference compared with a margin, the verdict they support, and the items a verdict would need.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "kvsweep/stats/summary.hpp"

namespace kvsweep::stats {

/// `non_inferior`: the lower bound is above −margin. `inferior`: the upper bound is below −margin (the
/// cell is worse than the margin allows). `unknown`: the interval straddles −margin (too few items).
enum class Decision { non_inferior, inferior, unknown };

std::string_view to_string(Decision verdict);  // "non-inferior", "inferior", "unknown"

/// The verdict of bounds on a difference (oriented: higher is better) against −margin.
Decision verdict_of(double lower, double upper, double margin);

/// A paired difference (cell − reference, oriented so that higher is better) and its bounds. `lower`
/// and `upper` are each a one-sided (1 − alpha) bound, so together a two-sided (1 − 2 alpha) interval
/// (the two one-sided tests of Schuirmann 1987; the non-inferiority test is the lower one alone).
struct NonInferiority {
  Decision verdict = Decision::unknown;
  std::size_t n = 0;
  double estimate = 0.0;
  double lower = 0.0;
  double upper = 0.0;
  double margin = 0.0;
  /// When unknown: the smallest number of paired items at which, if the observed difference and its
  /// spread held, a bound would clear −margin. nullopt when no number would (the estimate sits on
  /// −margin, or n < 2 gives no spread to project) or beyond 10^7.
  std::optional<std::size_t> items_needed;
};

/// t with P(T > t) = p for Student's t on df > 0 degrees of freedom (the one-sided critical value),
/// by bisection of student_t_two_sided_p(t, df) = 2p to 1e-12. NaN for p outside (0, 0.5] or df <= 0.
double student_t_upper_quantile(double p, double df);

/// z with P(Z > z) = p for a standard normal Z, by bisection of normal_two_sided_p; NaN outside (0, 0.5].
double normal_upper_quantile(double p);

/// Continuous and count metrics: the one-sided paired t bounds (Student 1908) on the mean of the
/// differences d (oriented: positive = the cell is better),
///   lower = mean − t_{1−alpha, n−1} sd / sqrt(n),   upper = mean + t_{1−alpha, n−1} sd / sqrt(n).
/// Edge cases: n < 2 → unknown with NaN bounds (no spread); sd = 0 → a zero-width bound at the mean
/// (every difference equal, as greedy decoding gives when the outputs match).
/// items_needed: the smallest n' with t_{1−alpha, n'−1} sd / sqrt(n') < |mean + margin|.
NonInferiority noninferiority_mean(std::span<const double> differences, double margin, double alpha = 0.05);

/// A paired 0/1 table: items both passed, only the reference passed, only the cell passed, neither.
/// Counts are doubles so that items_needed can scale the table.
struct PairedTable {
  double both = 0;
  double only_reference = 0;
  double only_cell = 0;
  double neither = 0;
  double n() const { return both + only_reference + only_cell + neither; }
  /// One paired item into its cell of the table.
  void add(bool cell_passed, bool reference_passed) {
    (cell_passed ? (reference_passed ? both : only_cell) : (reference_passed ? only_reference : neither)) += 1.0;
  }
};

/// Newcombe's hybrid score interval for the difference of paired proportions p_cell − p_reference
/// (Newcombe 1998, Statistics in Medicine 17:2635, method 10): Wilson score limits (l, u) of each
/// marginal proportion at z, combined with the phi correlation of the table,
///   phi = (both·neither − only_reference·only_cell) / sqrt of the product of the four margins
///   (0 when a margin is empty), theta = p_cell − p_ref,
///   lower = theta − sqrt((p_cell − l_cell)² − 2 phi (p_cell − l_cell)(u_ref − p_ref) + (u_ref − p_ref)²),
///   upper = theta + sqrt((u_cell − p_cell)² − 2 phi (u_cell − p_cell)(p_ref − l_ref) + (p_ref − l_ref)²).
/// An empty table → NaN bounds.
ConfidenceInterval newcombe_paired_interval(const PairedTable& table, double z);

/// Wilson's score interval for x successes of n at z (Wilson 1927); n must be > 0.
ConfidenceInterval wilson(double x, double n, double z);

/// Binary metrics (oriented: 1 = good): newcombe_paired_interval at z = z_{1−alpha}, so each bound is
/// one-sided (1 − alpha). items_needed scales the table's proportions to n' items.
/// E.g. 10 items all passed on both sides, margin 0.05: lower = −z²/(10 + z²) = −0.213 → unknown,
/// and 52 items would be needed (z²/(n + z²) < 0.05 ⇔ n > 19 z² = 51.4).
NonInferiority noninferiority_paired_binary(const PairedTable& table, double margin, double alpha = 0.05);

}  // namespace kvsweep::stats
