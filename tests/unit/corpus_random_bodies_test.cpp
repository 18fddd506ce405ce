#include "kvsweep/corpus/random_bodies.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>
#include <regex>
#include <string>
#include <unordered_set>

#include "kvsweep/core/host.hpp"
#include "kvsweep/corpus/extract.hpp"

using ::testing::HasSubstr;

namespace kvsweep::corpus {
namespace {

std::uint64_t fnv1a64(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

RandomBodiesOptions knobs(int functions, int value_len, std::uint64_t seed) {
  RandomBodiesOptions o;
  o.functions = functions;
  o.value_len = value_len;
  o.seed = seed;
  return o;
}

TEST(RandomBodies, ExactOpeningLines) {
  const std::string text = generate_random_bodies(knobs(3, 24, 42));
  const std::string opening =
      "# Incompressible recall corpus: kvsweep corpus random-bodies --functions 3 --value-len 24 --seed 42\n"
      "# Every body line binds a random identifier to a random literal: no prior can rebuild it.\n"
      "\n"
      "\n"
      "def bcdgbmtxux73pfu():\n"
      "    h3irce = \"qnvFdVxS1ETRBnGUg1SDZ0mN\"\n"
      "    xvv9w4n = \"BI0qYuAaET6w5ESzaE2bPYCx\"\n"
      "    hbhz8g7dlz = \"lfmoJvGbS4XO20bsAr4ZiUFL\"\n";
  EXPECT_EQ(text.substr(0, opening.size()), opening);
  EXPECT_TRUE(text.ends_with("    xbc_jei = \"eWCAXPucXtbBQ9LFZav7n7tQ\"\n    return None\n"));
}

TEST(RandomBodies, GoldenHashForTheSeedCorpusKnobs) {
  // --functions 200 --value-len 24 --seed 42: 207238 bytes (seed 001's corpus is ~206 KB),
  // sha256 d024b4e6d742104a9d3382553d02d5ea1a089efedb0f9a9cbd3e80b1a5704bfb (sha256sum).
  const std::string text = generate_random_bodies(knobs(200, 24, 42));
  EXPECT_EQ(text.size(), 207238u);
  EXPECT_EQ(fnv1a64(text), 0x6fd1cd2afd402ca2ULL);
  EXPECT_EQ(core::sha256_hex(text), "d024b4e6d742104a9d3382553d02d5ea1a089efedb0f9a9cbd3e80b1a5704bfb");
  EXPECT_EQ(text, generate_random_bodies(knobs(200, 24, 42)));
  EXPECT_NE(text, generate_random_bodies(knobs(200, 24, 43)));
}

TEST(RandomBodies, EveryFunctionIsARecallTargetWithWellFormedLines) {
  const RandomBodiesOptions o = knobs(50, 17, 9);
  const std::string text = generate_random_bodies(o);
  const auto targets = extract_python(text);
  ASSERT_EQ(targets.size(), 50u);
  const std::regex assignment(R"re(    [a-z][a-z0-9_]{5,13} = "[A-Za-z0-9]{17}")re");
  std::unordered_set<std::string> names;
  for (const auto& t : targets) {
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    EXPECT_GE(t.body.size(), static_cast<std::size_t>(o.min_lines + 1));
    EXPECT_LE(t.body.size(), static_cast<std::size_t>(o.max_lines + 1));
    EXPECT_EQ(t.body.back(), "    return None");
    for (std::size_t i = 0; i + 1 < t.body.size(); ++i) {
      EXPECT_TRUE(std::regex_match(t.body[i], assignment)) << t.body[i];
    }
  }
}

TEST(RandomBodies, LineCountRangeIsHonoured) {
  RandomBodiesOptions o = knobs(10, 4, 1);
  o.min_lines = 21;
  o.max_lines = 21;
  for (const auto& t : extract_python(generate_random_bodies(o))) EXPECT_EQ(t.body.size(), 22u);
}

RandomBodiesOptions confusable(int functions, std::uint64_t seed) {
  RandomBodiesOptions o = knobs(functions, 24, seed);
  o.confusable = ConfusableOptions{};
  return o;
}

TEST(ConfusableBodies, GoldenHashAndTheHeaderRegeneratesIt) {
  const std::string text = generate_random_bodies(confusable(40, 11));
  EXPECT_EQ(text.size(), 41850u);
  EXPECT_EQ(core::sha256_hex(text), "15b2a7826bbbcb0bff41bba83ef6aa251309a0ecd4e6bbec033e45f9c4e09a3f");
  EXPECT_TRUE(text.starts_with("# Incompressible recall corpus: kvsweep corpus random-bodies --functions 40 "
                               "--value-len 24 --seed 11 --confusable --family-size 8 --prefix-len 24 "
                               "--suffix-len 3 --mutate 0.5 --literal-tail 4\n"));
  EXPECT_NE(text, generate_random_bodies(knobs(40, 24, 11)));
}

TEST(ConfusableBodies, FamiliesShareAPrefixAndNearDuplicateBodies) {
  const RandomBodiesOptions o = confusable(40, 11);
  const auto targets = extract_python(generate_random_bodies(o));
  ASSERT_EQ(targets.size(), 40u);
  std::map<std::string, std::vector<const Target*>> families;
  for (const auto& t : targets) {
    ASSERT_EQ(t.name.size(), 27u) << t.name;  // 24-character stem + 3-character suffix
    families[t.name.substr(0, 24)].push_back(&t);
  }
  ASSERT_EQ(families.size(), 5u);
  std::size_t lines = 0, differing = 0;
  // Targets come in source order: count neighbours from the same family.
  std::size_t same_family_neighbours = 0;
  for (std::size_t i = 1; i < targets.size(); ++i) {
    same_family_neighbours += targets[i].name.substr(0, 24) == targets[i - 1].name.substr(0, 24);
  }
  EXPECT_LT(same_family_neighbours, 35u / 2);  // laid out one family after another it would be 35
  for (const auto& [stem, members] : families) {
    ASSERT_EQ(members.size(), 8u) << stem;
    const Target& first = *members.front();
    for (const Target* m : members) {
      ASSERT_EQ(m->body.size(), first.body.size());
      for (std::size_t i = 0; i + 1 < first.body.size(); ++i) {
        const std::string& a = first.body[i];
        const std::string& b = m->body[i];
        ASSERT_EQ(a.size(), b.size());
        // Same identifier and literal up to its last four characters; only the tail may differ.
        EXPECT_EQ(a.substr(0, a.size() - 5), b.substr(0, b.size() - 5)) << a << " vs " << b;
        if (m != members.front()) {
          ++lines;
          differing += a != b;
        }
      }
    }
  }
  // Two members differ on a line unless neither mutated it or both drew the same way: with
  // mutate 0.5 about 3/4 of lines differ from the first member.
  EXPECT_GT(differing, lines / 2);
  EXPECT_LT(differing, lines);
}

TEST(ConfusableBodies, KnobsAreChecked) {
  RandomBodiesOptions o = confusable(10, 1);
  EXPECT_EQ(check_random_bodies(o), "");
  o.confusable->literal_tail = 25;
  EXPECT_THAT(check_random_bodies(o), HasSubstr("--literal-tail"));
  o = confusable(10, 1);
  o.confusable->family_size = 1;
  EXPECT_THAT(check_random_bodies(o), HasSubstr("--family-size"));
  o = confusable(10, 1);
  o.confusable->mutate = 1.5;
  EXPECT_THAT(check_random_bodies(o), HasSubstr("--mutate"));
  EXPECT_THAT(check_random_bodies(knobs(0, 5, 1)), HasSubstr("--functions"));
}

}  // namespace
}  // namespace kvsweep::corpus

TEST(RandomBodies, TokenEstimateMatchesTheSpmTokenizersCount) {
  // 16 functions at --value-len 24, seed 42: llama-server's /tokenize on the copy model (the llama SPM
  // vocabulary, llama.cpp de3ff81) counted 12134 tokens in 16796 bytes; the estimate is a fit to such counts.
  kvsweep::corpus::RandomBodiesOptions o;
  o.functions = 16;
  o.value_len = 24;
  const std::string text = kvsweep::corpus::generate_random_bodies(o);
  ASSERT_EQ(text.size(), 16796u);
  const double estimate = static_cast<double>(kvsweep::corpus::estimate_spm_tokens(text));
  EXPECT_NEAR(estimate, 12134.0, 0.01 * 12134.0);
}
