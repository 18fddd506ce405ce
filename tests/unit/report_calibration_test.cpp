// The calibration line: the probe's declared calibration metric on the reference cell.
#include "kvsweep/report/analysis/calibration.hpp"
#include "kvsweep/report/analysis/copy_calibration.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report_fixture.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kvsweep::report {
namespace {

using testing::kManifest;
using testing::make_record;

/// The fixture's manifest with the telephone probe declaring final_similarity in [lo, hi].
RunData with_calibration(double lo, double hi, const std::vector<double>& reference_values) {
  auto manifest = nlohmann::json::parse(kManifest);
  manifest["probes"][1]["calibration"] = {{"metric", "final_similarity"}, {"lo", lo}, {"hi", hi}};
  std::vector<nlohmann::json> records;
  int i = 0;
  for (double v : reference_values) {
    records.push_back(make_record("f16", "f16", "telephone", "c" + std::to_string(i++), "ok",
                                  {{"final_similarity", v}, {"mean_similarity", v}, {"empty_hops", 0}}));
  }
  auto data = RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data) << data.error().message;
  return std::move(*data);
}

std::vector<std::string> lines_for(const RunData& data) {
  return calibration_lines(data, summarize_run(data), data.probes()[1]);
}

TEST(Calibration, FlooredReferenceIsAWarningThatNamesTheProbe) {
  const RunData data = with_calibration(0, 20, {0, 0, 0});
  const auto lines = lines_for(data);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("final_similarity is 0.00 of 0–20 on the reference cell tiny/f16/f16 (3 items)"))
      << lines[0];
  EXPECT_THAT(lines[0], HasSubstr("Warning: floored — telephone is at 0.00/20")) << lines[0];
  EXPECT_THAT(lines[0], HasSubstr("cannot show a difference"));
}

TEST(Calibration, MidRangeIsPlainAndCeilingIsSaturated) {
  const auto mid = lines_for(with_calibration(0, 1, {0.5, 0.6}));
  ASSERT_EQ(mid.size(), 1u);
  EXPECT_THAT(mid[0], Not(HasSubstr("Warning"))) << mid[0];
  EXPECT_THAT(mid[0], Not(HasSubstr("Saturated"))) << mid[0];
  const auto top = lines_for(with_calibration(0, 1, {1.0, 0.99}));
  ASSERT_EQ(top.size(), 1u);
  EXPECT_THAT(top[0], HasSubstr("Saturated")) << top[0];
}

TEST(Calibration, NoDeclarationNoLineAndNoReferenceItemsSaysSo) {
  auto data = RunData::from(nlohmann::json::parse(kManifest), std::vector<probe::Record>{});
  ASSERT_TRUE(data);
  EXPECT_TRUE(calibration_lines(*data, summarize_run(*data), data->probes()[1]).empty());
  const auto none = lines_for(with_calibration(0, 1, {}));
  ASSERT_EQ(none.size(), 1u);
  EXPECT_THAT(none[0], HasSubstr("no ok item on the reference cell")) << none[0];
}

/// A recall probe (primary_matched of 20) on the fixture's model, marked as kvsweep's copy model
/// or not, its reference cell recalling `values` lines at a prompt of `tokens` tokens.
RunData recall_run(bool copy_model, const std::vector<double>& values, int tokens) {
  auto manifest = nlohmann::json::parse(kManifest);
  if (copy_model) manifest["models"][0]["copy_model"] = {{"match_length", 6}};
  manifest["probes"][1] = {{"name", "recall"},
                           {"kind", "recall"},
                           {"items", values.size()},
                           {"metrics", {{{"name", "primary_matched"}, {"higher_is_better", true}}}},
                           {"calibration", {{"metric", "primary_matched"}, {"lo", 0}, {"hi", 20}}}};
  manifest["config"]["probes"][1] = {{"kind", "recall"},
                                     {"corpus", {{"random_bodies", {{"functions", 190}, {"value_len", 4}}}}}};
  std::vector<nlohmann::json> records;
  int i = 0;
  for (double v : values) {
    records.push_back(make_record("f16", "f16", "recall", "f" + std::to_string(i++), "ok", {{"primary_matched", v}},
                                  {{"text", ""}, {"corpus_tokens", tokens - 100}, {"question_tokens", 100}}));
  }
  auto data = RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data) << data.error().message;
  return std::move(*data);
}

