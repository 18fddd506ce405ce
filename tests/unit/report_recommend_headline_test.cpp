// The plan's power line, the heatmap colour scales and recommend's headline on
// a 4-item run whose cells all answered like the reference.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/report/output/brief.hpp"
#include "kvsweep/report/figures/colour_scale.hpp"
#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/analysis/plan_power.hpp"
#include "kvsweep/report/analysis/recommend_headline.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::EndsWith;
using ::testing::Not;

namespace kvsweep::report {
namespace {

using nlohmann::json;
using probe::Direction;
using probe::MetricKind;

TEST(PlanPower, FourAgreeingItemsCannotProveAPassRateWithinFivePoints) {
  // Newcombe's bound of an all-concordant table of n items is −z²/(n + z²): z = 1.645, n = 4 → −0.4035.
  const auto spec = probe::quality("passed", Direction::higher_better, MetricKind::binary);
  const SettleOutlook o = settle_outlook(spec, 0.05, 4);
  EXPECT_FALSE(o.settles);
  ASSERT_TRUE(o.items_needed.has_value());
  EXPECT_EQ(*o.items_needed, 52u);  // z²/(n + z²) < 0.05 ⇔ n > 19 z² = 51.4
  EXPECT_DOUBLE_EQ(o.margin_settling, 0.41);
  const std::string line = settle_line(o);
  EXPECT_THAT(line,
              HasSubstr("passed (binary, margin 0.05): needs ~52 items even if every item agrees; this plan has 4 — it "
                        "will stay unknown"))
      << line;
  EXPECT_THAT(line, HasSubstr("recommend --margin passed=0.41")) << line;

  const SettleOutlook enough = settle_outlook(spec, 0.05, 60);
  EXPECT_TRUE(enough.settles);
  EXPECT_FALSE(enough.items_needed.has_value());
  EXPECT_THAT(settle_line(enough), HasSubstr("can settle: this plan has 60"));
  // A wider margin needs fewer: 0.41 is proof at 4 items.
  EXPECT_TRUE(settle_outlook(spec, 0.41, 4).settles);
}

TEST(PlanPower, CountsSettleFromTwoAgreeingItems) {
  const auto spec = probe::quality("primary_matched", Direction::higher_better, MetricKind::count);
  EXPECT_TRUE(settle_outlook(spec, 1.0, 2).settles);
  const SettleOutlook one = settle_outlook(spec, 1.0, 1);
  EXPECT_FALSE(one.settles);
  EXPECT_THAT(settle_line(one), HasSubstr("needs at least 2 items; this plan has 1")) << settle_line(one);
}

TEST(ColourScale, ADeclaredRangeAnchorsTheColours) {
  // recall's primary_matched 0–20: a quarter of a line apart is a sliver of the map, not all of it.
  const auto spec = probe::quality("primary_matched", Direction::higher_better, MetricKind::count);
  const std::vector<double> means{17.25, 17.5};
  const ColourScale s = heatmap_scale(spec, std::pair{0.0, 20.0}, 17.25, means, 1.0);
  EXPECT_EQ(s.basis, ColourScale::Basis::range);
  EXPECT_DOUBLE_EQ(s.t(17.25), 17.25 / 20);
  EXPECT_NEAR(s.t(17.5) - s.t(17.25), 0.0125, 1e-12);
  EXPECT_DOUBLE_EQ(s.t(25.0), 1.0);  // clamped
  EXPECT_EQ(s.end_labels(1), (std::pair<std::string, std::string>{"20.0", "0.0"}));
  // Lower is better: the low end is the better (top) end.
  const auto halluc = probe::quality("hallucinated", Direction::lower_better, MetricKind::binary);
  const ColourScale h = heatmap_scale(halluc, std::pair{0.0, 1.0}, 0.0, means, 0.05);
  EXPECT_DOUBLE_EQ(h.t(0.0), 1.0);
  EXPECT_DOUBLE_EQ(h.t(1.0), 0.0);
  EXPECT_EQ(h.end_labels(0).first, "0");
}

TEST(ColourScale, WithoutARangeTheScaleIsSymmetricAroundTheReference) {
  const auto spec = probe::quality("similarity", Direction::higher_better, MetricKind::continuous);
  const std::vector<double> means{0.90, 0.89, 0.80};
  const ColourScale s = heatmap_scale(spec, std::nullopt, 0.90, means, 0.02);
  EXPECT_EQ(s.basis, ColourScale::Basis::delta);
  EXPECT_DOUBLE_EQ(s.t(0.90), 0.5);  // the reference sits mid-map
  EXPECT_NEAR(s.t(0.80), 0.0, 1e-12);
  EXPECT_NEAR(s.t(1.00), 1.0, 1e-12);  // as far above as the worst is below
  EXPECT_EQ(s.end_labels(2), (std::pair<std::string, std::string>{"Δ +0.10", "Δ -0.10"}));
  // Differences inside the margin never span the whole map.
  const ColourScale small = heatmap_scale(spec, std::nullopt, 0.90, std::vector<double>{0.90, 0.895}, 0.02);
  EXPECT_DOUBLE_EQ(small.hi, 0.02);
  EXPECT_NEAR(small.t(0.895), 0.375, 1e-12);
}

TEST(ColourScale, DiagnosticsAreNeutral) {
  const auto cut = probe::diagnostic("cut", MetricKind::binary);
  const ColourScale s = heatmap_scale(cut, std::pair{0.0, 1.0}, 0.0, std::vector<double>{0.0, 0.5}, 0.05);
  EXPECT_EQ(s.basis, ColourScale::Basis::neutral);
  EXPECT_EQ(s.colour(0.0), "#f0f0f0");
  EXPECT_EQ(s.colour(1.0), "#8c8c8c");
  EXPECT_EQ(s.colour_at(0.5).substr(0, 1), "#");
  EXPECT_THAT(s.caption(), HasSubstr("not better or worse"));
}

json cell(const std::string& k, double k_mib) {
  return {{"model", "m"}, {"type_k", k}, {"type_v", "f16"}, {"id", "m-" + k + "-f16"}, {"is_reference", k == "f16"},
          {"outcome", "ok"}, {"effective", {{"type_k", k}, {"type_v", "f16"}, {"k_mib", k_mib}, {"v_mib", 2.0},
                                            {"kv_mib", k_mib + 2.0}}}};
}

/// K f16 (reference), q8_0, q4_0, V f16; 4 recall items. `q8_lines`, `q4_lines`: those cells'
/// primary_matched per item (the reference's: 20, 17, 12, 20).
RunData recall_run(const std::vector<int>& q8_lines, const std::vector<int>& q4_lines,
                   std::optional<std::size_t> items_max = std::nullopt, json gate = nullptr) {
  json manifest = {
      {"name", "newcomer"},
      {"n_ctx", 4096},
      {"probes",
       {{{"name", "recall"}, {"kind", "recall"}, {"calibration", {{"metric", "primary_matched"}, {"lo", 0}, {"hi", 20}}},
         {"metrics", {{{"name", "primary_matched"}, {"direction", "higher"}, {"kind", "count"}, {"role", "quality"}},
                      {{"name", "passed"}, {"direction", "higher"}, {"kind", "binary"}, {"role", "quality"}}}}}}},
      {"cells", {cell("f16", 2), cell("q8_0", 1.0625), cell("q4_0", 0.5625)}},
      {"config", {{"grid", {{"k", {"f16", "q8_0", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}}}}}};
  if (items_max) manifest["probes"][0]["items_max"] = *items_max;
  if (!gate.is_null()) manifest["config"]["probes"] = {{{"name", "recall"}, {"kind", "recall"}, {"gate", gate}}};
  const std::vector<int> lines{20, 17, 12, 20};
  std::vector<json> records;
  for (const std::string k : {"f16", "q8_0", "q4_0"}) {
    for (int i = 0; i < 4; ++i) {
      const auto at = static_cast<std::size_t>(i);
      const int matched = k == "q4_0" ? q4_lines[at] : k == "q8_0" ? q8_lines[at] : lines[at];
      records.push_back({{"cell", {{"model", "m"}, {"type_k", k}, {"type_v", "f16"}}}, {"probe", "recall"},
                         {"kind", "recall"}, {"item", "f" + std::to_string(i)}, {"status", "ok"},
                         {"metrics", {{"primary_matched", matched}, {"passed", matched >= 8 ? 1 : 0}}}});
    }
  }
  auto data = RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data.has_value());
  return std::move(*data);
}

TEST(RecommendHeadline, IdenticalAnswersOnFourItemsAreSeenAsNoDifferenceNotProof) {
  const RunData data = recall_run({20, 17, 12, 20}, {20, 17, 12, 20});
  const Recommendation rec = recommend(data);
  ASSERT_EQ(rec.models.size(), 1u);
  EXPECT_FALSE(rec.models[0].recommended.has_value());
  const RecommendHeadline h = recommend_headline(rec.models[0]);
  EXPECT_EQ(h.kind, RecommendHeadline::Kind::not_proven);
  // The analysis names the cell and what a proof needs as values; explain() words them.
  ASSERT_TRUE(h.cell.has_value());
  EXPECT_EQ(data.cells()[*h.cell].type_k, "q4_0");
  EXPECT_TRUE(h.no_difference);
  ASSERT_EQ(h.unsettled.size(), 1u);
  EXPECT_EQ(h.unsettled[0].metric, "recall.passed");
  EXPECT_EQ(h.unsettled[0].items_needed, std::optional<std::size_t>(52));
  EXPECT_DOUBLE_EQ(h.unsettled[0].settling_margin, 0.41);
  const HeadlineWords w = explain(h, data);
  EXPECT_EQ(w.verdict, "No difference seen, not enough items to prove it");
  // The cheapest cell without an observed difference, what a proof needs, and the margin that settles now.
  EXPECT_EQ(w.sentence.rfind("-ctk q4_0 -ctv f16 (the cheapest such cell) answered like f16/f16", 0), 0u) << w.sentence;
  EXPECT_THAT(w.sentence, HasSubstr("recall.passed ~52 items at margin 0.05")) << w.sentence;
  EXPECT_THAT(w.sentence, HasSubstr("--margin recall.passed=0.41")) << w.sentence;
  // The margin it names does settle it.
  RecommendOptions wider;
  wider.margins["recall.passed"] = 0.41;
  const Recommendation settled = recommend(data, wider);
  ASSERT_TRUE(settled.models[0].recommended.has_value());
  EXPECT_EQ(explain(recommend_headline(settled.models[0]), data).verdict, "Recommended: -ctk q4_0 -ctv f16");
  EXPECT_THAT(recommend_markdown(data, rec), HasSubstr("**No difference seen, not enough items to prove it**"));
  EXPECT_EQ(recommend_json(data, rec)["models"][0]["headline"]["verdict"], w.verdict);
  EXPECT_EQ(recommend_json(data, rec)["models"][0]["headline"]["sentence"], w.sentence);
}

TEST(RecommendHeadline, AWiderMarginSaysWhatItPromisesAndARecommendationAtOneSaysSo) {
  const RunData data = recall_run({20, 17, 12, 20}, {20, 17, 12, 20});
  const std::string sentence = explain(recommend_headline(recommend(data).models[0]), data).sentence;
  EXPECT_THAT(sentence, HasSubstr("Run more items. A wider margin would settle it now, promising less: --margin "
                                  "recall.passed=0.41 (a cell up to 41 points of pass rate below f16/f16 passes)."))
      << sentence;
  RecommendOptions wider;
  wider.margins["recall.passed"] = 0.41;
  const HeadlineWords w = explain(recommend_headline(recommend(data, wider).models[0]), data);
  EXPECT_EQ(w.verdict, "Recommended: -ctk q4_0 -ctv f16");
  EXPECT_THAT(w.sentence, HasSubstr("at margins you set (a wider margin is a weaker promise): recall.passed 0.41: a "
                                    "cell up to 41 points of pass rate below f16/f16 passes"))
      << w.sentence;
  // At the default margins a recommendation says nothing of margins.
  const RunData agreeing = recall_run({20, 17, 12, 20}, {20, 17, 12, 20}, std::nullopt, json{"primary_matched"});
  EXPECT_THAT(explain(recommend_headline(recommend(agreeing).models[0]), agreeing).sentence,
              Not(HasSubstr("margins you set")));
}

TEST(RecommendHeadline, ADifferenceSeenNamesWhatIsNotSettledYetAndAdvisesMoreItemsWhereTheyHelp) {
  // q8_0/q8_0 of the newcomer's run: below on distances proven within their thresholds, while the
  // answer key (no change over 6 items) is what keeps the answer open — more items settle it.
  const RunData data = recall_run({20, 17, 12, 20}, {20, 17, 12, 20});
  RecommendHeadline h = recommend_headline(recommend(data).models[0]);
  h.kind = RecommendHeadline::Kind::difference_seen;
  h.below = {{"kld.mean_kld", -0.0038, 4, stats::Decision::non_inferior, 0.01, std::nullopt, std::nullopt}};
  h.unsettled = {{"answer-key.correct", 52, 0.05, 0.3, MetricKind::binary, 150},
                 {"toolcall.all_correct", 52, 0.05, 0.3, MetricKind::binary, std::nullopt},
                 {"toolcall.parsed", 52, 0.05, 0.3, MetricKind::binary, std::nullopt},
                 {"toolcall.right_tool", 60, 0.05, 0.3, MetricKind::binary, std::nullopt}};
  const HeadlineWords w = explain(h, data);
  // A probe's metrics that need as many items at the same margin are said once.
  EXPECT_THAT(w.sentence, HasSubstr("Not settled yet: answer-key.correct (~52 items would settle it at margin 0.05); "
                                    "toolcall.{all_correct, parsed} (~52 items would settle each at margin 0.05); "
                                    "toolcall.right_tool (~60 items would settle it at margin 0.05)."))
      << w.sentence;
  EXPECT_THAT(w.sentence, HasSubstr("Until more items settle it keep -ctk f16 -ctv f16")) << w.sentence;
  EXPECT_THAT(w.sentence, Not(HasSubstr("cannot settle"))) << w.sentence;
}

TEST(RecommendHeadline, MoreItemsThanTheCorpusHoldsAreNeverAdvised) {
  const RunData data = recall_run({20, 17, 12, 20}, {20, 17, 12, 20}, 18);
  const std::string sentence = explain(recommend_headline(recommend(data).models[0]), data).sentence;
  EXPECT_THAT(sentence, HasSubstr("recall.passed ~52 items at margin 0.05, more than the 18 functions its corpus holds"))
      << sentence;
  EXPECT_THAT(sentence, HasSubstr("More items cannot settle it with this corpus: give it more functions")) << sentence;
  EXPECT_THAT(sentence, Not(HasSubstr("Run more items"))) << sentence;
  // A difference seen that only more items than the corpus holds could settle: never "until more items".
  const RunData lost = recall_run({19, 16, 12, 19}, {19, 16, 12, 19}, 4);
  const HeadlineWords seen = explain(recommend_headline(recommend(lost).models[0]), lost);
  EXPECT_EQ(seen.verdict, "A difference seen, not proven");
  EXPECT_THAT(seen.sentence, HasSubstr("more than the 4 functions its corpus holds")) << seen.sentence;
  EXPECT_THAT(seen.sentence, HasSubstr("More items cannot settle it with this corpus")) << seen.sentence;
  EXPECT_THAT(seen.sentence, Not(HasSubstr("Until more items settle it"))) << seen.sentence;
  // A corpus that can give them: the advice stands.
  const RunData big = recall_run({20, 17, 12, 20}, {20, 17, 12, 20}, 60);
  EXPECT_THAT(explain(recommend_headline(recommend(big).models[0]), big).sentence, HasSubstr("Run more items"));
  // The plan says the same before the run.
  const auto spec = probe::quality("passed", Direction::higher_better, MetricKind::binary);
  SettleOutlook o = settle_outlook(spec, 0.05, 4);
  o.items_max = 18;
  EXPECT_THAT(settle_line(o), HasSubstr("more than the 18 functions its corpus holds, so more items cannot settle it"))
      << settle_line(o);
  EXPECT_THAT(settle_line(o), HasSubstr("promising less: a cell up to 41 points of pass rate below the reference"))
      << settle_line(o);
}

TEST(RecommendHeadline, TheUserChoosesWhichMetricsGateByConfigOrGate) {
  // Identical line counts: primary_matched (a count) settles on 4 items; its derived pass rate cannot.
  const RunData both = recall_run({20, 17, 12, 20}, {20, 17, 12, 20});
  EXPECT_FALSE(recommend(both).models[0].recommended.has_value());
  RecommendOptions gate;
  gate.gate = {"recall.primary_matched"};
  const Recommendation by_flag = recommend(both, gate);
  ASSERT_TRUE(by_flag.models[0].recommended.has_value());
  // The evidence follows the verdict: the gated count, worded as a loss or none; pass (not gated) is not said.
  const std::string sentence = explain(recommend_headline(by_flag.models[0]), both).sentence;
  EXPECT_THAT(sentence, StartsWith("non-inferior to f16/f16 on its one gated metric. "));
  EXPECT_THAT(sentence, EndsWith(": no loss on recalled lines."));
  EXPECT_THAT(recommend_markdown(both, by_flag), HasSubstr("Gated (--gate): recall.primary_matched"));
  for (const auto& cv : by_flag.models[0].cells)
    for (const auto& v : cv.metrics) EXPECT_EQ(v.metric, "primary_matched");
  // The probe's config "gate" does the same for every reader of the run (the summary, report.md).
  const RunData by_config = recall_run({20, 17, 12, 20}, {20, 17, 12, 20}, std::nullopt, json{"primary_matched"});
  EXPECT_TRUE(recommend(by_config).models[0].recommended.has_value());
}

TEST(RecommendHeadline, AWorseCellIsNotNamed) {
  // q4_0 lost lines on one item: q8_0 is then the cheapest cell with nothing worse seen.
  const RunData one_worse = recall_run({20, 17, 12, 20}, {20, 9, 12, 20});
  const RecommendHeadline h = recommend_headline(recommend(one_worse).models[0]);
  EXPECT_EQ(h.kind, RecommendHeadline::Kind::not_proven);
  const std::string sentence = explain(h, one_worse).sentence;
  EXPECT_EQ(sentence.rfind("-ctk q8_0 -ctv f16", 0), 0u) << sentence;
}

TEST(RecommendHeadline, ADifferenceSeenButNotProvenIsNeverCalledWorse) {
  // Both cells lost lines on one item, too few items for any verdict: every verdict is unknown.
  const RunData data = recall_run({20, 15, 12, 20}, {20, 9, 12, 20});
  const Recommendation rec = recommend(data);
  const ModelRecommendation& mr = rec.models[0];
  for (const auto& cv : mr.cells) EXPECT_EQ(cv.inferior, 0u);
  const RecommendHeadline h = recommend_headline(mr);
  EXPECT_EQ(h.kind, RecommendHeadline::Kind::difference_seen);
  ASSERT_TRUE(h.cell.has_value());
  EXPECT_EQ(data.cells()[*h.cell].type_k, "q4_0");  // the cheaper of the two
  EXPECT_EQ(h.cells_below, 2u);
  EXPECT_EQ(h.cells_inferior, 0u);
  // Its size in the metric's units and the items that would settle it, as values.
  ASSERT_EQ(h.below.size(), 1u);
  EXPECT_EQ(h.below[0].metric, "recall.primary_matched");
  EXPECT_DOUBLE_EQ(h.below[0].change, -2.0);
  EXPECT_EQ(h.below[0].items, 4u);
  // Differences (0, -8, 0, 0): mean -2, sd 4, margin 1 (5% of 0..20). The observed change would be
  // shown inferior once t(0.95, n-1) · 4 / sqrt(n) < |-2 + 1|: n = 46 (1.679 · 4 / 6.78 = 0.990; at 45, 1.002).
  EXPECT_EQ(h.below[0].items_needed, std::optional<std::size_t>(46));
  const HeadlineWords w = explain(h, data);
  EXPECT_EQ(w.verdict, "A difference seen, not proven");
  EXPECT_THAT(w.sentence, Not(HasSubstr("worse than"))) << w.sentence;
  EXPECT_THAT(w.sentence,
              HasSubstr("recall.primary_matched -2.00 (mean of 4 paired items; ~46 items would settle it at margin 1)"))
      << w.sentence;
  EXPECT_THAT(w.sentence, HasSubstr("no verdict is inferior")) << w.sentence;
  EXPECT_THAT(w.sentence, HasSubstr("Of the other cells, 1 is also below it, not proven.")) << w.sentence;
  EXPECT_THAT(w.sentence, HasSubstr("keep -ctk f16 -ctv f16")) << w.sentence;
}

TEST(RecommendHeadline, WorseIsSaidOnlyOfInferiorVerdicts) {
  // q8_0 lost a line on one item (unproven); q4_0 lost most lines on every item (inferior).
  const RunData mixed = recall_run({19, 17, 12, 20}, {2, 1, 0, 3});
  const RecommendHeadline m = recommend_headline(recommend(mixed).models[0]);
  EXPECT_EQ(m.kind, RecommendHeadline::Kind::difference_seen);
  EXPECT_EQ(mixed.cells()[*m.cell].type_k, "q8_0");
  EXPECT_EQ(m.cells_inferior, 1u);
  EXPECT_THAT(explain(m, mixed).sentence,
              HasSubstr("Of the other cells, 1 is inferior on some gated metric (worse than its margin allows, proven)."));

  const RunData all_worse = recall_run({2, 1, 0, 3}, {2, 1, 0, 3});
  const RecommendHeadline d = recommend_headline(recommend(all_worse).models[0]);
  EXPECT_EQ(d.kind, RecommendHeadline::Kind::inferior);
  EXPECT_EQ(d.cells_inferior, 2u);
  const HeadlineWords w = explain(d, all_worse);
  EXPECT_EQ(w.verdict, "Worse than the reference");
  EXPECT_THAT(w.sentence, StartsWith("every other cell is inferior to f16/f16 on some gated metric (worse than its "
                                     "margin allows, proven): keep the reference -ctk f16 -ctv f16. "));
  // The evidence of the cheapest inferior cell, in words by role: a quality loss, counted.
  EXPECT_THAT(w.sentence, HasSubstr("loses 4 of 4 items on recall"));
}

TEST(RecommendFrontier, AnInferiorCellIsNeverOnTheFrontierHoweverCheap) {
  // q4_0, the cheapest cell, lost most lines on every item: inferior, so not on the frontier.
  const RunData data = recall_run({20, 17, 12, 20}, {2, 1, 0, 3});
  const Recommendation rec = recommend(data);
  const ModelRecommendation& mr = rec.models[0];
  for (const auto& cv : mr.cells) {
    const bool on = std::find(mr.frontier.begin(), mr.frontier.end(), cv.cell) != mr.frontier.end();
    if (data.cells()[cv.cell].type_k == "q4_0") {
      EXPECT_GT(cv.inferior, 0u);
      EXPECT_FALSE(on);
    } else {
      EXPECT_TRUE(on) << "q8_0 answered like the reference at half its cost";
    }
  }
}

TEST(Brief, ADeterministicProbeWhoseEveryItemMovedOneWaySaysSoWithoutSignificance) {
  // q4_0 lost lines on all 4 items: no paired test on 4 items reaches p < 0.05 after Holm (Wilcoxon's
  // smallest two-sided p is 0.125), but recall is greedy, so the summary says every item moved.
  const RunData data = recall_run({20, 17, 12, 20}, {2, 1, 0, 3});
  const RunSummary summary = summarize_run(data);
  std::string text = render_text(brief_document(data, summary, "runs/newcomer"));
  // The text renderer wraps lines: read it as one line.
  for (auto at = text.find("\n  "); at != std::string::npos; at = text.find("\n  ", at)) text.replace(at, 3, " ");
  // q4_0 is inferior, yet no change is significant after Holm: said as one message under the Verdict,
  // never as "No cell differs" beside "Worse than the reference".
  EXPECT_THAT(text, Not(HasSubstr("No cell differs"))) << text;
  EXPECT_THAT(text, HasSubstr("No single change is significant on its two-sided test after Holm across cells")) << text;
  EXPECT_THAT(text, HasSubstr("m q4_0/f16 is inferior: an inferior verdict asks a narrower question")) << text;
  EXPECT_LT(text.find("Verdict"), text.find("No single change is significant")) << text;
  EXPECT_THAT(text, HasSubstr("recall: m q4_0/f16 primary_matched 17.25 → 1.50 (p 0.250, 4 paired items; all lower "
                              "on a deterministic probe: no sampling noise)"))
      << text;
}

TEST(RecommendHeadline, NoReferenceIsWordedWithoutACell) {
  const HeadlineWords w = explain(RecommendHeadline{}, recall_run({20, 17, 12, 20}, {20, 17, 12, 20}));
  EXPECT_EQ(w.verdict, "No reference cell");
  EXPECT_EQ(w.sentence, "nothing to compare against.");
}

}  // namespace
}  // namespace kvsweep::report
