// Curtailment of the paired binary non-inferiority test: hand-checked predictive probabilities, the
// tables whose full-run verdict is already certain, and (over many seeded completions) that a certain
// verdict is the one the full run gives.

#include <gtest/gtest.h>

#include <cmath>

#include "kvsweep/stats/curtailment.hpp"
#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::stats {
namespace {

TEST(Curtailment, BetaBinomialIsADistributionAndMatchesItsClosedForm) {
  double sum = 0.0;
  for (std::size_t x = 0; x <= 11; ++x) sum += beta_binomial_pmf(x, 11, 0.5, 5.5);
  EXPECT_NEAR(sum, 1.0, 1e-12);
  // P(X = 0) for BetaBinomial(n, a, b) is Π_{i<n} (b + i) / (a + b + i): for (2, 1, 1) it is 1/3 (uniform on 0..2).
  EXPECT_NEAR(beta_binomial_pmf(0, 2, 1.0, 1.0), 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(beta_binomial_pmf(2, 2, 1.0, 1.0), 1.0 / 3.0, 1e-12);
  EXPECT_EQ(beta_binomial_pmf(3, 2, 1.0, 1.0), 0.0);
}

TEST(Curtailment, FourLossesOfSixteenAreInferiorWhateverTheRestAnswer) {
  // The reference passes all 16 items. At 16 items, Newcombe's one-sided 95% upper bound with 4 losses
  // is −0.054 (< −0.05: inferior) and with 3 is −0.006 (Python, from the formula in noninferiority.hpp).
  const CompletionOutlook four = paired_binary_outlook(PairedTable{1, 4, 0, 0}, OpenItems{11, 0}, 0.05, 0.05);
  ASSERT_TRUE(four.certain.has_value());
  EXPECT_EQ(four.certain->verdict, Decision::inferior);
  // The bounds shown are those of the completion nearest to changing it: every item left passed.
  EXPECT_EQ(four.certain->n, 16u);
  EXPECT_NEAR(four.certain->upper, -0.054, 0.001);
  EXPECT_NEAR(four.p_decided, 1.0, 1e-12);
  // Three losses in: a fourth among the 12 left would decide, so nothing is certain yet.
  const CompletionOutlook three = paired_binary_outlook(PairedTable{1, 3, 0, 0}, OpenItems{12, 0}, 0.05, 0.05);
  EXPECT_FALSE(three.certain.has_value());
  EXPECT_GT(three.p_decided, 0.5);
}

TEST(Curtailment, AllPassedSoFarGivesTheFullRunSmallOddsOfAVerdict) {
  // 5 of 5 passed on both sides, 11 left. 16 of 16 on both is still unknown (lower −0.145), so only ≥ 4
  // losses decide: P = Σ_{x≥4} BetaBinomial(x; 11, ½, 5½) = 0.0672 (Python, from the pmf).
  const CompletionOutlook o = paired_binary_outlook(PairedTable{5, 0, 0, 0}, OpenItems{11, 0}, 0.05, 0.05);
  EXPECT_FALSE(o.certain.has_value());
  EXPECT_NEAR(o.p_decided, 0.0672, 0.0001);
  // 15 of 15 with one left: no outcome decides, so the full run's "unknown" is certain.
  const CompletionOutlook late = paired_binary_outlook(PairedTable{15, 0, 0, 0}, OpenItems{1, 0}, 0.05, 0.05);
  ASSERT_TRUE(late.certain.has_value());
  EXPECT_EQ(late.certain->verdict, Decision::unknown);
  EXPECT_EQ(late.p_decided, 0.0);
}

TEST(Curtailment, ItemsTheReferenceFailedCanOnlyHelpTheCell) {
  // The same 4 losses, but 11 items left that the reference failed: the cell can pass them all (x 0..0,
  // y 0..11) and climb to +0.44, so inferior is no longer certain; without them it is.
  const CompletionOutlook o = paired_binary_outlook(PairedTable{1, 4, 0, 0}, OpenItems{0, 11}, 0.05, 0.05);
  EXPECT_FALSE(o.certain.has_value());
  // Nothing left: the table is the full run, and its verdict is certain.
  const CompletionOutlook done = paired_binary_outlook(PairedTable{12, 4, 0, 0}, OpenItems{0, 0}, 0.05, 0.05);
  ASSERT_TRUE(done.certain.has_value());
  EXPECT_EQ(done.certain->verdict, noninferiority_paired_binary(PairedTable{12, 4, 0, 0}, 0.05, 0.05).verdict);
}

TEST(Curtailment, ACertainVerdictIsTheFullRunsOverManySeededCompletions) {
  // Random 24-item paired tables, cut after a random number of items: whenever the outlook says certain,
  // the whole table's verdict agrees (the claim curtailment rests on), and p_decided is a probability.
  SplitMix64 rng(20261123);
  int certain = 0;
  for (int rep = 0; rep < 400; ++rep) {
    const double p_ref = 0.3 + 0.6 * static_cast<double>(rng.below(100)) / 100.0;
    const double p_loss = 0.5 * static_cast<double>(rng.below(100)) / 100.0;
    PairedTable seen, full;
    OpenItems open;
    const std::size_t cut = 1 + rng.below(23);
    for (std::size_t i = 0; i < 24; ++i) {
      const bool r = static_cast<double>(rng.below(1000)) / 1000.0 < p_ref;
      const bool c = r ? static_cast<double>(rng.below(1000)) / 1000.0 >= p_loss : rng.below(2) == 0;
      (i < cut ? seen : full).add(c, r);
      if (i >= cut) ++(r ? open.reference_passed : open.reference_failed);
    }
    const PairedTable whole{seen.both + full.both, seen.only_reference + full.only_reference,
                            seen.only_cell + full.only_cell, seen.neither + full.neither};
    const CompletionOutlook o = paired_binary_outlook(seen, open, 0.05, 0.05);
    EXPECT_GE(o.p_decided, 0.0);
    EXPECT_LE(o.p_decided, 1.0 + 1e-12);
    if (!o.certain) continue;
    ++certain;
    EXPECT_EQ(o.certain->verdict, noninferiority_paired_binary(whole, 0.05, 0.05).verdict) << "rep " << rep;
  }
  EXPECT_GT(certain, 50);  // the property was exercised
}

}  // namespace
}  // namespace kvsweep::stats
