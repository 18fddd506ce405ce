// Ground truth for `complete`: a prompt's `expect` read from a config or a
// prompts file, scored as `correct` (quality, gated by default) beside the change metrics.

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/complete/complete.hpp"
#include "kvsweep/probe/divergence/divergence.hpp"
#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/score/answer_key.hpp"
#include "fake_api.hpp"
#include "metric_declarations.hpp"
#include "temp_file.hpp"

namespace kvsweep {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

score::Expect expect_of(const json& j) {
  auto e = score::parse_expect(j);
  EXPECT_TRUE(e) << j.dump();
  return e ? *e : score::Expect{};
}

TEST(AnswerKey, AnExpectedTextIsFoundAsAWholeWordWhateverItsCase) {
  const auto paris = expect_of("Paris");
  EXPECT_TRUE(score::answer_correct("The capital of France is paris.", paris));
  EXPECT_TRUE(score::answer_correct("PARIS", paris));
  EXPECT_FALSE(score::answer_correct("Parisian cafés", paris));
  EXPECT_FALSE(score::answer_correct("It is Lyon.", paris));
  const auto n391 = expect_of("391");
  EXPECT_TRUE(score::answer_correct("17 × 23 = 391.", n391));
  EXPECT_FALSE(score::answer_correct("17 × 23 = 3910", n391));
  EXPECT_FALSE(score::answer_correct("17 × 23 = 1391", n391));
  // A boundary is asked for only where the expected text ends in a word character.
  EXPECT_TRUE(score::answer_correct("It is 3.5 km", expect_of("3.5")));
  EXPECT_FALSE(score::answer_correct("It is 3.55 km", expect_of("3.5")));
  EXPECT_TRUE(score::answer_correct("the U.S.A", expect_of("U.S.")));
  EXPECT_FALSE(score::answer_correct("", paris));
}

TEST(AnswerKey, AnyOfSeveralAnswersOrAPatternMayBeExpected) {
  const auto eight = expect_of(json{"8", "eight"});
  EXPECT_TRUE(score::answer_correct("A spider has eight legs.", eight));
  EXPECT_TRUE(score::answer_correct("8 legs", eight));
  EXPECT_FALSE(score::answer_correct("six legs", eight));
  const auto no = expect_of(json{{"pattern", "^\\W*no\\b"}});
  EXPECT_TRUE(score::answer_correct("No, a whale is a mammal.", no));
  EXPECT_FALSE(score::answer_correct("Yes, no doubt about it.", no));
  EXPECT_EQ(no.to_json(), (json{{"pattern", "^\\W*no\\b"}}));
  EXPECT_EQ(eight.to_json(), (json{"8", "eight"}));
  EXPECT_EQ(expect_of("x").to_json(), json("x"));
}

TEST(AnswerKey, AnExpectThatIsNoAnswerSaysWhatIsWrong) {
  for (const json& bad : {json(""), json(3), json::array(), json{"a", 2}, json{{"pattern", ""}},
                          json{{"pattern", "a"}, {"any", "b"}}, json{{"regex", "a"}}}) {
    auto e = score::parse_expect(bad);
    ASSERT_FALSE(e) << bad.dump();
    EXPECT_THAT(e.error(), HasSubstr("expect: ")) << bad.dump();
  }
  auto e = score::parse_expect(json{{"pattern", "(unclosed"}});
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error(), HasSubstr("pattern \"(unclosed\" is not a regular expression"));
}

probe::ConfigSource site(const std::filesystem::path& dir = "/nonexistent") {
  return {{"t.json", "probes[0]"}, dir};
}

std::string make_error(const json& cfg, const std::filesystem::path& dir = "/nonexistent") {
  try {
    probe::make_complete_probe(cfg, site(dir));
  } catch (const core::FatalError& e) {
    return e.message;
  }
  return "accepted";
}