TEST(Calibration, ACopyModelReferenceBelowTheCeilingSaysTheCorpusIsTooAmbiguous) {
  // 7.88 of 20 at 127K tokens: cuda.md's value_len-4 grid.
  const std::vector<double> low = {8, 8, 8, 8, 8, 8, 8, 7.04};
  const RunData data = recall_run(true, low, 127300);
  const auto lines = calibration_lines(data, summarize_run(data), data.probes()[1]);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0],
              HasSubstr("Warning: the reference recalls 7.88 of 20 lines: this corpus is too ambiguous for the "
                        "copy model at 127K tokens; use longer values (corpus.random_bodies.value_len"))
      << lines[0];
  // Any other model may sit where it sits: no such warning.
  const RunData other = recall_run(false, low, 127300);
  const auto plain = calibration_lines(other, summarize_run(other), other.probes()[1]);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_THAT(plain[0], Not(HasSubstr("ambiguous"))) << plain[0];
  // At the ceiling (19.38 of 20: seed 001's value_len 24 at 127K) the copy model is calibrated.
  const RunData good = recall_run(true, {19, 20, 19, 20, 19, 20, 19, 19.04}, 127300);
  const auto fine = calibration_lines(good, summarize_run(good), good.probes()[1]);
  ASSERT_EQ(fine.size(), 1u);
  EXPECT_THAT(fine[0], Not(HasSubstr("ambiguous"))) << fine[0];
  EXPECT_EQ(tokens_label(127300), "127K");
  EXPECT_EQ(tokens_label(900), "900");
}

/// The fixture's manifest with the telephone probe replaced by a kld probe whose reference reads the
/// corpus at `ppl` and records a noise floor `floor` (null: none recorded).
RunData with_kld(double ppl, nlohmann::json floor) {
  auto manifest = nlohmann::json::parse(kManifest);
  manifest["probes"][1] = {{"name", "kld"}, {"kind", "kld"}, {"items", 1},
                           {"metrics", {{{"name", "mean_kld"}, {"higher_is_better", false}},
                                        {{"name", "ppl_base"}, {"higher_is_better", false}}}}};
  std::vector<nlohmann::json> records = {
      make_record("f16", "f16", "kld", "kld", "ok",
                  {{"mean_kld", 0}, {"ppl_base", ppl}, {"noise_mean_kld", floor}, {"noise_kld_p999", 0.022}}),
      make_record("f16", "q4_0", "kld", "kld", "ok",
                  {{"mean_kld", 0.05}, {"ppl_base", ppl}, {"noise_mean_kld", nullptr}, {"noise_kld_p999", nullptr}})};
  auto data = RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data) << data.error().message;
  return std::move(*data);
}

TEST(Calibration, KldFlagsANearRandomCorpusAndShowsTheNoiseFloorBesideTheThreshold) {
  const auto code = lines_for(with_kld(118, 0.0035));
  ASSERT_EQ(code.size(), 2u);
  EXPECT_THAT(code[0], HasSubstr("Corpus (tiny): perplexity 118.0 under the reference cell. Warning: near-random"));
  EXPECT_THAT(code[0], HasSubstr("same_top_p mostly measures how ties break"));
  EXPECT_THAT(code[1], HasSubstr("Noise floor (tiny): the reference against its own logits with another micro-batch "
                                 "gives mean KLD 0.0035, 99.9 % 0.022"));
  EXPECT_THAT(code[1], HasSubstr("thresholds are mean KLD 0.01 and 99.9 % 0.1"));
  const auto english = lines_for(with_kld(22.9, nullptr));
  ASSERT_EQ(english.size(), 1u);  // natural text, and an older run without a floor
  EXPECT_THAT(english[0], HasSubstr("perplexity 22.9"));
  EXPECT_THAT(english[0], Not(HasSubstr("Warning")));
}

}  // namespace
}  // namespace kvsweep::report
