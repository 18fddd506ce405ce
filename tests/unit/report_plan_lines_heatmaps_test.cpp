// The dry run says each verdict class of a probe once, not once per metric;
// the report draws heat maps for the metrics a verdict rests on unless asked for all.

#include <algorithm>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/report/analysis/plan_power.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/figures/figures.hpp"
#include "kvsweep/report/input/run_data.hpp"

using ::testing::HasSubstr;
using nlohmann::json;
namespace probe = kvsweep::probe;
namespace report = kvsweep::report;

namespace {

TEST(PlanPowerLines, FortyMetricsThatNeedTheSameItemsAreOneLine) {
  std::vector<report::SettleOutlook> outlooks;
  for (int i = 0; i < 40; ++i)
    outlooks.push_back(report::settle_outlook(
        probe::quality("valid@" + std::to_string(512 * (i + 1)), probe::Direction::higher_better, probe::MetricKind::binary),
        0.05, 4));
  // A count in the same probe settles from 2 items: a class of its own.
  outlooks.push_back(report::settle_outlook(
      probe::quality("primary_matched", probe::Direction::higher_better, probe::MetricKind::count), 1.0, 4));
  const std::vector<std::string> lines = report::settle_lines(outlooks);
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  const auto binary = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find("(40 metrics)") != std::string::npos; });
  ASSERT_NE(binary, lines.end()) << ::testing::PrintToString(lines);
  EXPECT_THAT(*binary, HasSubstr("valid@512, valid@1024, valid@1536, valid@2048, … (40 metrics) (binary, margin 0.05): "
                                 "needs ~52 items even if every item agrees; this plan has 4 — each will stay unknown"));
  EXPECT_THAT(*binary, HasSubstr("recommend --margin METRIC=0.41"));
  const auto count = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.starts_with("primary_matched"); });
  ASSERT_NE(count, lines.end()) << ::testing::PrintToString(lines);
  EXPECT_EQ(*count, report::settle_line(outlooks.back())) << "a class of one reads as before";
}

TEST(PlanPowerLines, DifferentMarginsAreDifferentClasses) {
  const auto a = probe::quality("a", probe::Direction::higher_better, probe::MetricKind::binary);
  const auto b = probe::quality("b", probe::Direction::higher_better, probe::MetricKind::binary);
  EXPECT_EQ(report::settle_lines({report::settle_outlook(a, 0.05, 4), report::settle_outlook(b, 0.5, 4)}).size(), 2u);
  EXPECT_EQ(report::settle_lines({report::settle_outlook(a, 0.05, 4), report::settle_outlook(b, 0.05, 4)}).size(), 1u);
}

json cell(const std::string& k) {
  return {{"model", "m"}, {"type_k", k}, {"type_v", "f16"}, {"id", "m-" + k + "-f16"}, {"is_reference", k == "f16"},
          {"outcome", "ok"}, {"effective", {{"type_k", k}, {"type_v", "f16"}, {"k_mib", k == "f16" ? 2.0 : 1.0}, {"v_mib", 2.0}}}};
}

/// complete with a change (match_reference), a quality metric (correct) and a diagnostic (predicted_n),
/// over f16, q8_0 and q4_0 K; `gate` is the probe's config "gate" (none when empty).
report::RunData run(const std::vector<std::string>& gate = {}) {
  json p = {{"name", "complete"}, {"kind", "complete"},
            {"metrics", {probe::to_json(probe::change("match_reference", probe::Direction::higher_better, probe::MetricKind::binary)),
                         probe::to_json(probe::quality("correct", probe::Direction::higher_better, probe::MetricKind::binary)),
                         probe::to_json(probe::diagnostic("predicted_n", probe::MetricKind::count))}}};
  json manifest = {{"name", "noise"}, {"n_ctx", 4096}, {"probes", {p}},
                   {"cells", {cell("f16"), cell("q8_0"), cell("q4_0")}},
                   {"config", {{"grid", {{"k", {"f16", "q8_0", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}}},
                               {"probes", {{{"kind", "complete"}}}}}}};
  if (!gate.empty()) manifest["config"]["probes"][0]["gate"] = gate;
  std::vector<json> records;
  for (int i = 0; i < 6; ++i)
    for (const std::string k : {"f16", "q8_0", "q4_0"})
      records.push_back({{"cell", {{"model", "m"}, {"type_k", k}, {"type_v", "f16"}}}, {"probe", "complete"}, {"kind", "complete"},
                         {"item", "p" + std::to_string(i)}, {"status", "ok"},
                         {"metrics", {{"match_reference", k == "f16" || i % 2 ? 1 : 0}, {"correct", i < 4 ? 1 : 0}, {"predicted_n", 20 + i}}}});
  auto data = report::RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data) << (data ? "" : data.error().message);
  return std::move(*data);
}

std::vector<std::string> heatmaps(const report::RunData& data, report::Heatmaps which) {
  const report::RunSummary summary = report::summarize_run(data);
  std::vector<std::string> out;
  for (const auto& f : report::render_figures(data, summary, report::RenderSvg::no, which))
    if (f.file.starts_with("heatmap-")) out.push_back(f.file);
  return out;
}

TEST(ReportHeatmaps, OnlyTheGatedMetricsAreDrawnUnlessAllAreAskedFor) {
  const report::RunData data = run();
  EXPECT_THAT(heatmaps(data, report::Heatmaps::gated), ::testing::ElementsAre("heatmap-complete-correct-m.svg"));
  EXPECT_THAT(heatmaps(data, report::Heatmaps::all),
              ::testing::UnorderedElementsAre("heatmap-complete-match_reference-m.svg", "heatmap-complete-correct-m.svg",
                                              "heatmap-complete-predicted_n-m.svg"));
}

TEST(ReportHeatmaps, AProbesGateDecidesWhichAreDrawn) {
  const report::RunData data = run({"match_reference"});
  EXPECT_THAT(heatmaps(data, report::Heatmaps::gated), ::testing::ElementsAre("heatmap-complete-match_reference-m.svg"));
}

}  // namespace
