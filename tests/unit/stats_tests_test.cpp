#include "kvsweep/stats/tests.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace kvsweep::stats {
namespace {

TEST(McNemar, ExactBinomialSmallTables) {
  // b = 1, c = 9: 2 (C(10,0) + C(10,1)) / 2^10 = 22 / 1024.
  EXPECT_DOUBLE_EQ(mcnemar_p(1, 9), 0.021484375);
  EXPECT_DOUBLE_EQ(mcnemar_p(9, 1), 0.021484375);
  // b = 3, c = 8: 2 (1 + 11 + 55 + 165) / 2048 = 29/128.
  EXPECT_DOUBLE_EQ(mcnemar_p(3, 8), 0.2265625);
  // b + c = 24, still exact: 2 * sum_{i<=6} C(24, i) / 2^24 = 190051/8388608.
  EXPECT_DOUBLE_EQ(mcnemar_p(6, 18), 190051.0 / 8388608.0);
  EXPECT_DOUBLE_EQ(mcnemar_p(0, 24), 1.0 / 8388608.0);
  EXPECT_DOUBLE_EQ(mcnemar_p(2, 0), 0.5);
  EXPECT_DOUBLE_EQ(mcnemar_p(0, 1), 1.0);
  EXPECT_DOUBLE_EQ(mcnemar_p(5, 5), 1.0);  // 2 * 638/1024 capped at 1
  EXPECT_DOUBLE_EQ(mcnemar_p(0, 0), 1.0);
}

TEST(McNemar, ChiSquareWithContinuityCorrection) {
  // b + c = 25: X^2 = (5 - 1)^2 / 25 = 0.64 → p = erfc(sqrt(0.32)).
  EXPECT_NEAR(mcnemar_p(10, 15), 0.4237107971667934, 1e-15);
  // Agresti's presidential-approval table: b = 150, c = 86, X^2 = 63^2 / 236 = 16.818.
  EXPECT_NEAR(mcnemar_p(150, 86), 4.1145622813459415e-05, 1e-17);
  EXPECT_NEAR(mcnemar_p(0, 25), 1.5866563039511896e-06, 1e-18);  // X^2 = 24^2 / 25
  EXPECT_DOUBLE_EQ(mcnemar_p(20, 20), 1.0);  // |b - c| - 1 clamped at 0
  EXPECT_DOUBLE_EQ(mcnemar_p(13, 12), 1.0);
}

TEST(Wilcoxon, ScipyDocumentationExample) {
  // scipy.stats.wilcoxon docs: d = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]
  // → statistic 24, p = 0.041259765625 (= 169/4096, checked by enumerating all 2^15 sign patterns).
  const std::vector<double> d{6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75};
  const std::vector<double> zero(d.size(), 0.0);
  const WilcoxonResult r = wilcoxon_signed_rank(d, zero);
  EXPECT_EQ(r.n, 15u);
  EXPECT_DOUBLE_EQ(r.w_plus, 96.0);
  EXPECT_DOUBLE_EQ(r.w_minus, 24.0);  // ranks 10 and 14
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.p, 0.041259765625);
  // Swapping the samples mirrors W+ and W- and keeps the two-sided p.
  const WilcoxonResult s = wilcoxon_signed_rank(zero, d);
  EXPECT_DOUBLE_EQ(s.w_plus, 24.0);
  EXPECT_DOUBLE_EQ(s.p, r.p);
}

TEST(Wilcoxon, ExactSmallCasesByHand) {
  // d = 1, 2, -3, 4, 5: W- = 3. Sign patterns of ranks 1..5 with sum <= 3: {}, {1}, {2}, {3},
  // {1,2} → 5 of 32; p = 2 * 5/32.
  const WilcoxonResult a = wilcoxon_signed_rank(std::vector<double>{1, 2, -3, 4, 5}, std::vector<double>(5, 0.0));
  EXPECT_TRUE(a.exact);
  EXPECT_DOUBLE_EQ(a.p, 0.3125);
  // Six positive differences: only the empty set has sum 0 → p = 2/64.
  const WilcoxonResult b = wilcoxon_signed_rank(std::vector<double>{11, 12, 13, 14, 15, 16}, std::vector<double>{10, 10, 10, 10, 10, 10});
  EXPECT_DOUBLE_EQ(b.w_plus, 21.0);
  EXPECT_DOUBLE_EQ(b.p, 0.03125);
  // One difference: p = 2 * 1/2 = 1.
  EXPECT_DOUBLE_EQ(wilcoxon_signed_rank(std::vector<double>{2}, std::vector<double>{1}).p, 1.0);
}

