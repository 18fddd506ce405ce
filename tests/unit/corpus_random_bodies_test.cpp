#include "kvsweep/corpus/random_bodies.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <string>
#include <unordered_set>

#include "kvsweep/corpus/extract.hpp"

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
  EXPECT_TRUE(text.ends_with("    ubec0hnzo = \"RYqcDyaRtaLUr5YmCOQ5CK1U\"\n    return None\n"));
}

TEST(RandomBodies, GoldenHashForTheSeedCorpusKnobs) {
  // --functions 200 --value-len 24 --seed 42: 292211 bytes,
  // sha256 463b091ce2244272ce5ab1b61c668fe028076250ae5d1a7f69dc4cc36fb9fc54 (sha256sum).
  const std::string text = generate_random_bodies(knobs(200, 24, 42));
  EXPECT_EQ(text.size(), 292211u);
  EXPECT_EQ(fnv1a64(text), 0x74d4b90f11125fbaULL);
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

}  // namespace
}  // namespace kvsweep::corpus
