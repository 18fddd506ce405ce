// Metric roles: quality (ground truth), distance (how far the distribution moved,
// gated on a threshold), change (how the output differs: reported, gated only when named). The shipped
// probes declare them; recommend gates quality + thresholded distance by default, so a reworded answer
// is not a loss while a distance beyond its threshold is.

#include <algorithm>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/probe/complete/complete.hpp"
#include "kvsweep/probe/divergence/divergence.hpp"
#include "kvsweep/probe/kld/kld.hpp"
#include "kvsweep/probe/margin.hpp"
#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/report/analysis/recommend.hpp"
#include "kvsweep/report/analysis/recommend_headline.hpp"
#include "kvsweep/report/input/run_data.hpp"

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;
namespace probe = kvsweep::probe;
namespace report = kvsweep::report;

namespace {

const probe::MetricSpec& spec(const std::vector<probe::MetricSpec>& specs, const std::string& name) {
  const probe::MetricSpec* found = probe::find_metric(specs, name);
  EXPECT_NE(found, nullptr) << name;
  static const probe::MetricSpec none;
  return found ? *found : none;
}

TEST(MetricRoles, TheShippedProbesDeclareChangesDistancesAndTheirThresholds) {
  const probe::ConfigSource site{{"t.json", "probes[0]"}, "."};
  const auto complete = probe::make_complete_probe({{"kind", "complete"}}, site)->metrics();
  for (const char* name : {"match_reference", "common_prefix_chars"}) {
    EXPECT_EQ(spec(complete, name).role, probe::MetricRole::change) << name;
    EXPECT_TRUE(spec(complete, name).is_judged()) << name;
    EXPECT_FALSE(spec(complete, name).gated_by_default()) << name;
  }
  const auto divergence = probe::make_divergence_probe({{"kind", "divergence"}}, site)->metrics();
  EXPECT_EQ(spec(divergence, "diverged").role, probe::MetricRole::change);
  EXPECT_EQ(spec(divergence, "flip_index").role, probe::MetricRole::change);
  EXPECT_EQ(spec(divergence, "mean_kl").role, probe::MetricRole::distance);
  EXPECT_EQ(spec(divergence, "mean_kl").threshold, std::optional<double>(probe::kMeanKlThreshold));
  EXPECT_TRUE(spec(divergence, "mean_kl").gated_by_default());
  EXPECT_EQ(spec(divergence, "max_kl").role, probe::MetricRole::distance);
  EXPECT_FALSE(spec(divergence, "max_kl").gated_by_default()) << "a distance without a threshold is reported";
  const auto kld =
      probe::make_kld_probe({{"kind", "kld"}, {"corpus", {{"random_bodies", {{"functions", 2}}}}}}, site)->metrics();
  EXPECT_EQ(spec(kld, "mean_kld").threshold, std::optional<double>(0.01));
  EXPECT_EQ(spec(kld, "kld_p999").threshold, std::optional<double>(0.1));
  EXPECT_TRUE(spec(kld, "kld_p999").gated_by_default());
  EXPECT_EQ(spec(kld, "same_top_p").role, probe::MetricRole::distance);
  EXPECT_FALSE(spec(kld, "same_top_p").gated_by_default());
  EXPECT_FALSE(spec(kld, "mean_kld_se").is_judged());
}

TEST(MetricRoles, TheDeclarationCarriesTheThresholdAndItIsTheDefaultMargin) {
  const probe::MetricSpec kl = probe::distance("mean_kl", probe::Direction::lower_better, probe::MetricKind::continuous,
                                               0.01, "why");
  const json j = probe::to_json(kl);
  EXPECT_EQ(j["role"], "distance");
  EXPECT_EQ(j["threshold"], 0.01);
  const auto back = probe::metric_spec_from_json(j, "m");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->role, probe::MetricRole::distance);
  EXPECT_EQ(back->threshold, std::optional<double>(0.01));
  EXPECT_EQ(back->threshold_why, "why");
  const probe::Margin margin = probe::default_margin(*back, std::nullopt, {});
  EXPECT_DOUBLE_EQ(margin.value, 0.01);
  EXPECT_THAT(margin.basis, HasSubstr("distance threshold"));
  json bad = j;
  bad["threshold"] = "small";
  EXPECT_FALSE(probe::metric_spec_from_json(bad, "m"));
  EXPECT_EQ(probe::parse_metric_role("change"), std::optional<probe::MetricRole>(probe::MetricRole::change));
}

