#include "kvsweep/score/token_divergence.hpp"

#include <limits>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace kvsweep::score {
namespace {

using Top = std::vector<IdLogprob>;

IdLogprob tok(std::int32_t id, double prob) { return {id, std::log(prob)}; }

void expect_near(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-12) << "bucket " << i;
}

TEST(Divergence, KnownKlSameIds) {
  // P = (0.5, 0.3 | tail 0.2), Q = (0.4, 0.4 | tail 0.2). By hand:
  // KL = 0.5 ln(0.5/0.4) + 0.3 ln(0.3/0.4) + 0.2 ln 1 = 0.111571776 - 0.086304622 = 0.025267154
  const Top p{tok(1, 0.5), tok(2, 0.3)};
  const Top q{tok(1, 0.4), tok(2, 0.4)};
  EXPECT_NEAR(kl_divergence(p, q), 0.5 * std::log(1.25) + 0.3 * std::log(0.75), 1e-12);
  EXPECT_NEAR(kl_divergence(p, q), 0.025267153921570612, 1e-12);
  // M = (0.45, 0.35, 0.2): JS = (0.0064350 + 0.0062994) / 2.
  EXPECT_NEAR(js_divergence(p, q), 0.006367198333995731, 1e-12);
  EXPECT_NEAR(js_divergence(q, p), js_divergence(p, q), 1e-15);
  EXPECT_GT(kl_divergence(q, p), 0.0);
  EXPECT_NE(kl_divergence(q, p), kl_divergence(p, q));  // KL is not symmetric
}

TEST(Divergence, MissingIdsShareTheirSidesTail) {
  // P lists {1: .6, 2: .3}, tail .1; Q lists {1: .6, 3: .2}, tail .2.
  // Buckets (1, 2, 3, tail): P misses id 3 -> .1/2 each to id 3 and the tail: (.6, .3, .05, .05);
  // Q misses id 2 -> .2/2 each: (.6, .1, .2, .1).
  const Top p{tok(2, 0.3), tok(1, 0.6)};
  const Top q{tok(1, 0.6), tok(3, 0.2)};
  const BucketedPair b = bucket_top_n(p, q);
  EXPECT_EQ(b.ids, (std::vector<std::int32_t>{1, 2, 3}));
  expect_near(b.p, {0.6, 0.3, 0.05, 0.05});
  expect_near(b.q, {0.6, 0.1, 0.2, 0.1});
  // KL = .3 ln 3 + .05 ln .25 + .05 ln .5
  EXPECT_NEAR(kl_divergence(p, q), 0.3 * std::log(3.0) + 0.05 * std::log(0.25) + 0.05 * std::log(0.5), 1e-12);
  EXPECT_NEAR(kl_divergence(p, q), 0.2256116095164411, 1e-12);
  EXPECT_NEAR(js_divergence(p, q), 0.05450297773583192, 1e-12);
}

TEST(Divergence, AMissingIdGetsNoMoreThanTheSmallestListedProbability) {
  // P lists {1: .5, 2: .1}, tail .4; it misses id 3: the even share .2 is capped at .1 (an
  // unlisted token ranks below every listed one), the tail keeps .3 -> (.5, .1, .1, .3).
  // Q lists {1: .5, 3: .3}, tail .2; it misses id 2: share min(.1, .3) = .1 -> (.5, .1, .3, .1).
  const Top p{tok(1, 0.5), tok(2, 0.1)};
  const Top q{tok(1, 0.5), tok(3, 0.3)};
  const BucketedPair b = bucket_top_n(p, q);
  expect_near(b.p, {0.5, 0.1, 0.1, 0.3});
  expect_near(b.q, {0.5, 0.1, 0.3, 0.1});
  // KL = .1 ln(1/3) + .3 ln 3 = .2 ln 3
  EXPECT_NEAR(kl_divergence(p, q), 0.2 * std::log(3.0), 1e-9);
}

TEST(Divergence, EmptyTailIsFlooredNotInfinite) {
  // Q puts all its mass on id 1, so its tail is 0 and gets the 1e-10 floor:
  // KL = .9 ln(.9 (1 + 1e-10)) + .1 ln(.1 (1 + 1e-10) / 1e-10) ~= -0.0948245 + 2.0723266.
  const Top p{tok(1, 0.9)};
  const Top q{IdLogprob{1, 0.0}};
  EXPECT_NEAR(kl_divergence(p, q), 1.9775021197025973, 1e-9);
  EXPECT_NEAR(js_divergence(p, q), 0.035973755596077885, 1e-12);
  // A larger floor is honoured: Q's tail becomes 1e-4 / (1 + 1e-4).
  const double floor = 1e-4;
  const double q_tail = floor / (1.0 + floor);
  EXPECT_NEAR(kl_divergence(p, q, floor), 0.9 * std::log(0.9 / (1.0 - q_tail)) + 0.1 * std::log(0.1 / q_tail), 1e-12);
}

