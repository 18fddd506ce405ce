// The adaptive stop of one gated metric (sweep::settle_metric): which rule settles it and when, and
// over many seeded simulated cells how often the whole procedure errs and how often it gives the
// verdict the full run gives (the rates are printed).

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "kvsweep/stats/noninferiority.hpp"
#include "kvsweep/stats/splitmix64.hpp"
#include "kvsweep/sweep/run/adaptive.hpp"

namespace kvsweep::sweep {
namespace {

const probe::MetricSpec kPassed = probe::quality("passed", probe::Direction::higher_better, probe::MetricKind::binary);
const probe::MetricSpec kMatched = probe::quality("matched", probe::Direction::higher_better, probe::MetricKind::count);

std::vector<double> repeat(std::size_t n, double v) { return std::vector<double>(n, v); }

TEST(AdaptiveSettle, ABrokenPassFailCellIsInferiorByCurtailmentAtMinItems) {
  // The reference passed all 16; the cell failed its first 5. The betting test needs 7 such items; the full
  // run's Newcombe bound is already below −0.05 whatever the 11 left answer (4 losses of 16 suffice).
  const MetricState s = settle_metric(kPassed, 0.05, repeat(5, 0.0), repeat(5, 1.0), repeat(11, 1.0), AdaptiveRule{});
  EXPECT_EQ(s.by, "curtailment");
  EXPECT_EQ(s.decided_at, 5u);
  EXPECT_EQ(s.result.verdict, stats::Decision::inferior);
  EXPECT_LT(s.result.upper, -0.05);  // the bound of the completion where every item left passes
  // Before min_items nothing is settled, however certain.
  AdaptiveRule six;
  six.min_items = 6;
  EXPECT_FALSE(settle_metric(kPassed, 0.05, repeat(5, 0.0), repeat(5, 1.0), repeat(11, 1.0), six).settled());
}

TEST(AdaptiveSettle, AGoodPassFailCellStopsForFutilityBelowTheThreshold) {
  // 5 of 5 passed on both sides, 11 left: the full run decides with predictive probability 0.0672
  // (stats_curtailment_test) — below the default 0.1, above 0.05.
  const MetricState s = settle_metric(kPassed, 0.05, repeat(5, 1.0), repeat(5, 1.0), repeat(11, 1.0), AdaptiveRule{});
  EXPECT_EQ(s.by, "futility");
  EXPECT_EQ(s.decided_at, 0u);
  EXPECT_EQ(s.result.verdict, stats::Decision::unknown);
  EXPECT_NEAR(s.p_decided, 0.0672, 0.0001);
  // 15 of 15 with one left: every outcome leaves the full run at "unknown" — futile even at futility 0.
  AdaptiveRule certain_only;
  certain_only.futility = 0.0;
  const MetricState late = settle_metric(kPassed, 0.05, repeat(15, 1.0), repeat(15, 1.0), repeat(1, 1.0), certain_only);
  EXPECT_EQ(late.by, "futility");
  EXPECT_EQ(late.p_decided, 0.0);
  EXPECT_EQ(late.result.verdict, stats::Decision::unknown);
  AdaptiveRule strict;
  strict.futility = 0.05;
  const MetricState open = settle_metric(kPassed, 0.05, repeat(5, 1.0), repeat(5, 1.0), repeat(11, 1.0), strict);
  EXPECT_FALSE(open.settled());
  EXPECT_NEAR(open.p_decided, 0.0672, 0.0001);
}

TEST(AdaptiveSettle, ACountWithEqualOutputsIsDecidedByTheNormalMixtureAndNeverFutile) {
  const MetricState s = settle_metric(kMatched, 1.0, repeat(5, 20.0), repeat(5, 20.0), repeat(11, 20.0), AdaptiveRule{});
  EXPECT_EQ(s.by, "normal mixture");
  EXPECT_EQ(s.decided_at, 5u);
  EXPECT_EQ(s.result.verdict, stats::Decision::non_inferior);
  // Spread too wide to decide at 5: a count is left open (no futility rule for it).
  const std::vector<double> cell{20, 2, 18, 5, 20}, ref = repeat(5, 20.0);
  const MetricState wide = settle_metric(kMatched, 1.0, cell, ref, repeat(11, 20.0), AdaptiveRule{});
  EXPECT_FALSE(wide.settled());
  EXPECT_LT(wide.p_decided, 0.0);
}

TEST(AdaptiveSettle, AScanFromWhereTheLastCallEndedGivesTheSameState) {
  // The runner's gate calls after every item with known_open = the pairs it has seen undecided; the
  // result must be the full scan's (here a decision at item 6, then a futility judged on everything).
  const std::vector<double> cell{1, 0, 0, 0, 1, 0, 1, 1, 1};
  const MetricState full = settle_metric(kPassed, 0.05, cell, repeat(9, 1.0), repeat(7, 1.0), AdaptiveRule{});
  const MetricState resumed = settle_metric(kPassed, 0.05, std::span(cell).first(6), repeat(6, 1.0), repeat(10, 1.0),
                                            AdaptiveRule{}, 6);
  EXPECT_EQ(resumed.by, full.by);
  EXPECT_EQ(resumed.decided_at, full.decided_at);
  // Nothing new since the last call (known_open past the end): futility is still judged.
  const MetricState again = settle_metric(kPassed, 0.05, repeat(5, 1.0), repeat(5, 1.0), repeat(11, 1.0),
                                          AdaptiveRule{}, 6);
  EXPECT_EQ(again.by, "futility");
}

TEST(AdaptiveSettle, TheFirstDecisionIsKeptWhenMoreItemsCome) {
  // Losses at items 2, 3, 4 and 6 of 16 (the reference passed all): the 4th loss makes inferior certain
  // at item 6; the items after it (all passed) do not move the decision.
  const std::vector<double> cell{1, 0, 0, 0, 1, 0, 1, 1, 1};
  const MetricState s = settle_metric(kPassed, 0.05, cell, repeat(9, 1.0), repeat(7, 1.0), AdaptiveRule{});
  EXPECT_EQ(s.by, "curtailment");
  EXPECT_EQ(s.decided_at, 6u);
  EXPECT_EQ(s.result.verdict, stats::Decision::inferior);
}

struct Outcome {
  double inferior = 0, agree = 0, mean_items = 0;
};

/// The whole adaptive procedure on one pass/fail metric over `reps` seeded cells of `n` items: the
/// reference passes with p_ref, the cell (independently) with p_cell; the cell stops at the first n ≥ 5
/// at which settle_metric settles, else runs all items and takes the full run's verdict (as recommend does).
Outcome simulate(int reps, std::size_t n, double p_ref, double p_cell) {
  stats::SplitMix64 rng(20261123);
  const auto draw = [&](double p) { return static_cast<double>(rng.below(1'000'000)) / 1e6 < p ? 1.0 : 0.0; };
  Outcome o;
  for (int rep = 0; rep < reps; ++rep) {
    std::vector<double> cell(n), ref(n);
    stats::PairedTable full;
    for (std::size_t i = 0; i < n; ++i) {
      ref[i] = draw(p_ref);
      cell[i] = draw(p_cell);
      full.add(cell[i] >= 0.5, ref[i] >= 0.5);
    }
    const stats::Decision fixed = stats::noninferiority_paired_binary(full, 0.05, 0.05).verdict;
    stats::Decision verdict = fixed;
    std::size_t items = n;
    for (std::size_t k = 5; k < n; ++k) {
      const MetricState s = settle_metric(kPassed, 0.05, std::span(cell).first(k), std::span(ref).first(k),
                                          std::span(ref).subspan(k), AdaptiveRule{});
      if (!s.settled()) continue;
      verdict = s.result.verdict;
      items = k;
      if (s.by == "curtailment") {
        EXPECT_EQ(verdict, fixed) << "rep " << rep;  // curtailment is the full run's verdict
      }
      break;
    }
    o.inferior += verdict == stats::Decision::inferior;
    o.agree += verdict == fixed;
    o.mean_items += static_cast<double>(items);
  }
  o.inferior /= reps;
  o.agree /= reps;
  o.mean_items /= reps;
  return o;
}

TEST(AdaptiveSettle, TheProcedureErrsRarelyAndMostlyGivesTheFullRunsVerdict) {
  // True difference 0 (both pass 90%): "inferior" is an error. Each claim comes from the betting test or
  // from the full run's own test, so the bound is 2 alpha; futility only turns decisions into "unknown".
  const Outcome same = simulate(1000, 16, 0.9, 0.9);
  // A broken cell (the reference passes 95%, the cell 5%) and a good one (both always pass).
  const Outcome broken = simulate(1000, 16, 0.95, 0.05);
  const Outcome good = simulate(1000, 16, 1.0, 1.0);
  std::printf("pass/fail metric, 16 items, 1000 seeded cells each, alpha 0.05, futility 0.1:\n"
              "  no difference (90%% both): inferior %.4f, same verdict as the full run %.4f, mean items %.2f\n"
              "  broken (95%% vs 5%%): inferior %.4f, same verdict %.4f, mean items %.2f\n"
              "  identical (100%%): same verdict %.4f, mean items %.2f\n",
              same.inferior, same.agree, same.mean_items, broken.inferior, broken.agree, broken.mean_items, good.agree,
              good.mean_items);
  EXPECT_LE(same.inferior, 0.10);
  EXPECT_GE(same.agree, 0.95);  // futility can turn a full run's verdict into "unknown", rarely
  EXPECT_GE(broken.inferior, 0.99);
  EXPECT_LE(broken.mean_items, 7.0);  // of 16
  EXPECT_EQ(good.agree, 1.0);
  EXPECT_EQ(good.mean_items, 5.0);
}

}  // namespace
}  // namespace kvsweep::sweep