json cell(const std::string& k) {
  return {{"model", "m"}, {"type_k", k}, {"type_v", "f16"}, {"id", "m-" + k + "-f16"}, {"is_reference", k == "f16"},
          {"outcome", "ok"}, {"effective", {{"type_k", k}, {"type_v", "f16"}, {"k_mib", k == "f16" ? 2.0 : 1.0}, {"v_mib", 2.0}}}};
}

json record(const std::string& k, const std::string& probe_name, int item, json metrics) {
  return {{"cell", {{"model", "m"}, {"type_k", k}, {"type_v", "f16"}}}, {"probe", probe_name}, {"kind", probe_name},
          {"item", "i" + std::to_string(item)}, {"status", "ok"}, {"metrics", std::move(metrics)}};
}

/// complete (change) and a mean KL (distance, threshold 0.01) on 12 items: q8_0 rewords a third of the
/// answers and moves the KL by ~0.003; q4_0 rewords them all and moves it by ~0.03.
report::RunData run(bool with_distance) {
  json probes = {{{"name", "complete"}, {"kind", "complete"},
                  {"metrics", {probe::to_json(probe::change("match_reference", probe::Direction::higher_better,
                                                            probe::MetricKind::binary))}}}};
  if (with_distance)
    probes.push_back({{"name", "divergence"}, {"kind", "divergence"},
                      {"metrics", {probe::to_json(probe::distance("mean_kl", probe::Direction::lower_better,
                                                                  probe::MetricKind::continuous, 0.01, "test"))}}});
  json manifest = {{"name", "roles"}, {"n_ctx", 4096}, {"probes", probes},
                   {"cells", {cell("f16"), cell("q8_0"), cell("q4_0")}},
                   {"config", {{"grid", {{"k", {"f16", "q8_0", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}}}}}};
  std::vector<json> records;
  for (int i = 0; i < 12; ++i) {
    records.push_back(record("f16", "complete", i, {{"match_reference", 1}}));
    records.push_back(record("q8_0", "complete", i, {{"match_reference", i % 3 == 0 ? 0 : 1}}));
    records.push_back(record("q4_0", "complete", i, {{"match_reference", 0}}));
    if (!with_distance) continue;
    records.push_back(record("f16", "divergence", i, {{"mean_kl", 0.0}}));
    records.push_back(record("q8_0", "divergence", i, {{"mean_kl", 0.003 + 0.0002 * (i % 4)}}));
    records.push_back(record("q4_0", "divergence", i, {{"mean_kl", 0.03 + 0.002 * (i % 4)}}));
  }
  auto data = report::RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data) << (data ? "" : data.error().message);
  return std::move(*data);
}

TEST(MetricRoles, AChangeIsNotALossButADistanceBeyondItsThresholdIs) {
  const report::RunData data = run(true);
  const auto rec = report::recommend(data);
  ASSERT_EQ(rec.models.size(), 1u);
  const auto headline = report::recommend_headline(rec.models[0]);
  ASSERT_EQ(headline.kind, report::RecommendHeadline::Kind::recommended);
  EXPECT_EQ(data.cells()[*headline.cell].type_k, "q8_0") << "a reworded answer with the distribution in its threshold";
  const auto words = report::explain(headline, data);
  EXPECT_EQ(words.verdict, "Recommended: -ctk q8_0 -ctv f16");
  for (const auto& cv : rec.models[0].cells) {
    for (const auto& v : cv.metrics) EXPECT_NE(v.metric, "match_reference") << "a change gates only when named";
    if (data.cells()[cv.cell].type_k == "q4_0") {
      EXPECT_GT(cv.inferior, 0u) << "KL 0.03 is past its threshold 0.01";
    }
  }
}