TEST(Wilcoxon, ExactAtTwentyFiveNormalAtTwentySix) {
  // d = ±1..±n with ranks 1, 3, 8, 20 negative: W- = 32.
  auto make = [](int n) {
    std::vector<double> d;
    for (int i = 1; i <= n; ++i) d.push_back((i == 1 || i == 3 || i == 8 || i == 20) ? -i : i);
    return d;
  };
  const auto d25 = make(25);
  const WilcoxonResult r25 = wilcoxon_signed_rank(d25, std::vector<double>(25, 0.0));
  EXPECT_TRUE(r25.exact);
  EXPECT_DOUBLE_EQ(r25.p, 2723.0 / 16777216.0);  // generating-function count, python3
  const auto d26 = make(26);
  const WilcoxonResult r26 = wilcoxon_signed_rank(d26, std::vector<double>(26, 0.0));
  EXPECT_FALSE(r26.exact);
  EXPECT_NEAR(r26.p, 0.0002677978549757839, 1e-15);  // z = (319 - 175.5) / sqrt(1550.25)
}

TEST(Wilcoxon, ZerosDroppedAndTiesUseCorrectedNormal) {
  // d = 0, 1, -1, 2, 4, 0, 3 → zeros dropped, n = 5; |d| = 1, 1, 2, 4, 3 has a tie → normal:
  // ranks 1.5, 1.5, 3, 5, 4; W+ = 13.5, W- = 1.5; var = 5*6*11/24 - (8 - 2)/48 = 13.625.
  const WilcoxonResult r = wilcoxon_signed_rank(std::vector<double>{3, 5, 7, 7, 9, 2, 4}, std::vector<double>{3, 4, 8, 5, 5, 2, 1});
  EXPECT_EQ(r.n, 5u);
  EXPECT_DOUBLE_EQ(r.w_plus, 13.5);
  EXPECT_DOUBLE_EQ(r.w_minus, 1.5);
  EXPECT_FALSE(r.exact);
  EXPECT_NEAR(r.p, std::erfc((13.5 - 7.5) / std::sqrt(13.625) / std::sqrt(2.0)), 1e-15);
  EXPECT_NEAR(r.p, 0.10405923452892799, 1e-15);
}

TEST(Wilcoxon, SeedGridCellsAgainstReference) {
  // Twelve avg-matched cells of seed 001 run 3 against twelve other cells standing in for a
  // reference; zeros and tied magnitudes both occur (expected p from python3, same formula).
  const std::vector<double> x{19.25, 19.38, 19.44, 18.38, 19.19, 19.44, 19.19, 19.56, 19.56, 19.44, 19.56, 19.50};
  const std::vector<double> y{19.56, 19.56, 19.44, 19.56, 19.44, 19.56, 19.31, 19.56, 19.56, 19.50, 19.50, 19.50};
  const WilcoxonResult r = wilcoxon_signed_rank(x, y);
  EXPECT_EQ(r.n, 8u);
  EXPECT_DOUBLE_EQ(r.w_plus, 1.5);
  EXPECT_DOUBLE_EQ(r.w_minus, 34.5);
  EXPECT_FALSE(r.exact);  // 19.44 - 19.50 and 19.56 - 19.50 tie in magnitude
  EXPECT_NEAR(r.p, 0.020550301646476272, 1e-15);
  // 1..30 with 3, 6, 12, 18, 24 negative: n > 25, normal approximation without ties.
  const WilcoxonResult many = wilcoxon_signed_rank(
      std::vector<double>{1, 2, -3, 4, 5, -6, 7, 8, 9, 10, 11, -12, 13, 14, 15, 16, 17, -18, 19, 20, 21, 22, 23, -24, 25, 26, 27, 28, 29, 30},
      std::vector<double>(30, 0.0));
  EXPECT_FALSE(many.exact);
  EXPECT_DOUBLE_EQ(many.w_minus, 63.0);
  EXPECT_NEAR(many.p, 0.0004896900705332653, 1e-15);
}

TEST(Wilcoxon, EdgeCases) {
  const WilcoxonResult same = wilcoxon_signed_rank(std::vector<double>{20, 20, 20}, std::vector<double>{20, 20, 20});
  EXPECT_EQ(same.n, 0u);
  EXPECT_DOUBLE_EQ(same.p, 1.0);
  EXPECT_TRUE(std::isnan(wilcoxon_signed_rank(std::vector<double>{1, 2}, std::vector<double>{1}).p));
  EXPECT_TRUE(std::isnan(wilcoxon_signed_rank(std::vector<double>{1, std::nan("")}, std::vector<double>{0, 0}).p));
}

TEST(Holm, WorkedExampleInInputOrder) {
  // Sorted: .005 (x4) = .02, .01 (x3) = .03, .03 (x2) = .06, .04 (x1) = .04 → max(.06, .04) = .06.
  const std::vector<double> p{0.01, 0.04, 0.03, 0.005};
  const std::vector<double> adj = holm_adjust(p);
  ASSERT_EQ(adj.size(), 4u);
  EXPECT_DOUBLE_EQ(adj[0], 0.03);
  EXPECT_DOUBLE_EQ(adj[1], 0.06);
  EXPECT_DOUBLE_EQ(adj[2], 0.06);
  EXPECT_DOUBLE_EQ(adj[3], 0.02);
}

