// Failures never read as answers: a run whose reference cell has no ok record is "failed"
// and its verdict "Nothing measured", with no advice and no ratios; a probe that failed on every cell is
// named with its failure class in the summary's first lines; a speed ratio from the server's timings in
// a run whose speed probe measured nothing says where it came from.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/cli/write_report.hpp"
#include "kvsweep/report/analysis/cost.hpp"
#include "kvsweep/report/analysis/failures.hpp"
#include "kvsweep/report/analysis/recommend.hpp"
#include "kvsweep/report/analysis/recommend_headline.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/output/brief.hpp"
#include "kvsweep/report/output/report_document.hpp"
#include "report_fixture.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kvsweep::report {
namespace {

using nlohmann::json;

constexpr const char* kSegfault = "llama-server killed by signal 11 (Segmentation fault) before it was ready";

json cell(const std::string& model, const std::string& k, const std::string& v, const std::string& outcome,
          const std::string& message = "") {
  return {{"model", model}, {"type_k", k}, {"type_v", v}, {"id", model + "-" + k + "-" + v},
          {"is_reference", k == "f16" && v == "f16"}, {"outcome", outcome}, {"message", message},
          {"effective",
           {{"type_k", k}, {"type_v", v}, {"k_mib", k == "f16" ? 2.0 : 1.0625}, {"v_mib", v == "f16" ? 2.0 : 1.0625}}}};
}

json manifest(json cells, const std::string& status = "complete") {
  json probes = {{{"name", "complete"}, {"kind", "complete"},
                  {"metrics", {{{"name", "match_reference"}, {"direction", "higher"}, {"kind", "binary"}, {"role", "quality"}}}}},
                 {{"name", "speed"}, {"kind", "speed"},
                  {"metrics", {{{"name", "pp_tok_s"}, {"direction", "higher"}, {"kind", "continuous"}, {"role", "cost"}},
                               {{"name", "tg_tok_s"}, {"direction", "higher"}, {"kind", "continuous"}, {"role", "cost"}}}}}};
  json models = json::array();
  for (const auto& c : cells)
    if (std::find(models.begin(), models.end(), json{{"name", c["model"]}}) == models.end())
      models.push_back({{"name", c["model"]}});
  return {{"name", "failures"}, {"n_ctx", 4096}, {"status", status}, {"models", models}, {"probes", probes},
          {"cells", std::move(cells)},
          {"config", {{"grid", {{"k", {"f16", "q8_0"}}, {"v", {"f16", "q8_0"}}, {"reference", "f16/f16"}}}}}};
}

json complete_record(const std::string& model, const std::string& k, const std::string& v, int item, double prompt_ms = 50) {
  return {{"cell", {{"model", model}, {"type_k", k}, {"type_v", v}}}, {"probe", "complete"}, {"kind", "complete"},
          {"item", "p" + std::to_string(item)}, {"status", "ok"}, {"metrics", {{"match_reference", 1}}},
          {"timings", {{"prompt_n", 400}, {"cache_n", 0}, {"prompt_ms", prompt_ms}, {"predicted_n", 20},
                       {"predicted_ms", 200}, {"requests", 1}}}};
}

json speed_crash(const std::string& model, const std::string& k, const std::string& v) {
  return {{"cell", {{"model", model}, {"type_k", k}, {"type_v", v}}}, {"probe", "speed"}, {"kind", "speed"},
          {"item", "d0"}, {"status", "process"}, {"spec", {{"depth", 0}, {"pp", 512}, {"tg", 128}}},
          {"error", "llama-bench killed by signal 11 (Segmentation fault)\nload_tensors: AMX model buffer size = 95.34 MiB"}};
}

json speed_ok(const std::string& model, const std::string& k, const std::string& v, double tg) {
  return {{"cell", {{"model", model}, {"type_k", k}, {"type_v", v}}}, {"probe", "speed"}, {"kind", "speed"},
          {"item", "d0"}, {"status", "ok"}, {"spec", {{"depth", 0}, {"pp", 512}, {"tg", 128}}},
          {"metrics", {{"pp_tok_s", 1000.0}, {"pp_tok_s_sd", 1.0}, {"tg_tok_s", tg}, {"tg_tok_s_sd", 1.0}}}};
}

RunData load(json m, std::vector<json> records) {
  auto data = RunData::from(std::move(m), records);
  EXPECT_TRUE(data.has_value());
  return std::move(*data);
}

/// Four cells on an AMX host: every one killed by signal 11 before it was ready, no record.
RunData every_cell_failed() {
  const std::string message = std::string(kSegfault) + "\nwarming up the model with an empty run";
  return load(manifest({cell("m", "f16", "f16", "load_failed", message), cell("m", "f16", "q8_0", "load_failed", message),
                        cell("m", "q8_0", "f16", "load_failed", message), cell("m", "q8_0", "q8_0", "load_failed", message)}),
              {});
}

/// The text summary on one line per paragraph (the renderer wraps long lines with an indent).
std::string summary_text(const RunData& data) {
  std::string text = render_text(brief_document(data, summarize_run(data), "runs/failures"));
  for (auto at = text.find("\n  "); at != std::string::npos; at = text.find("\n  ", at)) text.replace(at, 3, " ");
  return text;
}

TEST(Failures, ARunWhoseEveryCellFailedHasTheStatusFailed) {
  const RunData data = every_cell_failed();
  EXPECT_EQ(data.manifest().status_text(), "complete");
  EXPECT_EQ(run_status(data), "failed");
  EXPECT_EQ(unmeasured_groups(data), std::vector<std::string>{"m"});
  EXPECT_EQ(status_line(data),
            "Run status: failed · nothing measured for m (its reference cell has no ok record) · 4 cells · 0 records.");
  EXPECT_THAT(summary_text(data), HasSubstr("Run status: failed")) << summary_text(data);
  const RunSummary summary = summarize_run(data);
  EXPECT_THAT(render_markdown(report_document(data, summary, {}, {})), HasSubstr("Run status: failed"));
}

TEST(Failures, TheEndOfARunGetsTheStatusFailedThatRunStrictExitsOn) {
  // `kvsweep run` prints the summary through report_after_run and exits 1 under --strict on "failed".
  testing::TempDir dir("nothing-measured");
  const std::string message = std::string(kSegfault) + "\nwarming up the model with an empty run";
  testing::write_run(dir.path(), manifest({cell("m", "f16", "f16", "load_failed", message),
                                           cell("m", "q8_0", "q8_0", "load_failed", message)}),
                     {});
  ::testing::internal::CaptureStdout();
  const std::optional<std::string> status = cli::report_after_run(dir.path());
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(status, std::optional<std::string>("failed"));
  EXPECT_THAT(printed, HasSubstr("Run status: failed")) << printed;
  EXPECT_THAT(printed, HasSubstr("Nothing measured")) << printed;
}

TEST(Failures, AnUnfinishedRunKeepsItsOwnStatus) {
  // The reference of an interrupted run may not have run yet: the run is not failed, only unfinished.
  auto m = manifest({cell("m", "f16", "f16", "load_failed", kSegfault)}, "interrupted");
  EXPECT_EQ(run_status(load(std::move(m), {})), "interrupted");
}

TEST(Failures, ARunWhoseReferenceFailedSaysNothingMeasuredAndGivesNoAdvice) {
  const RunData data = every_cell_failed();
  const auto verdict = verdicts(data);
  ASSERT_EQ(verdict.size(), 1u);
  EXPECT_EQ(verdict[0].second.kind, RecommendHeadline::Kind::nothing_measured);
  const HeadlineWords w = explain(verdict[0].second, data);
  EXPECT_EQ(w.verdict, "Nothing measured");
  EXPECT_THAT(w.sentence, HasSubstr(std::string("f16/f16 has no ok record (load_failed: ") + kSegfault + ")"));
  EXPECT_THAT(w.sentence, HasSubstr("nothing is advised"));
  EXPECT_THAT(w.sentence, Not(HasSubstr("keep")));
  EXPECT_THAT(w.sentence, Not(HasSubstr("-ctk")));
  const std::string text = summary_text(data);
  EXPECT_THAT(text, HasSubstr("m: Nothing measured: the reference f16/f16 has no ok record")) << text;
  EXPECT_THAT(text, Not(HasSubstr("keep the reference"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("-ctk"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("No cell differs"))) << text;  // no cell was compared
  const std::string md = render_markdown(report_document(data, summarize_run(data), {}, {}));
  EXPECT_THAT(md, HasSubstr("**Nothing measured**")) << md;
  EXPECT_THAT(md, Not(HasSubstr("keep the reference"))) << md;
}

TEST(Failures, RecommendOnARunThatMeasuredNothingShowsNoRatiosAndNoTable) {
  const RunData data = every_cell_failed();
  const Recommendation rec = recommend(data);
  ASSERT_EQ(rec.models.size(), 1u);
  const ModelRecommendation& mr = rec.models[0];
  EXPECT_TRUE(mr.nothing_measured);
  EXPECT_TRUE(mr.cells.empty());
  EXPECT_FALSE(mr.recommended.has_value());
  EXPECT_TRUE(mr.frontier.empty());
  const std::string md = recommend_markdown(data, rec);
  EXPECT_THAT(md, HasSubstr("**Nothing measured**: the reference f16/f16 has no ok record")) << md;
  EXPECT_THAT(md, Not(HasSubstr("×"))) << md;
  EXPECT_THAT(md, Not(HasSubstr("pp × / tg ×"))) << md;
  EXPECT_THAT(md, Not(HasSubstr("keep the reference"))) << md;
  EXPECT_THAT(md, Not(HasSubstr("K versus V"))) << md;
  const auto j = recommend_json(data, rec);
  EXPECT_EQ(j["models"][0]["nothing_measured"], true);
  EXPECT_EQ(j["models"][0]["headline"]["verdict"], "Nothing measured");
  EXPECT_TRUE(j["models"][0]["cells"].empty());
}

TEST(Failures, NothingMeasuredIsPerGroupWhoseReferenceFailed) {
  // Model a measured; model b's reference crashed at load (b's q8_0 cell answered, but against nothing).
  std::vector<json> records;
  for (int i = 0; i < 4; ++i) {
    records.push_back(complete_record("a", "f16", "f16", i));
    records.push_back(complete_record("a", "q8_0", "q8_0", i));
    records.push_back(complete_record("b", "q8_0", "q8_0", i));
  }
  const RunData data = load(manifest({cell("a", "f16", "f16", "ok"), cell("a", "q8_0", "q8_0", "ok"),
                                      cell("b", "f16", "f16", "load_failed", kSegfault), cell("b", "q8_0", "q8_0", "ok")}),
                            records);
  EXPECT_EQ(unmeasured_groups(data), std::vector<std::string>{"b"});
  EXPECT_EQ(run_status(data), "failed");
  EXPECT_THAT(status_line(data), HasSubstr("nothing measured for b (its reference cell has no ok record)"));
  const Recommendation rec = recommend(data);
  ASSERT_EQ(rec.models.size(), 2u);
  EXPECT_FALSE(rec.models[0].nothing_measured);
  EXPECT_EQ(rec.models[0].cells.size(), 1u);
  EXPECT_TRUE(rec.models[1].nothing_measured);
  EXPECT_TRUE(rec.models[1].cells.empty());
  EXPECT_NE(recommend_headline(rec.models[0]).kind, RecommendHeadline::Kind::nothing_measured);
  EXPECT_EQ(recommend_headline(rec.models[1]).kind, RecommendHeadline::Kind::nothing_measured);
}

/// Two cells that answered every `complete` item while llama-bench crashed on each of them.
RunData speed_failed_everywhere(int items) {
  std::vector<json> records;
  for (const std::string k : {"f16", "q8_0"}) {
    for (int i = 0; i < items; ++i) records.push_back(complete_record("m", k, k, i, k == "f16" ? 50 : 100));
    records.push_back(speed_crash("m", k, k));
  }
  return load(manifest({cell("m", "f16", "f16", "ok"), cell("m", "q8_0", "q8_0", "ok")}), records);
}

TEST(Failures, AProbeThatFailedOnEveryCellIsNamedWithItsFailureClass) {
  const RunData data = speed_failed_everywhere(4);
  const auto failed = failed_probes(data);
  ASSERT_EQ(failed.size(), 1u);  // complete answered
  EXPECT_EQ(failed[0].probe, "speed");
  EXPECT_EQ(failed[0].cells, 2u);
  ASSERT_EQ(failed[0].classes.size(), 1u);
  EXPECT_EQ(failed[0].classes[0].status, "process");
  EXPECT_EQ(failed[0].classes[0].error, "llama-bench killed by signal 11 (Segmentation fault)");  // not the log tail
  EXPECT_EQ(failed[0].classes[0].items, 2u);
  EXPECT_EQ(explain(failed[0]),
            "speed: failed on every cell (2 cells; process: llama-bench killed by signal 11 (Segmentation fault))");
  EXPECT_EQ(run_status(data), "complete");  // the reference measured: a failed probe is named, not the run
}

TEST(Failures, AProbeThatFailedOnEveryCellOpensTheSummaryAndTheReport) {
  const RunData data = speed_failed_everywhere(4);
  const std::string named = "speed: failed on every cell (2 cells; process: llama-bench killed by signal 11";
  const std::string text = summary_text(data);
  const auto status = text.find("Run status: complete");
  const auto failure = text.find(named);
  ASSERT_NE(status, std::string::npos) << text;
  ASSERT_NE(failure, std::string::npos) << text;
  // The paragraph right after the status: before the overview, the changes and the verdict.
  ASSERT_LT(status, failure);
  const auto status_end = text.find('\n', status);
  EXPECT_TRUE(std::regex_match(text.substr(status_end, failure - status_end), std::regex(R"([\s!]*Warning: )")))
      << text;
  EXPECT_LT(failure, text.find("Verdict")) << text;
  EXPECT_LT(failure, text.find("main metric")) << text;
  const std::string md = render_markdown(report_document(data, summarize_run(data), {}, {}));
  EXPECT_LT(md.find(named), md.find("## Verdict")) << md;
  EXPECT_THAT(md, HasSubstr("No values recorded: " + named)) << md;  // its own section says why too
}

TEST(Failures, AProbeThatAnsweredOnSomeCellIsNotNamed) {
  std::vector<json> records;
  for (int i = 0; i < 4; ++i) {
    records.push_back(complete_record("m", "f16", "f16", i));
    records.push_back(complete_record("m", "q8_0", "q8_0", i));
  }
  records.push_back(speed_ok("m", "f16", "f16", 50.0));
  records.push_back(speed_crash("m", "q8_0", "q8_0"));
  const RunData data = load(manifest({cell("m", "f16", "f16", "ok"), cell("m", "q8_0", "q8_0", "ok")}), records);
  EXPECT_TRUE(failed_probes(data).empty());
  EXPECT_THAT(summary_text(data), Not(HasSubstr("failed on every cell")));
}

TEST(Failures, ASpeedRatioFromServerTimingsSaysTheSpeedProbeMeasuredNothing) {
  const RunData data = speed_failed_everywhere(4);
  const CostTable costs = cell_costs(data);
  const CellCost* q8 = costs.find(*data.find_cell("m", "q8_0", "q8_0"));
  ASSERT_NE(q8, nullptr);
  EXPECT_TRUE(q8->bench_missing);
  EXPECT_EQ(q8->pp_source, CellCost::SpeedSource::server);
  EXPECT_DOUBLE_EQ(q8->pp_x_worst, 0.5);  // the server's prefill: 400 tokens in 100 ms against 50 ms
  EXPECT_EQ(speed_source_note(*q8), "from server timings, the speed probe measured nothing");
  RecommendOptions options;
  options.margins["match_reference"] = 0.5;  // 4 agreeing items prove 0.41: q8_0/q8_0 is recommended
  const Recommendation rec = recommend(data, options);
  ASSERT_TRUE(rec.models[0].recommended.has_value());
  const std::string md = recommend_markdown(data, rec);
  EXPECT_THAT(md, HasSubstr("0.50× / 1.00× (from server timings, the speed probe measured nothing)")) << md;
  // The recommended pair's speed sentence too.
  EXPECT_THAT(md, HasSubstr("decode 100.0 tok/s (1.00×) (from server timings, the speed probe measured nothing)")) << md;
  options.max_slowdown = 0.9;
  const Recommendation slow = recommend(data, options);
  ASSERT_EQ(slow.models[0].cells.size(), 1u);
  EXPECT_EQ(slow.models[0].cells[0].too_slow, "pp 0.50× < 0.90×");
  const std::string slow_md = recommend_markdown(data, slow);
  EXPECT_THAT(slow_md, HasSubstr("0.50× / 1.00× (from server timings, the speed probe measured nothing) (too slow: pp "
                                 "0.50× < 0.90×)"))
      << slow_md;
  EXPECT_EQ(recommend_json(data, slow)["models"][0]["cells"][0]["speed_source"],
            "from server timings, the speed probe measured nothing");
}

TEST(Failures, ASpeedRatioFromFewerThanThreeItemsCarriesItsCaveatWhereverItIsShown) {
  const RunData data = speed_failed_everywhere(2);
  const CostTable costs = cell_costs(data);
  EXPECT_EQ(costs.find(*data.find_cell("m", "q8_0", "q8_0"))->speed_caveat, "from 2 items");
  const std::string md = recommend_markdown(data, recommend(data));
  EXPECT_THAT(md, HasSubstr("0.50× / 1.00× (from 2 items; from server timings, the speed probe measured nothing)")) << md;
}

TEST(Failures, AServerRatioStandingInForTheReferencesMissingBenchSaysSo) {
  // llama-bench measured the q8_0 cell but crashed on the reference: no bench ratio, the server's stands in.
  std::vector<json> records;
  for (int i = 0; i < 2; ++i) {
    records.push_back(complete_record("m", "f16", "f16", i));
    records.push_back(complete_record("m", "q8_0", "q8_0", i, 100));
  }
  records.push_back(speed_crash("m", "f16", "f16"));
  records.push_back(speed_ok("m", "q8_0", "q8_0", 40.0));
  const RunData data = load(manifest({cell("m", "f16", "f16", "ok"), cell("m", "q8_0", "q8_0", "ok")}), records);
  const CostTable costs = cell_costs(data);
  const CellCost* q8 = costs.find(*data.find_cell("m", "q8_0", "q8_0"));
  ASSERT_NE(q8, nullptr);
  EXPECT_FALSE(q8->bench.empty());
  EXPECT_TRUE(q8->bench_missing);
  const std::string md = recommend_markdown(data, recommend(data));
  // The few-items caveat too: the ratio shown is the server's, though the cell has llama-bench figures.
  EXPECT_THAT(md, HasSubstr("0.50× / 1.00× (from 2 items; from server timings, the speed probe measured nothing)")) << md;
}

TEST(Failures, LlamaBenchRatiosNeedNoSourceNote) {
  std::vector<json> records;
  for (int i = 0; i < 4; ++i) {
    records.push_back(complete_record("m", "f16", "f16", i));
    records.push_back(complete_record("m", "q8_0", "q8_0", i));
  }
  records.push_back(speed_ok("m", "f16", "f16", 50.0));
  records.push_back(speed_ok("m", "q8_0", "q8_0", 40.0));
  const RunData data = load(manifest({cell("m", "f16", "f16", "ok"), cell("m", "q8_0", "q8_0", "ok")}), records);
  const CostTable costs = cell_costs(data);
  const CellCost* q8 = costs.find(*data.find_cell("m", "q8_0", "q8_0"));
  ASSERT_NE(q8, nullptr);
  EXPECT_EQ(q8->tg_source, CellCost::SpeedSource::bench);
  EXPECT_DOUBLE_EQ(q8->tg_x_worst, 0.8);
  EXPECT_EQ(speed_source_note(*q8), "");
  EXPECT_THAT(recommend_markdown(data, recommend(data)), Not(HasSubstr("from server timings")));
}

}  // namespace
}  // namespace kvsweep::report