TEST(MetricRoles, AChangeGatesWhenNamed) {
  const report::RunData data = run(true);
  report::RecommendOptions options;
  options.gate = {"complete.match_reference", "divergence.mean_kl"};
  const auto headline = report::recommend_headline(report::recommend(data, options).models[0]);
  EXPECT_NE(headline.kind, report::RecommendHeadline::Kind::recommended) << "q8_0 rewords a third of its answers";
}

TEST(MetricRoles, ARunThatMeasuredOnlyChangesAdvisesNothing) {
  const report::RunData data = run(false);
  const auto headline = report::recommend_headline(report::recommend(data).models[0]);
  ASSERT_EQ(headline.kind, report::RecommendHeadline::Kind::nothing_gated);
  const auto words = report::explain(headline, data);
  EXPECT_EQ(words.verdict, "Nothing gated");
  EXPECT_THAT(words.sentence, HasSubstr("complete.match_reference"));
  EXPECT_THAT(words.sentence, HasSubstr("--gate"));
  EXPECT_THAT(words.sentence, Not(HasSubstr("keep")));
}

// The headline says what kind of evidence its answer rests on: a change is worded as a change
// ("changes the wording of 4 of 12 answers"), a quality metric as a loss or none ("no loss on the answer
// key", "loses 6 of 12 answers on the answer key"), a distance as its value against its threshold ("KLD
// 0.0033 within 0.01"). The words follow the role, so a metric without a rule is worded all the same.

/// 12 prompts with an answer key (`quality_name`, 0/1, quality) and their wording against f16's
/// (match_reference, change), and a mean KLD (distance, threshold 0.01). f16 answers 10 right. q8_0
/// rewords 4 answers, keeps every right one and moves the KLD by ~0.003; q4_0 rewords all, gets 6 of
/// f16's right answers wrong and moves the KLD by ~0.07.
report::RunData evidence_run(const std::string& quality_name, const std::vector<std::string>& k_types) {
  json probes = {{{"name", "complete"}, {"kind", "complete"},
                  {"metrics", {probe::to_json(probe::change("match_reference", probe::Direction::higher_better,
                                                            probe::MetricKind::binary)),
                               probe::to_json(probe::quality(quality_name, probe::Direction::higher_better,
                                                             probe::MetricKind::binary)),
                               probe::to_json(probe::diagnostic("predicted_n", probe::MetricKind::count))}}},
                 {{"name", "kld"}, {"kind", "kld"},
                  {"metrics", {probe::to_json(probe::distance("mean_kld", probe::Direction::lower_better,
                                                              probe::MetricKind::continuous, 0.01, "test"))}}}};
  json cells = json::array(), ks = json::array();
  for (const auto& k : k_types) {
    cells.push_back(cell(k));
    ks.push_back(k);
  }
  json manifest = {{"name", "evidence"}, {"n_ctx", 4096}, {"probes", probes}, {"cells", cells},
                   {"config", {{"grid", {{"k", ks}, {"v", {"f16"}}, {"reference", "f16/f16"}}}}}};
  std::vector<json> records;
  for (int i = 0; i < 12; ++i) {
    const int right = i < 10 ? 1 : 0;
    for (const auto& k : k_types) {
      const bool q8 = k == "q8_0", q4 = k == "q4_0";
      const int same = k == "f16" ? 1 : q8 ? (i % 3 == 0 ? 0 : 1) : 0;
      const int key = q4 && i < 6 ? 0 : right;
      records.push_back(record(k, "complete", i, {{"match_reference", same}, {quality_name, key}, {"predicted_n", 20}}));
      const double kld = k == "f16" ? 0.0 : q8 ? 0.003 + 0.0002 * (i % 4) : 0.07 + 0.002 * (i % 4);
      records.push_back(record(k, "kld", i, {{"mean_kld", kld}}));
    }
  }
  auto data = report::RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data) << (data ? "" : data.error().message);
  return std::move(*data);
}

