#include "kvsweep/stats/gradient.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace kvsweep::stats {
namespace {

// bits(K) + bits(V) of a 3 × 3 grid over f16, q8_0, q4_0 (16, 8.5, 4.5), row-major.
const std::vector<double> kBits{32, 24.5, 20.5, 24.5, 17, 13, 20.5, 13, 9};

TEST(PrecisionGradient, MonotonicGridIsAGradient) {
  // The metric falls with the bits, ties and all: rho = 1.
  std::vector<double> metric;
  for (double b : kBits) metric.push_back(b / 2.0 + 1.0);
  const GradientResult g = precision_gradient(kBits, metric, true);
  EXPECT_EQ(g.n, 9u);
  EXPECT_DOUBLE_EQ(g.rho, 1.0);
  EXPECT_DOUBLE_EQ(g.p, 0.0);
  EXPECT_EQ(g.verdict, Gradient::yes);
  EXPECT_EQ(to_string(g.verdict), "yes");
}

TEST(PrecisionGradient, LowerIsBetterMetricFlipsTheSign) {
  // A hallucination count that rises as bits fall is a gradient for a lower-is-better metric.
  std::vector<double> metric;
  for (double b : kBits) metric.push_back(40.0 - b);
  EXPECT_EQ(precision_gradient(kBits, metric, false).verdict, Gradient::yes);
  EXPECT_EQ(precision_gradient(kBits, metric, true).verdict, Gradient::reversed);
}

TEST(PrecisionGradient, FlatGridIsNoGradient) {
  // Seed 001's random-bodies run: every cell 20.00.
  const std::vector<double> flat(9, 20.0);
  const GradientResult g = precision_gradient(kBits, flat, true);
  EXPECT_TRUE(std::isnan(g.rho));
  EXPECT_EQ(g.verdict, Gradient::no);
}

TEST(PrecisionGradient, JitterIsNoGradient) {
  // Values in seed 001's range scattered with no relation to bits: ranks give rho = 2/117
  // (hand-computed: Pearson correlation of the average ranks), t = 0.045 on 7 df.
  const std::vector<double> metric{19.44, 19.25, 19.56, 19.38, 19.50, 19.31, 19.44, 19.56, 19.25};
  const GradientResult g = precision_gradient(kBits, metric, true);
  EXPECT_NEAR(g.rho, 2.0 / 117.0, 1e-12);
  EXPECT_GT(g.p, 0.9);
  EXPECT_EQ(g.verdict, Gradient::no);
}

TEST(PrecisionGradient, LowPrecisionDoingBetterIsReversed) {
  // "the q4_0 rows score higher than the bf16 rows, which is anti-physical" (seed 001): here the
  // low-bit cells score higher, rho = -0.691 (hand-computed), t = -2.53 on 7 df, p < 0.05.
  const std::vector<double> metric{19.25, 19.38, 19.44, 19.19, 19.56, 19.56, 19.56, 19.56, 19.44};
  const GradientResult g = precision_gradient(kBits, metric, true);
  EXPECT_NEAR(g.rho, -0.6906983568704114, 1e-12);
  EXPECT_LT(g.p, 0.05);
  EXPECT_EQ(g.verdict, Gradient::reversed);
  EXPECT_EQ(to_string(g.verdict), "reversed");
}

TEST(PrecisionGradient, TooFewCellsOrMismatchedSizes) {
  EXPECT_EQ(precision_gradient(std::vector<double>{32, 9}, std::vector<double>{1, 0}, true).verdict, Gradient::no);
  const GradientResult bad = precision_gradient(std::vector<double>{32, 9, 4}, std::vector<double>{1, 0}, true);
  EXPECT_EQ(bad.n, 0u);
  EXPECT_EQ(bad.verdict, Gradient::no);
}

}  // namespace
}  // namespace kvsweep::stats