TEST(Holm, CapsAtOneSkipsNanAndHandlesEmpty) {
  const std::vector<double> adj = holm_adjust(std::vector<double>{0.4, std::nan(""), 0.02, 0.9});
  // m = 3: .02 * 3 = .06, .4 * 2 = .8, .9 * 1 = .9.
  EXPECT_DOUBLE_EQ(adj[2], 0.06);
  EXPECT_DOUBLE_EQ(adj[0], 0.8);
  EXPECT_DOUBLE_EQ(adj[3], 0.9);
  EXPECT_TRUE(std::isnan(adj[1]));
  EXPECT_DOUBLE_EQ(holm_adjust(std::vector<double>{0.3, 0.6})[0], 0.6);
  EXPECT_DOUBLE_EQ(holm_adjust(std::vector<double>{0.3, 0.6})[1], 0.6);
  EXPECT_DOUBLE_EQ(holm_adjust(std::vector<double>{0.7, 0.6})[0], 1.0);
  EXPECT_TRUE(holm_adjust(std::vector<double>{}).empty());
}

TEST(Spearman, ScipyDocumentationExample) {
  // scipy.stats.spearmanr([1,2,3,4,5], [5,6,7,8,7]) → (0.8207826816681233, 0.0885870053135438).
  const SpearmanResult r = spearman(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{5, 6, 7, 8, 7});
  EXPECT_EQ(r.n, 5u);
  EXPECT_NEAR(r.rho, 0.8207826816681233, 1e-15);
  EXPECT_NEAR(r.p, 0.0885870053135438, 1e-14);
}

TEST(Spearman, PrecisionGradientByHand) {
  // bits of K (bf16 … q4_0) against seed 001 run 3's first column. Ranks of bits 6 5 4 3 2 1,
  // of the metric 2 1 4 5 3 6; sum d^2 = 62; rho = 1 - 6 * 62 / (6 * 35) = -27/35.
  std::vector<double> bits;
  for (const char* t : {"bf16", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0"}) bits.push_back(*bits_per_value(t));
  const std::vector<double> metric{19.25, 19.19, 19.44, 19.50, 19.31, 19.56};
  const SpearmanResult r = spearman(bits, metric);
  EXPECT_NEAR(r.rho, -27.0 / 35.0, 1e-15);
  EXPECT_NEAR(r.p, 0.07239650145772591, 1e-14);  // t on 4 df, A&S 26.7.4 series in python3
}

TEST(Spearman, TiesOnBothSides) {
  const std::vector<double> x{16, 16, 8.5, 8.5, 6, 6, 5.5, 5.5, 4.5, 4.5};
  const std::vector<double> y{0.01, 0.02, 0.05, 0.04, 0.09, 0.11, 0.10, 0.15, 0.31, 0.22};
  const SpearmanResult r = spearman(x, y);
  EXPECT_NEAR(r.rho, -0.9601136296387952, 1e-14);
  EXPECT_NEAR(r.p, 1.0552026892818311e-05, 1e-15);
}

TEST(Spearman, EdgeCases) {
  const SpearmanResult perfect = spearman(std::vector<double>{1, 2, 3, 4}, std::vector<double>{10, 20, 30, 40});
  EXPECT_DOUBLE_EQ(perfect.rho, 1.0);
  EXPECT_DOUBLE_EQ(perfect.p, 0.0);
  EXPECT_DOUBLE_EQ(spearman(std::vector<double>{1, 2, 3}, std::vector<double>{3, 2, 1}).rho, -1.0);
  const SpearmanResult two = spearman(std::vector<double>{1, 2}, std::vector<double>{2, 1});
  EXPECT_DOUBLE_EQ(two.rho, -1.0);
  EXPECT_TRUE(std::isnan(two.p));
  const SpearmanResult flat = spearman(std::vector<double>{1, 2, 3}, std::vector<double>{20, 20, 20});
  EXPECT_TRUE(std::isnan(flat.rho));
  EXPECT_TRUE(std::isnan(flat.p));
  EXPECT_TRUE(std::isnan(spearman(std::vector<double>{1, 2}, std::vector<double>{1, 2, 3}).rho));
  EXPECT_TRUE(std::isnan(spearman(std::vector<double>{1, std::nan(""), 3}, std::vector<double>{1, 2, 3}).rho));
  EXPECT_TRUE(std::isnan(spearman(std::vector<double>{1}, std::vector<double>{1}).rho));
}

}  // namespace
}  // namespace kvsweep::stats