/// The headline's words; the answer key at margin 0.3, which 12 agreeing items can prove (0.05 needs ~52).
report::HeadlineWords words_of(const report::RunData& data, report::RecommendHeadline* out = nullptr) {
  report::RecommendOptions options;
  options.margins = {{"correct", 0.3}, {"exact_answer", 0.3}};
  const auto rec = report::recommend(data, options);
  EXPECT_EQ(rec.models.size(), 1u);
  const auto headline = report::recommend_headline(rec.models.at(0));
  if (out) *out = headline;
  return report::explain(headline, data);
}

TEST(HeadlineEvidence, ARecommendationSaysTheWordingChangedWithoutLossAndTheDistanceWithinItsThreshold) {
  const report::RunData data = evidence_run("correct", {"f16", "q8_0", "q4_0"});
  report::RecommendHeadline h;
  const auto words = words_of(data, &h);
  ASSERT_EQ(h.kind, report::RecommendHeadline::Kind::recommended);
  EXPECT_EQ(words.verdict, "Recommended: -ctk q8_0 -ctv f16");
  EXPECT_THAT(words.sentence,
              HasSubstr("q8_0/f16: changes the wording of 4 of 12 answers; no loss on the answer key; KLD 0.0033 within 0.01."));
  EXPECT_THAT(words.sentence, Not(HasSubstr("predicted_n"))) << "a diagnostic is not evidence";
}

TEST(HeadlineEvidence, RecommendJsonCarriesTheEvidenceAsValues) {
  const report::RunData data = evidence_run("correct", {"f16", "q8_0", "q4_0"});
  report::RecommendOptions options;
  options.margins = {{"correct", 0.3}};
  const auto j = report::recommend_json(data, report::recommend(data, options));
  const auto& headline = j["models"][0]["headline"];
  EXPECT_EQ(headline["evidence_cell"], "m-q8_0-f16");
  std::map<std::string, nlohmann::ordered_json> by_metric;
  for (const auto& e : headline["evidence"]) by_metric[e["metric"].get<std::string>()] = e;
  ASSERT_TRUE(by_metric.contains("correct") && by_metric.contains("match_reference") && by_metric.contains("mean_kld"))
      << headline.dump();
  EXPECT_EQ(by_metric["correct"]["role"], "quality");
  EXPECT_EQ(by_metric["correct"]["worse"], 0);
  EXPECT_EQ(by_metric["correct"]["words"], "no loss on the answer key");
  EXPECT_EQ(by_metric["match_reference"]["role"], "change");
  EXPECT_EQ(by_metric["match_reference"]["worse"], 4);
  EXPECT_FALSE(by_metric["match_reference"].contains("verdict")) << "a change does not gate by default";
  EXPECT_EQ(by_metric["mean_kld"]["margin"], 0.01);
  EXPECT_EQ(by_metric["mean_kld"]["verdict"], "non-inferior");
}

TEST(HeadlineEvidence, WhenEveryOtherCellIsWorseTheLossIsCountedAndTheDistanceIsOverItsThreshold) {
  const report::RunData data = evidence_run("correct", {"f16", "q4_0"});
  report::RecommendHeadline h;
  const auto words = words_of(data, &h);
  ASSERT_EQ(h.kind, report::RecommendHeadline::Kind::inferior);
  EXPECT_THAT(words.sentence, HasSubstr("q4_0/f16: changes the wording of 12 of 12 answers; loses 6 of 12 answers on the "
                                        "answer key; KLD 0.073 over 0.01."));
}

