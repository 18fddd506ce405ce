#pragma once
/// Whether a paired test can ever reach significance with the pairs at hand: the smallest p an exact
/// test attains for n pairs, and the pairs needed before a threshold becomes reachable.

#include <cstddef>
#include <optional>
#include <string_view>

namespace kvsweep::stats {

/// The paired tests kvsweep uses (see tests.hpp): McNemar for 0/1 metrics, Wilcoxon signed-rank otherwise.
enum class PairedTest { mcnemar, wilcoxon };

std::string_view to_string(PairedTest test);

/// The smallest two-sided p `test` can give for n pairs, whatever the data: the most extreme sample.
/// McNemar: all n pairs discordant the same way, mcnemar_p(0, n) = 2 · 2^-n = 2^(1-n) while n < 25
/// (exact binomial), the continuity-corrected chi-square beyond. Wilcoxon signed-rank: n distinct
/// non-zero differences of one sign, W- = 0, so p = 2 / 2^n exactly for n <= 25 (one of the 2^n sign
/// patterns in each tail; Wilcoxon 1945), the normal approximation beyond — computed by running the
/// test on that sample, so it agrees with wilcoxon_signed_rank(). n = 0 → 1. E.g. n = 2 → 0.5, n = 5 →
/// 0.0625, n = 6 → 0.03125: at alpha 0.05 a single check needs 6 pairs.
double min_attainable_p(PairedTest test, std::size_t n);

/// The smallest n whose min_attainable_p is below `threshold` (strictly: significance is p < alpha),
/// searched up to `max_n`; nullopt when none is (threshold <= 0, or beyond max_n). For McNemar it is
/// the number of discordant pairs needed, all in one direction.
std::optional<std::size_t> pairs_needed(PairedTest test, double threshold, std::size_t max_n = 4096);

}  // namespace kvsweep::stats
