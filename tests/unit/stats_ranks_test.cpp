#include "kvsweep/stats/ranks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kvsweep/stats/precision.hpp"

namespace kvsweep::stats {
namespace {

TEST(Ranks, AverageRanksForTies) {
  const Ranking a = average_ranks(std::vector<double>{10, 20, 20, 30});
  EXPECT_EQ(a.ranks, (std::vector<double>{1, 2.5, 2.5, 4}));
  EXPECT_EQ(a.tie_sizes, (std::vector<std::size_t>{2}));
  // 3 appears three times at positions 3..5 → rank 4 each.
  const Ranking b = average_ranks(std::vector<double>{3, 1, 3, 3, 2});
  EXPECT_EQ(b.ranks, (std::vector<double>{4, 1, 4, 4, 2}));
  EXPECT_EQ(b.tie_sizes, (std::vector<std::size_t>{3}));
  const Ranking c = average_ranks(std::vector<double>{5, 5, 1, 1, 9});
  EXPECT_EQ(c.ranks, (std::vector<double>{3.5, 3.5, 1.5, 1.5, 5}));
  EXPECT_EQ(c.tie_sizes, (std::vector<std::size_t>{2, 2}));
  EXPECT_TRUE(average_ranks(std::vector<double>{}).ranks.empty());
}

TEST(Ranks, NanRanksLast) {
  const Ranking r = average_ranks(std::vector<double>{2, std::nan(""), 1});
  EXPECT_EQ(r.ranks, (std::vector<double>{2, 3, 1}));
}

TEST(Precision, BitsPerValue) {
  EXPECT_EQ(bits_per_value("f32"), 32.0);
  EXPECT_EQ(bits_per_value("f16"), 16.0);
  EXPECT_EQ(bits_per_value("bf16"), 16.0);
  EXPECT_EQ(bits_per_value("q8_0"), 8.5);
  EXPECT_EQ(bits_per_value("q5_1"), 6.0);
  EXPECT_EQ(bits_per_value("q5_0"), 5.5);
  EXPECT_EQ(bits_per_value("q4_1"), 5.0);
  EXPECT_EQ(bits_per_value("q4_0"), 4.5);
  EXPECT_EQ(bits_per_value("iq4_nl"), 4.5);
  EXPECT_EQ(bits_per_value("Q8_0"), std::nullopt);
  EXPECT_EQ(bits_per_value("q3_k"), std::nullopt);
  EXPECT_EQ(bits_per_value(""), std::nullopt);
}

}  // namespace
}  // namespace kvsweep::stats
