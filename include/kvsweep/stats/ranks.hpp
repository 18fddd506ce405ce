#pragma once
/// Ranks of a sample with ties given their average rank, as the rank tests need.

#include <cstddef>
#include <span>
#include <vector>

namespace kvsweep::stats {

struct Ranking {
  std::vector<double> ranks;            // 1-based, in input order; tied values share the mean of their ranks
  std::vector<std::size_t> tie_sizes;   // size t of every group of two or more equal values
};

/// Average ("fractional", "mid") ranks: values 10, 20, 20, 30 rank 1, 2.5, 2.5, 4.
/// Values are compared exactly. NaNs rank last, tied with each other (callers treat NaN input
/// as an undefined result before ranking).
Ranking average_ranks(std::span<const double> values);

}  // namespace kvsweep::stats