TEST(Divergence, TopNSummingPastOneLeavesNoTail) {
  // .7 + .31 = 1.01: P's tail is clamped to 0, floored, and P renormalised by 1.01 + 1e-10.
  const Top p{tok(1, 0.7), tok(2, 0.31)};
  const Top q{tok(1, 0.7), tok(2, 0.2)};
  const BucketedPair b = bucket_top_n(p, q);
  const double total = 1.01 + kProbabilityFloor;
  expect_near(b.p, {0.7 / total, 0.31 / total, kProbabilityFloor / total});
  EXPECT_GT(b.p.back(), 0.0);
  EXPECT_NEAR(kl_divergence(p, q), 0.12456355667443592, 1e-9);
  EXPECT_NEAR(js_divergence(p, q), 0.04034748101694724, 1e-10);
}

TEST(Divergence, IdenticalIsZeroDisjointJsIsLn2) {
  const Top p{tok(5, 0.5), tok(9, 0.25)};
  EXPECT_EQ(kl_divergence(p, p), 0.0);
  EXPECT_EQ(js_divergence(p, p), 0.0);
  EXPECT_EQ(kl_divergence(Top{}, Top{}), 0.0);  // both all-tail
  const Top one{IdLogprob{1, 0.0}};
  const Top two{IdLogprob{2, 0.0}};
  EXPECT_NEAR(js_divergence(one, two), std::log(2.0), 1e-8);
  EXPECT_LE(js_divergence(one, two), std::log(2.0));
  EXPECT_NEAR(kl_divergence(one, two), 23.025850923032703, 1e-6);  // ~ ln(1e10), the floor's bound
}

TEST(Divergence, DuplicateIdsAreSummedAndNanPropagates) {
  const Top dup{tok(1, 0.25), tok(1, 0.25), tok(2, 0.3)};
  const Top merged{tok(1, 0.5), tok(2, 0.3)};
  const Top q{tok(1, 0.4), tok(2, 0.4)};
  EXPECT_NEAR(kl_divergence(dup, q), kl_divergence(merged, q), 1e-15);
  const Top bad{IdLogprob{1, std::nan("")}};
  EXPECT_TRUE(std::isnan(kl_divergence(bad, q)));
  EXPECT_TRUE(std::isnan(js_divergence(q, bad)));
}

TEST(Divergence, ImpossibleLogprobsAreNanNeverZero) {
  // exp(1e308) is inf; max(0, NaN) is 0: 1e308 or +50 on both sides used to score KL 0, "identical".
  const Top q{tok(1, 0.4), tok(2, 0.4)};
  for (const double bad : {1e308, 50.0, std::numeric_limits<double>::infinity()}) {
    const Top impossible{IdLogprob{1, bad}, IdLogprob{2, -1.0}};
    EXPECT_TRUE(std::isnan(kl_divergence(impossible, impossible))) << bad;
    EXPECT_TRUE(std::isnan(kl_divergence(q, impossible))) << bad;
    EXPECT_TRUE(std::isnan(js_divergence(impossible, q))) << bad;
  }
}

TEST(Divergence, FlipIndex) {
  using Ids = std::vector<std::int32_t>;
  EXPECT_EQ(flip_index(Ids{1, 2, 3}, Ids{1, 2, 3}), std::nullopt);
  EXPECT_EQ(flip_index(Ids{}, Ids{}), std::nullopt);
  EXPECT_EQ(flip_index(Ids{1, 2, 3}, Ids{1, 9, 3}), 1u);
  EXPECT_EQ(flip_index(Ids{7, 2}, Ids{1, 2}), 0u);
  EXPECT_EQ(flip_index(Ids{1, 2}, Ids{1, 2, 3, 4}), 2u);  // one run stopped early
  EXPECT_EQ(flip_index(Ids{1, 2, 3}, Ids{1, 2}), 2u);
  EXPECT_EQ(flip_index(Ids{}, Ids{4}), 0u);
  EXPECT_EQ(flip_index(Ids{1, 5, 6}, Ids{1, 2}), 1u);  // a real flip before the shorter end
}

}  // namespace
}  // namespace kvsweep::score