TEST(AnswerKey, CompleteScoresEachAnswerAgainstItsExpectOnEveryCellAsQuality) {
  const json cfg = {{"kind", "complete"},
                    {"prompts", {json{{"prompt", "Capital of France?"}, {"expect", "Paris"}}, "Tell a story."}}};
  auto probe = probe::make_complete_probe(cfg, site());
  const auto items = probe->items();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].spec, (json{{"prompt", "Capital of France?"}, {"expect", "Paris"}}));
  // A prompt without `expect` is the item it always was (resume keys and specs unchanged).
  EXPECT_EQ(items[1].spec, (json{{"prompt", "Tell a story."}}));
  const auto metrics = probe->metrics();  // find_metric points into it
  const auto* correct = probe::find_metric(metrics, "correct");
  ASSERT_NE(correct, nullptr);
  EXPECT_EQ(correct->role, probe::MetricRole::quality);
  EXPECT_EQ(correct->direction, probe::Direction::higher_better);
  EXPECT_EQ(correct->kind, probe::MetricKind::binary);
  EXPECT_TRUE(correct->is_judged());

  std::string content = "It is Paris.";
  testing::FakeApi api([&content](const server::CompletionRequest&, int) {
    server::CompletionResponse out;
    out.content = content;
    return out;
  });
  probe::CellInfo ref;
  ref.is_reference = true;
  probe::Context ref_ctx{api, ref};
  auto right = probe->run(items[0], ref_ctx);
  ASSERT_TRUE(right) << right.error().message;
  probe::testing::expect_declarations_match(*probe, right->metrics);
  EXPECT_EQ(right->metrics["correct"], 1);
  auto unscored = probe->run(items[1], ref_ctx);
  ASSERT_TRUE(unscored);
  EXPECT_TRUE(unscored->metrics["correct"].is_null()) << unscored->metrics.dump();

  // On a cell: wrong against the key, and a change against the reference, each in its own metric.
  probe::Record rec;
  rec.item = items[0].key;
  rec.status = probe::ItemStatus::ok;
  rec.response = right->response;
  const std::vector<probe::Record> reference = {rec};
  content = "It is Lyon.";
  probe::CellInfo cell;
  probe::Context ctx{api, cell, nullptr, &reference};
  auto wrong = probe->run(items[0], ctx);
  ASSERT_TRUE(wrong) << wrong.error().message;
  EXPECT_EQ(wrong->metrics["correct"], 0);
  EXPECT_EQ(wrong->metrics["match_reference"], 0);
  // A rewording that keeps the answer: a change, no loss.
  content = "Paris is the capital.";
  auto reworded = probe->run(items[0], ctx);
  ASSERT_TRUE(reworded);
  EXPECT_EQ(reworded->metrics["correct"], 1);
  EXPECT_EQ(reworded->metrics["match_reference"], 0);
}

TEST(AnswerKey, WithoutAnyExpectCompleteDeclaresNoQualityMetric) {
  auto probe = probe::make_complete_probe({{"kind", "complete"}, {"prompts", {"Once upon a time"}}}, site());
  EXPECT_EQ(probe::find_metric(probe->metrics(), "correct"), nullptr);
  for (const auto& m : probe->metrics()) EXPECT_NE(m.role, probe::MetricRole::quality) << m.name;
}

TEST(AnswerKey, ABadExpectInAConfigOrAPromptsFileIsRefusedWhereItIs) {
  EXPECT_THAT(make_error({{"kind", "complete"}, {"prompts", {json{{"prompt", "q"}, {"expect", 3}}}}}),
              HasSubstr("t.json: probes[0].prompts[0].expect: expect: expected an answer"));
  EXPECT_THAT(make_error({{"kind", "complete"}, {"prompts", {json{{"prompt", "q"}, {"expct", "a"}}}}}),
              HasSubstr("probes[0].prompts[0]: unknown key 'expct'"));
  EXPECT_THAT(make_error({{"kind", "complete"}, {"prompts", {json{{"expect", "a"}}}}}),
              HasSubstr("probes[0].prompts[0].prompt: missing"));
  EXPECT_THAT(make_error({{"kind", "complete"}, {"prompts", {3}}}), HasSubstr("probes[0].prompts[0]: expected a prompt"));

  const auto dir = testing::temp_file("-key");
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "key.jsonl") << "{\"prompt\": \"2+2?\", \"expect\": \"4\"}\n\n"
                                      "{\"prompt\": \"3+3?\", \"expect\": {\"pattern\": \"[\"}}\n";
  EXPECT_THAT(make_error({{"kind", "complete"}, {"prompts_file", "key.jsonl"}}, dir),
              HasSubstr("key.jsonl:3: expect: pattern \"[\" is not a regular expression"));
  std::ofstream(dir / "key.jsonl") << "{\"prompt\": \"2+2?\", \"expect\": [\"4\", \"four\"]}\n";
  auto probe = probe::make_complete_probe({{"kind", "complete"}, {"prompts_file", "key.jsonl"}}, site(dir));
  EXPECT_EQ(probe->items().at(0).spec["expect"], (json{"4", "four"}));
  // divergence reads the same file for its prompts alone: its items carry no expect.
  auto divergence = probe::make_divergence_probe({{"kind", "divergence"}, {"prompts_file", "key.jsonl"}}, site(dir));
  EXPECT_EQ(divergence->items().at(0).spec, (json{{"prompt", "2+2?"}}));
  std::filesystem::remove_all(dir);
}

TEST(AnswerKey, LimitKeepsTheFirstPromptsSoAShippedKeyRunsAtTheSizeAConfigAffords) {
  const json prompts = {"a", json{{"prompt", "b"}, {"expect", "x"}}, "c"};
  auto two = probe::make_complete_probe({{"kind", "complete"}, {"prompts", prompts}, {"limit", 2}}, site());
  const auto items = two->items();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].key, "p1");
  EXPECT_EQ(items[1].spec["expect"], "x");
  // Raising the limit adds items after those a run already holds: the same keys, the same specs.
  auto three = probe::make_complete_probe({{"kind", "complete"}, {"prompts", prompts}, {"limit", 9}}, site());
  ASSERT_EQ(three->items().size(), 3u);
  EXPECT_EQ(three->items()[1].spec, items[1].spec);
  EXPECT_THAT(make_error({{"kind", "complete"}, {"prompts", prompts}, {"limit", 0}}), HasSubstr("probes[0].limit"));
}

}  // namespace
}  // namespace kvsweep
