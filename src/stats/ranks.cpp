#include "kvsweep/stats/ranks.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kvsweep::stats {

Ranking average_ranks(std::span<const double> values) {
  const std::size_t n = values.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // A strict weak order even with NaNs: every number before every NaN, NaNs equivalent.
  const auto less = [&](std::size_t i, std::size_t j) {
    const double x = values[i];
    const double y = values[j];
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    return x < y;
  };
  std::stable_sort(order.begin(), order.end(), less);

  Ranking out;
  out.ranks.assign(n, 0.0);
  std::size_t start = 0;
  while (start < n) {
    std::size_t end = start + 1;
    while (end < n && !less(order[start], order[end])) ++end;
    // Positions start..end-1 (0-based) hold ranks start+1..end; their mean is (start+1+end)/2.
    const double rank = 0.5 * static_cast<double>(start + 1 + end);
    for (std::size_t k = start; k < end; ++k) out.ranks[order[k]] = rank;
    if (end - start > 1) out.tie_sizes.push_back(end - start);
    start = end;
  }
  return out;
}

}  // namespace kvsweep::stats
