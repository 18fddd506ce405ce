#include "kvsweep/corpus/sample.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace kvsweep::corpus {
namespace {

// Every expected value below was printed by CPython 3.11.7's `random` module.

TEST(PyRandom, GetrandbitsMatchesCPython) {
  PyRandom r(42);  // [random.Random(42).getrandbits(32) for _ in range(5)]
  EXPECT_EQ(r.getrandbits(32), 2746317213u);
  EXPECT_EQ(r.getrandbits(32), 478163327u);
  EXPECT_EQ(r.getrandbits(32), 107420369u);
  EXPECT_EQ(r.getrandbits(32), 3184935163u);
  EXPECT_EQ(r.getrandbits(32), 1181241943u);
}

TEST(PyRandom, WideAndNarrowGetrandbits) {
  PyRandom r(42);  // r.getrandbits(64), r.getrandbits(7), r.getrandbits(33)
  EXPECT_EQ(r.getrandbits(64), 2053695854357871005ull);
  EXPECT_EQ(r.getrandbits(7), 3u);
  EXPECT_EQ(r.getrandbits(33), 3184935163ull);
}

TEST(PyRandom, SeedZeroNegativeAndMultiWord) {
  PyRandom zero(0);
  EXPECT_EQ(zero.getrandbits(32), 3626764237u);
  EXPECT_EQ(zero.getrandbits(32), 1654615998u);
  EXPECT_EQ(zero.getrandbits(32), 3255389356u);
  PyRandom two_words((1LL << 40) + 5);
  EXPECT_EQ(two_words.getrandbits(32), 2166296868u);
  EXPECT_EQ(two_words.getrandbits(32), 2220160828u);
  EXPECT_EQ(two_words.getrandbits(32), 1153647273u);
  PyRandom negative(-42);  // abs(seed): same stream as 42
  EXPECT_EQ(negative.getrandbits(32), 2746317213u);
  PyRandom big(12345678901234567LL);
  EXPECT_EQ(big.getrandbits(32), 416727885u);
  EXPECT_EQ(big.getrandbits(32), 2561263422u);
  EXPECT_EQ(big.getrandbits(32), 4242510269u);
  EXPECT_EQ(big.getrandbits(40), 1072311376235ull);
  EXPECT_EQ(big.randbelow((1ULL << 33) + 7), 6710766743ull);
}

TEST(PyRandom, RandbelowChoiceAndShuffle) {
  PyRandom r7(7);  // [r._randbelow(1000) for _ in range(8)]
  const std::vector<std::uint64_t> below{331, 970, 154, 404, 666, 49, 74, 840};
  for (std::uint64_t want : below) EXPECT_EQ(r7.randbelow(1000), want);

  PyRandom r(42);  // [r.choice(range(10)) for _ in range(10)]
  const std::vector<std::size_t> picks{1, 0, 4, 3, 3, 2, 1, 8, 1, 9};
  for (std::size_t want : picks) EXPECT_EQ(r.choice_index(10), want);

  PyRandom s(42);  // x = list(range(20)); r.shuffle(x)
  std::vector<int> x;
  for (int i = 0; i < 20; ++i) x.push_back(i);
  s.shuffle(x);
  EXPECT_EQ(x, (std::vector<int>{19, 5, 14, 4, 9, 13, 15, 18, 6, 12, 17, 10, 1, 11, 2, 16, 7, 8, 0, 3}));
}

// 40 targets f00..f39 whose first body lines are (i*37) % 997 + 1.
std::vector<Target> forty_targets() {
  std::vector<Target> out;
  for (int i = 0; i < 40; ++i) {
    Target t;
    t.name = (i < 10 ? "f0" : "f") + std::to_string(i);
    t.body_start_line = (i * 37) % 997 + 1;
    t.start_line = t.body_start_line - 1;
    out.push_back(t);
  }
  return out;
}

std::vector<std::string> names(const std::vector<Target>& targets) {
  std::vector<std::string> out;
  for (const auto& t : targets) out.push_back(t.name);
  return out;
}

// Expected: the codeneedle stratified_sample run by python3 on the same (name, start_line) list.
TEST(StratifiedSample, EveryBucketFilled) {
  const auto ts = forty_targets();
  EXPECT_EQ(names(stratified_sample(ts, 1000, 16, 42)),
            (std::vector<std::string>{"f00", "f02", "f05", "f06", "f34", "f36", "f11", "f13", "f14", "f16", "f18",
                                      "f19", "f21", "f22", "f24", "f26"}));
  EXPECT_EQ(names(stratified_sample(ts, 1000, 16, 7)),
            (std::vector<std::string>{"f01", "f29", "f31", "f33", "f07", "f09", "f11", "f39", "f14", "f16", "f17",
                                      "f19", "f21", "f23", "f24", "f26"}));
  EXPECT_EQ(names(stratified_sample(ts, 1000, 4, 123456789012LL)),
            (std::vector<std::string>{"f03", "f12", "f14", "f23"}));
}

TEST(StratifiedSample, SparseBucketsThenShufflePops) {
  const auto ts = forty_targets();
  // total_lines 4000: all targets fall into the first quarter, so the shuffle fills the rest.
  EXPECT_EQ(names(stratified_sample(ts, 4000, 16, 42)),
            (std::vector<std::string>{"f05", "f34", "f14", "f26", "f36", "f35", "f08", "f04", "f03", "f38", "f39",
                                      "f18", "f25", "f01", "f10", "f07"}));
  EXPECT_EQ(names(stratified_sample(ts, 4000, 8, 2024)),
            (std::vector<std::string>{"f34", "f16", "f26", "f10", "f06", "f14", "f35", "f08"}));
  // total_lines 0 counts as 1 (max(1, total_lines)): every target lands in the last bucket.
  EXPECT_EQ(names(stratified_sample(ts, 0, 5, -3)),
            (std::vector<std::string>{"f34", "f25", "f22", "f04", "f12"}));
}

TEST(StratifiedSample, AtMostKTargetsKeepTheirOrder) {
  auto ts = forty_targets();
  ts.resize(10);
  std::reverse(ts.begin(), ts.end());
  const auto picked = names(stratified_sample(ts, 1000, 16, 42));
  EXPECT_EQ(picked, names(ts));  // no sort, no draw
}

TEST(StratifiedSample, TotalLinesCountsNewlinesPlusOne) {
  EXPECT_EQ(count_total_lines(""), 1);
  EXPECT_EQ(count_total_lines("a\nb\n"), 3);
  EXPECT_EQ(count_total_lines("a\nb"), 2);
}

}  // namespace
}  // namespace kvsweep::corpus
