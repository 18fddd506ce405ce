// The smallest attainable p of the paired tests and the pairs needed, by hand.

#include <gtest/gtest.h>

#include <cmath>

#include "kvsweep/stats/power.hpp"
#include "kvsweep/stats/tests.hpp"

namespace kvsweep::stats {
namespace {

TEST(Power, SmallestExactPIsTwoToTheOneMinusN) {
  // Wilcoxon signed-rank, all n differences one way: 1 of the 2^n sign patterns per tail → 2 / 2^n.
  EXPECT_DOUBLE_EQ(min_attainable_p(PairedTest::wilcoxon, 0), 1.0);
  EXPECT_DOUBLE_EQ(min_attainable_p(PairedTest::wilcoxon, 1), 1.0);
  EXPECT_DOUBLE_EQ(min_attainable_p(PairedTest::wilcoxon, 2), 0.5);
  EXPECT_DOUBLE_EQ(min_attainable_p(PairedTest::wilcoxon, 5), 0.0625);
  EXPECT_DOUBLE_EQ(min_attainable_p(PairedTest::wilcoxon, 6), 0.03125);
  // McNemar (exact binomial while b + c < 25), all n pairs discordant one way: the same 2^(1-n).
  EXPECT_DOUBLE_EQ(min_attainable_p(PairedTest::mcnemar, 2), 0.5);
  EXPECT_DOUBLE_EQ(min_attainable_p(PairedTest::mcnemar, 6), 0.03125);
  EXPECT_DOUBLE_EQ(min_attainable_p(PairedTest::mcnemar, 10), mcnemar_p(0, 10));
  // Beyond the exact range the approximations still fall with n.
  EXPECT_LT(min_attainable_p(PairedTest::wilcoxon, 40), min_attainable_p(PairedTest::wilcoxon, 30));
  EXPECT_LT(min_attainable_p(PairedTest::mcnemar, 40), min_attainable_p(PairedTest::mcnemar, 30));
}

TEST(Power, PairsNeeded) {
  EXPECT_EQ(pairs_needed(PairedTest::wilcoxon, 0.05), 6u);       // 2^-4 = 0.0625 is not < 0.05; 2^-5 is
  EXPECT_EQ(pairs_needed(PairedTest::mcnemar, 0.05), 6u);
  EXPECT_EQ(pairs_needed(PairedTest::wilcoxon, 0.05 / 9), 9u);   // 2^-8 = 0.0039 < 0.0056 < 2^-7
  EXPECT_EQ(pairs_needed(PairedTest::wilcoxon, 0.0625), 6u);     // strictly below: p = 0.0625 at n = 5 is not enough
  EXPECT_FALSE(pairs_needed(PairedTest::wilcoxon, 0.0).has_value());
  EXPECT_FALSE(pairs_needed(PairedTest::mcnemar, 1e-300, 50).has_value());
}

}  // namespace
}  // namespace kvsweep::stats
