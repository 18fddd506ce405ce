// One-sided bounds on paired differences against a margin, on literal samples worked by hand.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kvsweep/stats/noninferiority.hpp"

namespace kvsweep::stats {
namespace {

TEST(NonInferiority, CriticalValuesMatchTheTables) {
  EXPECT_NEAR(student_t_upper_quantile(0.05, 9), 1.833113, 1e-6);   // t table, 9 df, one-sided 0.05
  EXPECT_NEAR(student_t_upper_quantile(0.025, 4), 2.776445, 1e-6);
  EXPECT_NEAR(normal_upper_quantile(0.05), 1.644854, 1e-6);
  EXPECT_NEAR(normal_upper_quantile(0.025), 1.959964, 1e-6);
  EXPECT_TRUE(std::isnan(student_t_upper_quantile(0.05, 0)));
  EXPECT_TRUE(std::isnan(normal_upper_quantile(0.7)));
}

TEST(NonInferiority, PairedTBoundStraddlingTheMarginIsUnknownWithItemsNeeded) {
  // mean −0.01, sd = sqrt(0.001 / 4) = 0.0158114, t(0.95, 4) = 2.131847:
  // half-width 2.131847 × 0.0158114 / √5 = 0.0150748.
  const std::vector<double> d{-0.03, 0.01, -0.02, 0.0, -0.01};
  const NonInferiority r = noninferiority_mean(d, 0.02);
  EXPECT_EQ(r.n, 5u);
  EXPECT_NEAR(r.estimate, -0.01, 1e-12);
  EXPECT_NEAR(r.lower, -0.0250748, 1e-6);
  EXPECT_NEAR(r.upper, 0.0050748, 1e-6);
  EXPECT_EQ(r.verdict, Decision::unknown);
  // The gap to −margin is 0.01: n = 8 gives t(7) 1.894579 × 0.0158114 / √8 = 0.01059, n = 9 gives 0.00980.
  ASSERT_TRUE(r.items_needed.has_value());
  EXPECT_EQ(*r.items_needed, 9u);
  // A wider margin decides it.
  EXPECT_EQ(noninferiority_mean(d, 0.03).verdict, Decision::non_inferior);
}

TEST(NonInferiority, PairedTInferiorAndDegenerateSamples) {
  const std::vector<double> worse{-0.10, -0.12, -0.08, -0.11, -0.09};
  EXPECT_EQ(noninferiority_mean(worse, 0.02).verdict, Decision::inferior);
  // Every difference zero (greedy outputs that match): a zero-width bound at 0.
  const std::vector<double> same(4, 0.0);
  const NonInferiority s = noninferiority_mean(same, 0.02);
  EXPECT_EQ(s.verdict, Decision::non_inferior);
  EXPECT_DOUBLE_EQ(s.lower, 0.0);
  // One pair has no spread: unknown, and no projection.
  const std::vector<double> one{0.0};
  const NonInferiority o = noninferiority_mean(one, 0.02);
  EXPECT_EQ(o.verdict, Decision::unknown);
  EXPECT_TRUE(std::isnan(o.lower));
  EXPECT_FALSE(o.items_needed.has_value());
  EXPECT_EQ(noninferiority_mean(std::vector<double>{}, 0.02).verdict, Decision::unknown);
}

TEST(NonInferiority, NewcombeIntervalForPairedProportions) {
  // both 8, only the reference 3, only the cell 1, neither 8 (n = 20): theta = −0.1, phi = 61 / 99,
  // Wilson limits at z = 1.959964; hand-worked with Newcombe's method 10.
  const ConfidenceInterval ci = newcombe_paired_interval({8, 3, 1, 8}, 1.959964);
  EXPECT_NEAR(ci.lower, -0.2680516, 1e-6);
  EXPECT_NEAR(ci.upper, 0.0821689, 1e-6);
  const ConfidenceInterval empty = newcombe_paired_interval({}, 1.96);
  EXPECT_TRUE(std::isnan(empty.lower));
}

TEST(NonInferiority, BinaryAllPassedIsUnknownUntilEnoughItems) {
  // All passed on both sides: phi = 0 (empty margins), lower = −(1 − Wilson lower of n/n) = −z²/(n + z²).
  const NonInferiority ten = noninferiority_paired_binary({10, 0, 0, 0}, 0.05);
  EXPECT_NEAR(ten.lower, -0.2129420, 1e-6);
  EXPECT_EQ(ten.verdict, Decision::unknown);
  // z²/(n + z²) < 0.05 ⇔ n > 19 z² = 51.4.
  ASSERT_TRUE(ten.items_needed.has_value());
  EXPECT_EQ(*ten.items_needed, 52u);
  const NonInferiority many = noninferiority_paired_binary({200, 0, 0, 0}, 0.05);
  EXPECT_NEAR(many.lower, -0.0133472, 1e-6);
  EXPECT_EQ(many.verdict, Decision::non_inferior);
  // The reference passes 30 the cell fails: shown worse than the margin.
  const NonInferiority lost = noninferiority_paired_binary({0, 30, 0, 0}, 0.05);
  EXPECT_EQ(lost.verdict, Decision::inferior);
  EXPECT_DOUBLE_EQ(lost.estimate, -1.0);
}

}  // namespace
}  // namespace kvsweep::stats