TEST(HeadlineEvidence, AMetricWithoutAWordingRuleIsWordedByItsRole) {
  const report::RunData data = evidence_run("exact_answer", {"f16", "q8_0"});
  const auto words = words_of(data);
  EXPECT_THAT(words.sentence, HasSubstr("no loss on complete.exact_answer"));
  EXPECT_THAT(words.sentence, HasSubstr("changes the wording of 4 of 12 answers"));
}

TEST(HeadlineEvidence, AMetricTwoProbesEmitIsSaidWithItsProbe) {
  const report::RunData data = evidence_run("correct", {"f16", "q8_0"});
  report::RecommendHeadline h = report::recommend_headline(report::recommend(data).models.at(0));
  ASSERT_TRUE(h.evidence_cell.has_value());
  const auto wording = std::find_if(h.evidence.begin(), h.evidence.end(),
                                    [](const report::Evidence& e) { return e.metric == "match_reference"; });
  ASSERT_NE(wording, h.evidence.end());
  report::Evidence own = *wording;  // complete's match_reference, as a second probe's
  own.probe = "own-prompts";
  own.n = 6;
  own.worse = 2;
  h.evidence.push_back(own);
  const std::string sentence = report::explain(h, data).sentence;
  EXPECT_THAT(sentence, HasSubstr("changes the wording of 4 of 12 answers (complete)")) << sentence;
  EXPECT_THAT(sentence, HasSubstr("changes the wording of 2 of 6 answers (own-prompts)")) << sentence;
  EXPECT_THAT(sentence, HasSubstr("no loss on the answer key;")) << "a metric one probe emits is said by its label alone";
}

TEST(HeadlineEvidence, EachRoleHasItsOwnWords) {
  report::Evidence e;
  e.probe = "p";
  e.metric = "correct";
  e.kind = probe::MetricKind::binary;
  e.n = 40;
  e.role = probe::MetricRole::quality;
  e.verdict = kvsweep::stats::Decision::unknown;
  e.worse = 4;
  e.better = 1;
  EXPECT_EQ(report::evidence_text(e), "loses 4 of 40 answers on the answer key, gains 1");
  e.worse = 0;
  EXPECT_EQ(report::evidence_text(e), "no loss on the answer key (gains 1 of 40 answers)");
  e.metric = "match_reference";
  e.role = probe::MetricRole::change;
  EXPECT_EQ(report::evidence_text(e), "keeps the wording of all 40 answers");
  e.role = probe::MetricRole::diagnostic;
  EXPECT_EQ(report::evidence_text(e), "") << "diagnostics and costs are not evidence";
  // A continuous quality metric: its mean change, and no loss only when it did not fall.
  e = {};
  e.probe = "telephone";
  e.metric = "final_similarity";
  e.role = probe::MetricRole::quality;
  e.n = 16;
  e.cell_mean = 0.55;
  e.reference_mean = 0.60;
  e.change = -0.05;
  e.verdict = kvsweep::stats::Decision::unknown;
  EXPECT_EQ(report::evidence_text(e), "loses 0.050 on telephone's final similarity to the original (mean of 16 chains)");
  e.verdict.reset();
  EXPECT_EQ(report::evidence_text(e), "") << "a quality metric that does not gate is not what the verdict rests on";
  // A distance that gates: its value against its margin.
  e = {};
  e.metric = "max_kl";
  e.role = probe::MetricRole::distance;
  e.n = 3;
  e.cell_mean = 0.4;
  e.change = -0.4;
  e.margin = 0.5;
  EXPECT_EQ(report::evidence_text(e), "") << "a distance that does not gate is reported, not evidence";
  e.verdict = kvsweep::stats::Decision::non_inferior;
  EXPECT_EQ(report::evidence_text(e), "max KL per token 0.4 within 0.5");
  e.cell_mean = 0.7;
  e.change = -0.7;
  EXPECT_EQ(report::evidence_text(e), "max KL per token 0.7 over 0.5");
}

}  // namespace
