// Anytime-valid non-inferiority: hand-checked confidence sequences, and error rates and stopping times
// on simulated paired data over many seeded repetitions (the rates are printed).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "kvsweep/stats/sequential.hpp"
#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::stats {
namespace {

double uniform(SplitMix64& rng) { return (static_cast<double>(rng.next() >> 11) + 0.5) * 0x1.0p-53; }

/// Box–Muller: one standard normal draw.
double normal(SplitMix64& rng) {
  return std::sqrt(-2.0 * std::log(uniform(rng))) * std::cos(2.0 * std::numbers::pi * uniform(rng));
}

TEST(Sequential, NormalMixtureSequenceMatchesTheBayesFactorSolvedNumerically) {
  // Half widths found by bisecting BF(μ0) = 1/alpha directly (Python, from the formula in the header):
  // d = −0.03 0.01 −0.02 0 −0.01: 0.0597730598 (the fixed one-sided t gives 0.0150748: the price of looking
  // after every item); d = 1..10: 3.7050387255.
  const std::vector<double> small{-0.03, 0.01, -0.02, 0.0, -0.01};
  const ConfidenceInterval a = normal_mixture_confidence_sequence(small, 0.05);
  EXPECT_NEAR(a.lower, -0.01 - 0.0597730598, 1e-8);
  EXPECT_NEAR(a.upper, -0.01 + 0.0597730598, 1e-8);
  std::vector<double> ramp;
  for (int i = 1; i <= 10; ++i) ramp.push_back(i);
  const ConfidenceInterval b = normal_mixture_confidence_sequence(ramp, 0.05);
  EXPECT_NEAR(b.upper - 5.5, 3.7050387255, 1e-8);
}

TEST(Sequential, IdenticalOutputsCollapseTheSequenceOnceEnoughItemsAreIn) {
  // (1 + n)^(n−1) > 400 first holds at n = 5 (4^3 = 64 < 400 at n = 4; 6^4 = 1296 at n = 5).
  const std::vector<double> zeros(5, 0.0);
  const ConfidenceInterval four = normal_mixture_confidence_sequence(std::span(zeros).first(4), 0.05);
  EXPECT_TRUE(std::isinf(four.lower) && std::isinf(four.upper));
  const ConfidenceInterval five = normal_mixture_confidence_sequence(zeros, 0.05);
  EXPECT_EQ(five.lower, 0.0);
  EXPECT_EQ(five.upper, 0.0);
  const SequentialDecision d = first_decision(zeros, 1.0, SequentialSpec{}, 2);
  EXPECT_EQ(d.result.verdict, Decision::non_inferior);
  EXPECT_EQ(d.decided_at, 5u);
  EXPECT_TRUE(std::isinf(normal_mixture_confidence_sequence(std::vector<double>{1.0}, 0.05).lower));
}

TEST(Sequential, BettingWealthIsAProductOfBoundedBets) {
  // d = 1, 1 against E[d] <= 0 on [−1, 1]: no bet on the first item; then ŷ = 1, v̂ = (4/16 + 0) / 2 = 0.125,
  // λ = clip(1 / 1.125, 0, 0.75) = 0.75, so log K = log 1.75.
  EXPECT_NEAR(betting_log_wealth_above(std::vector<double>{1.0, 1.0}, -1.0, 1.0, 0.0), std::log(1.75), 1e-12);
  EXPECT_NEAR(betting_log_wealth_below(std::vector<double>{-1.0, -1.0}, -1.0, 1.0, 0.0), std::log(1.75), 1e-12);
  // Betting against "E[d] <= 0" on differences below 0 never gains.
  EXPECT_LE(betting_log_wealth_above(std::vector<double>{-1.0, -1.0, -1.0}, -1.0, 1.0, 0.0), 0.0);
}

struct Rates {
  double inferior = 0, non_inferior = 0, mean_stop = 0;
};

/// first_decision over `reps` seeded sequences of up to `n` items drawn by `draw`.
template <class Draw>
Rates simulate(int reps, std::size_t n, double margin, const SequentialSpec& spec, std::size_t min_items, Draw draw) {
  Rates r;
  SplitMix64 rng(20261123);
  std::vector<double> d(n);
  for (int rep = 0; rep < reps; ++rep) {
    for (auto& x : d) x = draw(rng);
    const SequentialDecision s = first_decision(d, margin, spec, min_items);
    r.inferior += s.result.verdict == Decision::inferior;
    r.non_inferior += s.result.verdict == Decision::non_inferior;
    r.mean_stop += static_cast<double>(s.decided_at != 0 ? s.decided_at : n);
  }
  r.inferior /= reps;
  r.non_inferior /= reps;
  r.mean_stop /= reps;
  return r;
}

TEST(Sequential, NoDifferenceIsCalledInferiorAtMostAlphaOfTheTimeAlthoughCheckedAfterEveryItem) {
  // The hardest case for the error rate: margin 0, so a true difference of 0 sits on the boundary and
  // "inferior" is a type I error. Checked after every item up to 100.
  const SequentialSpec normal_spec{};
  const Rates g = simulate(1000, 100, 0.0, normal_spec, 2, [](SplitMix64& rng) { return normal(rng); });
  SequentialSpec binary_spec;
  binary_spec.bounded = true;
  // Paired pass/fail: reference and cell each pass with probability 0.7, independently: E[d] = 0.
  const Rates b = simulate(1000, 100, 0.0, binary_spec, 2, [](SplitMix64& rng) {
    return (uniform(rng) < 0.7 ? 1.0 : 0.0) - (uniform(rng) < 0.7 ? 1.0 : 0.0);
  });
  std::printf("true difference 0, margin 0, alpha 0.05, 1000 repetitions of up to 100 items, checked after each:\n"
              "  normal mixture: inferior %.4f, non-inferior %.4f\n  betting (binary): inferior %.4f, non-inferior %.4f\n",
              g.inferior, g.non_inferior, b.inferior, b.non_inferior);
  EXPECT_LE(g.inferior, 0.05);
  EXPECT_LE(g.non_inferior, 0.05);
  EXPECT_LE(b.inferior, 0.05);
  EXPECT_LE(b.non_inferior, 0.05);
  // With the usual margin on the good side of it, "inferior" is rarer still.
  const Rates m = simulate(1000, 100, 0.05, binary_spec, 2, [](SplitMix64& rng) {
    return (uniform(rng) < 0.7 ? 1.0 : 0.0) - (uniform(rng) < 0.7 ? 1.0 : 0.0);
  });
  std::printf("  betting (binary), margin 0.05: inferior %.4f\n", m.inferior);
  EXPECT_LE(m.inferior, 0.05);
}

TEST(Sequential, ALargeDifferenceStopsEarly) {
  const SequentialSpec normal_spec{};
  // Cell worse by 1 sd-unit 2 (mean −1, sd 0.5), margin 0.1: decided inferior within a handful of items.
  const Rates g = simulate(500, 16, 0.1, normal_spec, 2, [](SplitMix64& rng) { return -1.0 + 0.5 * normal(rng); });
  SequentialSpec binary_spec;
  binary_spec.bounded = true;
  // The reference passes, the cell fails (a broken K cache): d = −1 on every item.
  const Rates b = simulate(1, 16, 0.05, binary_spec, 2, [](SplitMix64&) { return -1.0; });
  std::printf("large difference, 16 items at most: normal mixture inferior %.3f, mean stop %.2f items; "
              "betting inferior %.0f at %.0f items\n", g.inferior, g.mean_stop, b.inferior, b.mean_stop);
  EXPECT_GE(g.inferior, 0.99);
  EXPECT_LE(g.mean_stop, 8.0);
  EXPECT_EQ(b.inferior, 1.0);
  EXPECT_LE(b.mean_stop, 10.0);
}

}  // namespace
}  // namespace kvsweep::stats
