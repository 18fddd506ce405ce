#include "kvsweep/score/cosine.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace kvsweep::score {
namespace {

TEST(Cosine, HandWorkedValues) {
  // (1,2,3)·(4,5,6) = 32; |a| = sqrt(14), |b| = sqrt(77); 32 / sqrt(1078) = 0.974631846...
  const std::vector<float> a{1, 2, 3};
  const std::vector<float> b{4, 5, 6};
  EXPECT_NEAR(cosine_similarity(a, b), 32.0 / std::sqrt(1078.0), 1e-12);
  EXPECT_NEAR(cosine_similarity(a, b), 0.9746318461970762, 1e-12);
  // (1,0) and (1,1): 1/sqrt(2).
  EXPECT_NEAR(cosine_similarity(std::vector<float>{1, 0}, std::vector<float>{1, 1}), std::sqrt(0.5), 1e-12);
}

TEST(Cosine, OrthogonalOppositeAndScaled) {
  const std::vector<float> x{1, 0, 0};
  const std::vector<float> y{0, 3, 0};
  const std::vector<float> minus_x{-2, 0, 0};
  const std::vector<float> v{0.1f, 0.2f, 0.3f};
  const std::vector<float> v_scaled{1000.f, 2000.f, 3000.f};
  EXPECT_DOUBLE_EQ(cosine_similarity(x, y), 0.0);
  EXPECT_DOUBLE_EQ(cosine_similarity(x, minus_x), -1.0);
  EXPECT_NEAR(cosine_similarity(v, v_scaled), 1.0, 1e-7);
  EXPECT_LE(cosine_similarity(v, v), 1.0);
}

TEST(Cosine, ZeroVectorGivesZero) {
  const std::vector<float> zero{0, 0, 0};
  const std::vector<float> x{1, 2, 3};
  EXPECT_EQ(cosine_similarity(zero, x), 0.0);
  EXPECT_EQ(cosine_similarity(x, zero), 0.0);
  EXPECT_EQ(cosine_similarity(std::vector<float>{}, std::vector<float>{}), 0.0);
}

TEST(Cosine, SizeMismatchNanAndInfGiveNan) {
  EXPECT_TRUE(std::isnan(cosine_similarity(std::vector<float>{1, 2}, std::vector<float>{1, 2, 3})));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(cosine_similarity(std::vector<float>{1, nan}, std::vector<float>{1, 2})));
  // probe/telephone/ relies on non-finite elements reading as NaN, never as a similarity.
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(cosine_similarity(std::vector<float>{1, 2}, std::vector<float>{inf, 2})));
}

}  // namespace
}  // namespace kvsweep::score
