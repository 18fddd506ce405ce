#include "kvsweep/stats/power.hpp"

#include <vector>

#include "kvsweep/stats/tests.hpp"

namespace kvsweep::stats {

std::string_view to_string(PairedTest test) { return test == PairedTest::mcnemar ? "mcnemar" : "wilcoxon"; }

double min_attainable_p(PairedTest test, std::size_t n) {
  if (n == 0) return 1.0;
  if (test == PairedTest::mcnemar) return mcnemar_p(0, n);
  // Differences 1..n against 0: untied, all positive — the most extreme sample of n pairs.
  std::vector<double> x(n), y(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i + 1);
  return wilcoxon_signed_rank(x, y).p;
}

std::optional<std::size_t> pairs_needed(PairedTest test, double threshold, std::size_t max_n) {
  if (!(threshold > 0.0)) return std::nullopt;
  // min_attainable_p falls monotonically with n, so a bisection would do; n stays small in practice
  // (about log2(2 / threshold) pairs while the tests are exact), so a linear scan is enough.
  for (std::size_t n = 1; n <= max_n; ++n) {
    if (min_attainable_p(test, n) < threshold) return n;
  }
  return std::nullopt;
}

}  // namespace kvsweep::stats
