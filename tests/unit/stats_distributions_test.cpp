#include "kvsweep/stats/distributions.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

namespace kvsweep::stats {
namespace {

TEST(IncompleteBeta, ClosedForms) {
  // I_x(a, 1) = x^a; I_x(1, b) = 1 - (1 - x)^b; I_x(1/2, 1/2) = (2/pi) asin(sqrt x).
  for (double x : {0.05, 0.3, 0.5, 0.77, 0.99}) {
    SCOPED_TRACE(x);
    EXPECT_NEAR(regularized_incomplete_beta(x, 3.5, 1.0), std::pow(x, 3.5), 1e-14);
    EXPECT_NEAR(regularized_incomplete_beta(x, 1.0, 4.0), 1.0 - std::pow(1.0 - x, 4.0), 1e-14);
    EXPECT_NEAR(regularized_incomplete_beta(x, 0.5, 0.5), 2.0 / std::numbers::pi * std::asin(std::sqrt(x)), 1e-14);
    // Symmetry I_x(a, b) = 1 - I_{1-x}(b, a).
    EXPECT_NEAR(regularized_incomplete_beta(x, 2.5, 7.0), 1.0 - regularized_incomplete_beta(1.0 - x, 7.0, 2.5), 1e-14);
  }
  EXPECT_NEAR(regularized_incomplete_beta(0.3, 0.5, 0.5), 0.36901011956554536, 1e-14);
}

TEST(IncompleteBeta, DomainEdges) {
  EXPECT_EQ(regularized_incomplete_beta(0.0, 2.0, 3.0), 0.0);
  EXPECT_EQ(regularized_incomplete_beta(1.0, 2.0, 3.0), 1.0);
  EXPECT_TRUE(std::isnan(regularized_incomplete_beta(-0.1, 2.0, 3.0)));
  EXPECT_TRUE(std::isnan(regularized_incomplete_beta(0.5, 0.0, 3.0)));
  EXPECT_TRUE(std::isnan(regularized_incomplete_beta(std::nan(""), 1.0, 1.0)));
}

TEST(StudentT, MatchesClosedFormSeries) {
  // Expected: 1 - A(t | v) from the finite series of Abramowitz & Stegun 26.7.3 / 26.7.4,
  // evaluated in python3; df = 1 is the Cauchy distribution, 1 - 2 atan(t) / pi.
  EXPECT_NEAR(student_t_two_sided_p(1.0, 1), 0.5, 1e-14);
  EXPECT_NEAR(student_t_two_sided_p(2.5, 2), 0.1296117202215108, 1e-14);
  EXPECT_NEAR(student_t_two_sided_p(2.0, 3), 0.13932596855884305, 1e-14);
  EXPECT_NEAR(student_t_two_sided_p(-2.0, 3), 0.13932596855884305, 1e-14);
  EXPECT_NEAR(student_t_two_sided_p(3.5, 5), 0.017284431785293264, 1e-14);
  EXPECT_NEAR(student_t_two_sided_p(0.3, 8), 0.7718244816824986, 1e-14);
  EXPECT_NEAR(student_t_two_sided_p(2.1, 8), 0.06893752429531219, 1e-14);
  EXPECT_NEAR(student_t_two_sided_p(10.0, 5), 0.00017094757574287467, 1e-15);
  EXPECT_NEAR(student_t_two_sided_p(6.0, 30) / 1.394276876620637e-06, 1.0, 1e-8);
  EXPECT_NEAR(student_t_two_sided_p(1.96, 1000), 0.0502731849557545, 1e-12);
  EXPECT_DOUBLE_EQ(student_t_two_sided_p(0.0, 4), 1.0);
  EXPECT_EQ(student_t_two_sided_p(std::numeric_limits<double>::infinity(), 4), 0.0);
  EXPECT_TRUE(std::isnan(student_t_two_sided_p(1.0, 0)));
}

TEST(Normal, TwoSidedAndChiSquare) {
  EXPECT_NEAR(normal_two_sided_p(1.96), 0.04999579029644087, 1e-15);
  EXPECT_NEAR(normal_two_sided_p(-1.96), 0.04999579029644087, 1e-15);
  EXPECT_DOUBLE_EQ(normal_two_sided_p(0.0), 1.0);
  // chi2(1) tail at x equals the normal two-sided tail at sqrt(x).
  EXPECT_NEAR(chi_square_1df_sf(5.6), 0.017960477526078766, 1e-15);
  EXPECT_NEAR(chi_square_1df_sf(1.96 * 1.96), normal_two_sided_p(1.96), 1e-15);
  EXPECT_EQ(chi_square_1df_sf(0.0), 1.0);
}

}  // namespace
}  // namespace kvsweep::stats
