// The recall tools on the command line: corpus random-bodies, extract, sample, score.
#include <algorithm>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;
using nlohmann::json;

namespace {

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(RecallTools, RandomBodiesFileIsByteStableAndEveryFunctionIsATarget) {
  kt::TempDir dir;
  const auto a = dir / "a.py", b = dir / "b.py";
  auto r = kt::run_kvsweep({"corpus", "random-bodies", "--functions", "200", "--value-len", "24", "--seed", "42",
                            "-o", a.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The seed corpus knobs: the golden sha256 is reported and the file matches it.
  EXPECT_THAT(r.output, HasSubstr("sha256 d024b4e6d742104a9d3382553d02d5ea1a089efedb0f9a9cbd3e80b1a5704bfb"))
      << r.output;
  r = kt::run_kvsweep({"corpus", "random-bodies", "--functions", "200", "--value-len", "24", "--seed", "42"});
  ASSERT_EQ(r.exit_code, 0);
  // stdout without -o: the same bytes, then (stderr, after the corpus is flushed) the size note.
  const std::string corpus_text = file_text(a);
  ASSERT_GE(r.output.size(), corpus_text.size());
  EXPECT_EQ(r.output.substr(0, corpus_text.size()), corpus_text);
  const std::string note = r.output.substr(corpus_text.size());
  EXPECT_THAT(note, HasSubstr("200 functions, ~")) << note;
  EXPECT_THAT(note, HasSubstr("tokens (llama SPM estimate")) << note;

  r = kt::run_kvsweep({"extract", a.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json ex = json::parse(r.output);
  EXPECT_EQ(ex["language"], "python");
  ASSERT_EQ(ex["targets"].size(), 200u);
  EXPECT_EQ(ex["targets"][0]["name"], "bcdgbmtxux73pfu");
  EXPECT_EQ(ex["targets"][0]["line"], 5);  // two header lines, two blank lines, then the def
  EXPECT_EQ(ex["targets"][0]["body_start_line"], 6);

  // Two files: the second file's lines are its own; the corpus lines are shifted.
  ASSERT_EQ(kt::run_kvsweep({"corpus", "random-bodies", "--functions", "3", "--seed", "9", "-o", b.string()}).exit_code, 0);
  r = kt::run_kvsweep({"extract", a.string(), b.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json two = json::parse(r.output);
  ASSERT_EQ(two["targets"].size(), 203u);
  const json& first_b = two["targets"][200];
  EXPECT_EQ(first_b["file"], b.string());
  EXPECT_EQ(first_b["line"], 5);
  // a's header line, a's lines, the blank line after them, b's header, then b's line 6.
  const auto a_lines = static_cast<int>(std::ranges::count(file_text(a), '\n'));
  EXPECT_EQ(first_b["corpus_body_start_line"].get<int>(), 1 + a_lines + 1 + 1 + 6);
}

TEST(RecallTools, SampleSelectsKInChosenOrderAndAllWhenFewer) {
  kt::TempDir dir;
  const auto a = dir / "a.py";
  ASSERT_EQ(kt::run_kvsweep({"corpus", "random-bodies", "--functions", "40", "--seed", "3", "-o", a.string()}).exit_code,
            0);
  auto r = kt::run_kvsweep({"sample", a.string(), "--k", "16", "--seed", "42", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json s = json::parse(r.output);
  ASSERT_EQ(s["selected"].size(), 16u);
  EXPECT_EQ(s["targets"], 40);
  // The first 16 choices are one per bucket of total_lines / 16, in bucket order.
  const int total = s["total_lines"];
  for (int i = 0; i < 16; ++i) {
    const int line = s["selected"][i]["corpus_body_start_line"];
    EXPECT_EQ(std::min(15, line * 16 / total), i) << "choice " << i;
  }
  // Same seed, same selection; another seed, another one.
  EXPECT_EQ(kt::run_kvsweep({"sample", a.string(), "--k", "16", "--seed", "42", "--json"}).output, r.output);
  EXPECT_NE(kt::run_kvsweep({"sample", a.string(), "--k", "16", "--seed", "43", "--json"}).output, r.output);
  // k above the number of targets: all of them, in their order.
  r = kt::run_kvsweep({"sample", a.string(), "--k", "50", "--json"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(json::parse(r.output)["selected"].size(), 40u);
}

TEST(RecallTools, ScoreReadsACaseOnStdinAndReportsBadInputClearly) {
  const json c = {{"primary", {"a = 1", "b = 2", "c = 3"}},
                  {"bonus", {"d = 4"}},
                  {"response", "<think>\n</think>\n```python\na = 1\nzz = 9\nc = 3\nd = 4\n```\n"},
                  {"align", "difflib"},
                  {"pass_lines", 2}};
  auto r = kt::run_kvsweep_with_input({"score", "--json"}, c.dump());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json out = json::parse(r.output);
  EXPECT_EQ(out["primary_matched"], 2);
  EXPECT_EQ(out["primary_total"], 3);
  EXPECT_EQ(out["bonus_matched"], 1);
  EXPECT_EQ(out["hallucinated"], 1);
  EXPECT_EQ(out["passed"], true);

  // An array of cases gives an array of scores.
  r = kt::run_kvsweep_with_input({"score", "--json"}, json::array({c, c}).dump());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(json::parse(r.output).size(), 2u);

  r = kt::run_kvsweep_with_input({"score", "--json"}, "{\"primary\": [\"x\"], \"respons\": \"x\"}");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown key \"respons\"")) << r.output;
  r = kt::run_kvsweep_with_input({"score", "--json"}, "{\"primary\": [\"x\"], \"response\": \"x\", \"align\": \"lcsx\"}");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("\"align\" must be")) << r.output;
  r = kt::run_kvsweep_with_input({"score", "--json"}, "not json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("stdin: not JSON")) << r.output;
}

TEST(RecallTools, BadFilesAndKnobsFailWithTheReason) {
  kt::TempDir dir;
  auto r = kt::run_kvsweep({"extract", (dir / "missing.py").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("missing.py")) << r.output;
  std::ofstream(dir / "notes.txt") << "hello\n";
  r = kt::run_kvsweep({"sample", (dir / "notes.txt").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("notes.txt")) << r.output;
  r = kt::run_kvsweep({"corpus", "random-bodies", "--confusable", "--literal-tail", "30"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--literal-tail")) << r.output;
}
