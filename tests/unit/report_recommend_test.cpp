// Verdicts, frontier, recommendation, cost and the K-versus-V sentence on a literal run.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/report/analysis/recommend.hpp"
#include "kvsweep/report/analysis/recommend_headline.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kvsweep::report {
namespace {

using nlohmann::json;

json cell(const std::string& k, const std::string& v, double k_mib, double v_mib) {
  return {{"model", "m"}, {"type_k", k}, {"type_v", v}, {"id", "m-" + k + "-" + v}, {"is_reference", k == "f16" && v == "f16"},
          {"outcome", "ok"}, {"effective", {{"type_k", k}, {"type_v", v}, {"k_mib", k_mib}, {"v_mib", v_mib},
                                            {"kv_mib", k_mib + v_mib}}}};
}

json record(const std::string& k, const std::string& v, const std::string& probe, int item, json metrics,
            double prompt_ms = 50, int prompt_n = 400) {
  return {{"cell", {{"model", "m"}, {"type_k", k}, {"type_v", v}}}, {"probe", probe}, {"kind", probe},
          {"item", "i" + std::to_string(item)}, {"status", "ok"}, {"metrics", std::move(metrics)},
          {"timings", {{"prompt_n", prompt_n}, {"cache_n", 0}, {"prompt_ms", prompt_ms}, {"predicted_n", 20},
                       {"predicted_ms", 200}, {"requests", 1}}}};
}

/// f16/f16 reference; q8_0/q8_0 the same answers on 60 items; q4_0/q4_0 fails half the binary items;
/// q4_0/f16 fails every binary item and never ran the `sim` probe; f16/q4_0 answered only 8 items.
RunData literal_run(const json& server = json()) {
  json manifest = {
      {"name", "lit"},
      {"n_ctx", 4096},
      {"probes",
       {{{"name", "complete"}, {"kind", "complete"},
         {"metrics", {{{"name", "match_reference"}, {"direction", "higher"}, {"kind", "binary"}, {"role", "quality"}}}}},
        {{"name", "sim"}, {"kind", "telephone"},
         {"metrics", {{{"name", "similarity"}, {"direction", "higher"}, {"kind", "continuous"}, {"role", "quality"}},
                      {{"name", "steps"}, {"direction", "none"}, {"kind", "count"}, {"role", "diagnostic"}}}}}}},
      {"cells", {cell("f16", "f16", 2, 2), cell("q8_0", "q8_0", 1.0625, 1.0625), cell("q4_0", "q4_0", 0.5625, 0.5625),
                 cell("q4_0", "f16", 0.5625, 2), cell("f16", "q4_0", 2, 0.5625)}},
      {"config", {{"grid", {{"k", {"f16", "q8_0", "q4_0"}}, {"v", {"f16", "q8_0", "q4_0"}}, {"reference", "f16/f16"}}}}}};
  if (!server.is_null()) manifest["config"]["server"] = server;
  std::vector<json> records;
  for (int i = 0; i < 60; ++i) {
    const double sim = 0.9 + 0.001 * (i % 7);
    records.push_back(record("f16", "f16", "complete", i, {{"match_reference", 1}}));
    records.push_back(record("f16", "f16", "sim", i, {{"similarity", sim}, {"steps", 3}}));
    records.push_back(record("q8_0", "q8_0", "complete", i, {{"match_reference", 1}}, 100));
    records.push_back(record("q8_0", "q8_0", "sim", i, {{"similarity", sim}, {"steps", 3}}, 100));
    records.push_back(record("q4_0", "q4_0", "complete", i, {{"match_reference", i % 2}}));
    records.push_back(record("q4_0", "q4_0", "sim", i, {{"similarity", sim - 0.2}, {"steps", 3}}));
    records.push_back(record("q4_0", "f16", "complete", i, {{"match_reference", 0}}));
    if (i < 8) {
      records.push_back(record("f16", "q4_0", "complete", i, {{"match_reference", 1}}));
      records.push_back(record("f16", "q4_0", "sim", i, {{"similarity", sim}, {"steps", 3}}));
    }
  }
  // A prompt served entirely from the prefix cache evaluates nothing: not a rate.
  records.push_back(record("f16", "f16", "complete", 99, {{"match_reference", 1}}, 0, 0));
  auto data = RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data.has_value());
  return std::move(*data);
}

const CellVerdict& verdict_of(const ModelRecommendation& m, const RunData& data, const std::string& k,
                              const std::string& v) {
  const auto index = data.find_cell("m", k, v);
  for (const auto& c : m.cells) {
    if (c.cell == index) return c;
  }
  ADD_FAILURE() << "no verdict for " << k << "/" << v;
  return m.cells.front();
}

TEST(Recommend, ParetoFrontierKeepsTiesAndDropsNaN) {
  const double nan = std::nan("");
  //                          0     1     2     3    4     5    6
  const std::vector<double> cost{4, 2, 2, 1, 3, nan, 3};
  const std::vector<double> quality{0, -0.5, -0.5, -2, -0.1, 1, -0.6};
  EXPECT_EQ(pareto_frontier(cost, quality), (std::vector<std::size_t>{3, 1, 2, 4, 0}));
  EXPECT_TRUE(pareto_frontier({}, {}).empty());
}

TEST(Recommend, DefaultMarginsFollowTheDeclaration) {
  ProbeDef recall;
  recall.name = "recall";
  recall.calibration_metric = "primary_matched";
  recall.calibration_lo = 0;
  recall.calibration_hi = 20;
  const Values none;
  EXPECT_DOUBLE_EQ(default_margin(recall, probe::quality("primary_matched", probe::Direction::higher_better,
                                                         probe::MetricKind::count), none).value, 1.0);
  const Values ref{{"a", "b"}, {40, 12}};
  EXPECT_DOUBLE_EQ(default_margin(recall, probe::quality("bonus", probe::Direction::higher_better,
                                                         probe::MetricKind::count), ref).value, 2.0);
  EXPECT_DOUBLE_EQ(default_margin(recall, probe::quality("passed", probe::Direction::higher_better,
                                                         probe::MetricKind::binary), none).value, 0.05);
  EXPECT_DOUBLE_EQ(default_margin(recall, probe::quality("kl", probe::Direction::lower_better,
                                                         probe::MetricKind::continuous), none).value, 0.02);
}

TEST(Recommend, LowerIsBetterMetricsAreOriented) {
  const auto kl = probe::quality("kl", probe::Direction::lower_better, probe::MetricKind::continuous);
  const Values reference{{"a", "b", "c"}, {0.0, 0.0, 0.0}};
  const Values cell{{"a", "b", "c"}, {0.5, 0.6, 0.4}};
  const MetricVerdict v = metric_verdict(kl, cell, reference, {0.02, "test"});
  EXPECT_NEAR(v.result.estimate, -0.5, 1e-12);
  EXPECT_EQ(v.result.verdict, stats::Decision::inferior);
}

TEST(Recommend, VerdictsFrontierAndRecommendation) {
  const RunData data = literal_run();
  RecommendOptions options;
  options.context = 131072;
  const Recommendation rec = recommend(data, options);
  ASSERT_EQ(rec.models.size(), 1u);
  const ModelRecommendation& m = rec.models[0];
  ASSERT_EQ(m.cells.size(), 4u);

  const CellVerdict& q8 = verdict_of(m, data, "q8_0", "q8_0");
  EXPECT_TRUE(q8.eligible);
  EXPECT_EQ(q8.non_inferior, 2u);  // the diagnostic `steps` is not gated
  const CellVerdict& q4 = verdict_of(m, data, "q4_0", "q4_0");
  EXPECT_FALSE(q4.eligible);
  EXPECT_EQ(q4.inferior, 2u);
  const CellVerdict& k_only = verdict_of(m, data, "q4_0", "f16");
  EXPECT_EQ(k_only.missing_probes, std::vector<std::string>{"sim"});
  EXPECT_FALSE(k_only.eligible);
  EXPECT_TRUE(std::isnan(k_only.score));
  // 8 items all passed on both sides: too few for a 0.05 margin; 52 would do (see the stats test).
  const CellVerdict& v_only = verdict_of(m, data, "f16", "q4_0");
  ASSERT_EQ(v_only.metrics.size(), 2u);
  EXPECT_EQ(v_only.metrics[0].result.verdict, stats::Decision::unknown);
  EXPECT_EQ(v_only.metrics[0].result.items_needed, 52u);
  EXPECT_FALSE(v_only.eligible);

  ASSERT_TRUE(m.recommended.has_value());
  EXPECT_EQ(*m.recommended, *data.find_cell("m", "q8_0", "q8_0"));
  // Frontier by KV bytes per token: q8_0/q8_0, the reference; f16/q4_0 is dominated, and q4_0/q4_0, the
  // cheapest, is inferior: never on the frontier.
  EXPECT_EQ(m.frontier, (std::vector<std::size_t>{*data.find_cell("m", "q8_0", "q8_0"), *data.reference("m")}));

  // K versus V: q4_0/f16 fails the 8 items f16/q4_0 passes (McNemar 2^-7).
  ASSERT_EQ(m.k_vs_v.size(), 2u);
  EXPECT_EQ(m.k_vs_v[0].finding, AxisSensitivity::Finding::k_more_sensitive);
  EXPECT_EQ(m.k_vs_v[0].type, "q4_0");
  EXPECT_EQ(m.k_vs_v[0].test, "mcnemar");
  const std::string k_vs_v = explain(m.k_vs_v[0]);
  EXPECT_THAT(k_vs_v, HasSubstr("K is more sensitive than V")) << k_vs_v;
  EXPECT_THAT(k_vs_v, HasSubstr("p = 0.008")) << k_vs_v;

  const std::string md = recommend_markdown(data, rec);
  EXPECT_THAT(md, HasSubstr("**Recommended: -ctk q8_0 -ctv q8_0**")) << md;
  EXPECT_THAT(md, HasSubstr("needs ~52 items")) << md;
  const auto j = recommend_json(data, rec);
  EXPECT_EQ(j["models"][0]["recommended"], "m-q8_0-q8_0");
}

TEST(Recommend, NoEligibleCellSaysSo) {
  RecommendOptions options;
  options.margins["complete.match_reference"] = 0.0;  // no loss at all allowed: the bound is never above 0
  options.margins["similarity"] = 0.0;
  const RunData data = literal_run();
  const Recommendation rec = recommend(data, options);
  EXPECT_FALSE(rec.models[0].recommended.has_value());
  // q8_0/q8_0 answered every item as the reference did: seen as no different, not proven at margin 0.
  const std::string md = recommend_markdown(data, rec);
  EXPECT_THAT(md, HasSubstr("**No difference seen, not enough items to prove it**: -ctk q8_0 -ctv q8_0")) << md;
}

TEST(Recommend, OllamaAdviceNamesTheVariableItSetsAndThatKAndVAreTied) {
  const RunData data = literal_run({{"backend", "ollama"}, {"binary", "ollama"}, {"api", "ollama"}});
  const Recommendation rec = recommend(data);
  const std::string md = recommend_markdown(data, rec);
  EXPECT_THAT(md, HasSubstr("**Recommended: OLLAMA_KV_CACHE_TYPE=q8_0** — non-inferior")) << md;
  EXPECT_THAT(md, HasSubstr("Ollama ties K and V: OLLAMA_KV_CACHE_TYPE is one type for both.")) << md;
  const HeadlineWords h = explain(recommend_headline(rec.models[0]), data);
  EXPECT_EQ(h.verdict, "Recommended: OLLAMA_KV_CACHE_TYPE=q8_0");
  EXPECT_THAT(h.sentence, HasSubstr("Ollama ties K and V")) << h.sentence;
  EXPECT_EQ(recommend_json(data, rec)["models"][0]["headline"]["verdict"], "Recommended: OLLAMA_KV_CACHE_TYPE=q8_0");

  // Not proven: the cell and the reference to keep, both as the variable.
  RecommendOptions strict;
  strict.margins["complete.match_reference"] = 0.0;
  strict.margins["similarity"] = 0.0;
  const HeadlineWords unproven = explain(recommend_headline(recommend(data, strict).models[0]), data);
  EXPECT_EQ(unproven.sentence.rfind("OLLAMA_KV_CACHE_TYPE=q8_0 (the cheapest such cell) answered like f16/f16", 0), 0u)
      << unproven.sentence;
  EXPECT_THAT(unproven.sentence, HasSubstr("Until then keep OLLAMA_KV_CACHE_TYPE=f16.")) << unproven.sentence;
  EXPECT_THAT(unproven.sentence, Not(HasSubstr("-ctk"))) << unproven.sentence;
}

TEST(Recommend, LaunchTemplateAdviceUsesThePresetsFlag) {
  const json server = {{"backend", "command"},
                       {"api", "openai"},
                       {"command", {{"preset", "custom"}, {"name", "Q-Server"}, {"kv_tied", false},
                                    {"command", {"{binary}", "--cache-k", "{type_k}", "--cache-v", "{type_v}"}},
                                    {"cache_types", {{"f16", "f16"}, {"q8_0", "q8_0"}, {"q4_0", "q4_0"}}}}}};
  const RunData data = literal_run(server);
  const std::string md = recommend_markdown(data, recommend(data));
  EXPECT_THAT(md, HasSubstr("**Recommended: --cache-k q8_0 --cache-v q8_0** — non-inferior to f16/f16 on all 2 gated "
                            "metrics. KV")) << md;
}

TEST(Recommend, AdaptiveCellsGetTheSequentialVerdictAndSaySo) {
  // q4_0/q4_0 of an adaptive run: 5 items of `sim` 0.2 below the reference, then 55 settled.
  json manifest = {
      {"name", "adaptive"},
      {"n_ctx", 4096},
      {"probes",
       {{{"name", "sim"}, {"kind", "telephone"},
         {"metrics", {{{"name", "similarity"}, {"direction", "higher"}, {"kind", "continuous"}, {"role", "quality"}}}}}}},
      {"cells", {cell("f16", "f16", 2, 2), cell("q4_0", "q4_0", 0.5625, 0.5625)}},
      {"config", {{"grid", {{"k", {"f16", "q4_0"}}, {"v", {"f16", "q4_0"}}, {"reference", "f16/f16"}}}}}};
  std::vector<json> records;
  for (int i = 0; i < 60; ++i) records.push_back(record("f16", "f16", "sim", i, {{"similarity", 0.9}}));
  for (int i = 0; i < 60; ++i) {
    if (i < 5) {
      records.push_back(record("q4_0", "q4_0", "sim", i, {{"similarity", 0.7}}));
      continue;
    }
    json settled = record("q4_0", "q4_0", "sim", i, json::object());
    settled["status"] = "skipped";
    settled["reason"] = "settled";
    settled["adaptive"] = {{"items", 5}, {"min_items", 5}};
    records.push_back(settled);
  }
  auto data = RunData::from(std::move(manifest), std::move(records));
  ASSERT_TRUE(data.has_value());
  const Recommendation rec = recommend(*data);
  const CellVerdict& q4 = verdict_of(rec.models[0], *data, "q4_0", "q4_0");
  ASSERT_EQ(q4.metrics.size(), 1u);
  const MetricVerdict& v = q4.metrics[0];
  EXPECT_EQ(v.result.verdict, stats::Decision::inferior);
  ASSERT_TRUE(v.adaptive.has_value());
  EXPECT_EQ(v.adaptive->items_run, 5u);
  EXPECT_EQ(v.adaptive->items_planned, 60u);
  EXPECT_EQ(v.adaptive->decided_at, 5u);
  EXPECT_THAT(v.bound, HasSubstr("anytime-valid"));
  const std::string md = recommend_markdown(*data, rec);
  EXPECT_THAT(md, HasSubstr("Adaptive verdicts")) << md;
  EXPECT_THAT(md, HasSubstr("| q4_0/q4_0 | sim.similarity | inferior | 5 | 5 of 60 |")) << md;
  EXPECT_EQ(recommend_json(*data, rec)["models"][0]["cells"][0]["metrics"][0]["adaptive"]["decided_at"], 5);
  // Settled items are neither ok nor failed in the summary.
  const RunSummary summary = summarize_run(*data);
  const CellProbeStats* s = summary.find(*data->find_cell("m", "q4_0", "q4_0"), "sim");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->items_ok, 5u);
  EXPECT_EQ(s->items_settled, 55u);
  EXPECT_TRUE(s->failed_items.empty());
  // A non-adaptive cell of the same run is untouched by it.
  EXPECT_FALSE(recommend(literal_run()).models[0].cells[0].metrics[0].adaptive.has_value());
}

TEST(Recommend, AdaptivePassFailCellsSayWhetherCurtailmentOrFutilitySettledThem) {
  // 16 items the reference passed; q4_0 failed its first 5 (4 losses of 16 are inferior whatever the rest
  // answer), q8_0 passed its first 5 (the full run decides with predictive probability 0.0672 < 0.1).
  json manifest = {
      {"name", "adaptive"},
      {"n_ctx", 4096},
      {"probes",
       {{{"name", "recall"}, {"kind", "recall"},
         {"metrics", {{{"name", "passed"}, {"direction", "higher"}, {"kind", "binary"}, {"role", "quality"}}}}}}},
      {"cells", {cell("f16", "f16", 2, 2), cell("q8_0", "q8_0", 1.0625, 1.0625), cell("q4_0", "q4_0", 0.5625, 0.5625)}},
      {"config", {{"grid", {{"k", {"f16", "q8_0", "q4_0"}}, {"v", {"f16", "q8_0", "q4_0"}}, {"reference", "f16/f16"}}}}}};
  std::vector<json> records;
  for (int i = 0; i < 16; ++i) records.push_back(record("f16", "f16", "recall", i, {{"passed", true}}));
  for (const auto& [type, passed] : {std::pair{"q8_0", true}, std::pair{"q4_0", false}}) {
    for (int i = 0; i < 16; ++i) {
      if (i < 5) {
        records.push_back(record(type, type, "recall", i, {{"passed", passed}}));
        continue;
      }
      json settled = record(type, type, "recall", i, json::object());
      settled["status"] = "skipped";
      settled["reason"] = "settled";
      settled["adaptive"] = {{"items", 5}, {"min_items", 5}, {"futility", 0.1}};
      records.push_back(settled);
    }
  }
  auto data = RunData::from(std::move(manifest), std::move(records));
  ASSERT_TRUE(data.has_value());
  const Recommendation rec = recommend(*data);
  const MetricVerdict& q4 = verdict_of(rec.models[0], *data, "q4_0", "q4_0").metrics.at(0);
  EXPECT_EQ(q4.result.verdict, stats::Decision::inferior);
  ASSERT_TRUE(q4.adaptive.has_value());
  EXPECT_EQ(q4.adaptive->by, "curtailment");
  EXPECT_EQ(q4.adaptive->decided_at, 5u);
  EXPECT_THAT(q4.bound, HasSubstr("curtailed: every outcome of the 11 items left gives it")) << q4.bound;
  const MetricVerdict& q8 = verdict_of(rec.models[0], *data, "q8_0", "q8_0").metrics.at(0);
  EXPECT_EQ(q8.result.verdict, stats::Decision::unknown);
  ASSERT_TRUE(q8.adaptive.has_value());
  EXPECT_EQ(q8.adaptive->by, "futility");
  EXPECT_EQ(q8.adaptive->decided_at, 0u);
  EXPECT_NEAR(q8.adaptive->p_decided, 0.0672, 0.0001);
  const std::string md = recommend_markdown(*data, rec);
  EXPECT_THAT(md,
              HasSubstr("| q8_0/q8_0 | recall.passed | unknown | — | 5 of 16 | futility: the full run decides with "
                        "predictive probability 0.067 |"))
      << md;
  const json j = recommend_json(*data, rec);
  bool saw_futility = false;
  for (const auto& c : j["models"][0]["cells"]) {
    const json& a = c["metrics"][0]["adaptive"];
    if (c["type_k"] == "q8_0") {
      saw_futility = true;
      EXPECT_EQ(a["by"], "futility");
      EXPECT_NEAR(a["p_decided"].get<double>(), 0.0672, 0.0001);
      EXPECT_TRUE(a["decided_at"].is_null());
    }
  }
  EXPECT_TRUE(saw_futility);
}

TEST(Cost, BytesPerTokenMemoryAndSpeedRelativeToTheReference) {
  const RunData data = literal_run();
  const CostTable costs = cell_costs(data, 131072);
  const CellCost* ref = costs.find(*data.reference("m"));
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(ref->n_ctx, 4096);
  EXPECT_DOUBLE_EQ(ref->k_bytes_per_token, 512.0);  // 2 MiB / 4096
  EXPECT_DOUBLE_EQ(ref->kv_bytes_per_token, 1024.0);
  EXPECT_DOUBLE_EQ(ref->kv_mib_at_context, 128.0);
  // 400 tokens in 50 ms on every item; the fully cached item is not counted.
  EXPECT_EQ(ref->prompt.n, 120u);
  EXPECT_DOUBLE_EQ(ref->prompt.tok_s, 8000.0);
  EXPECT_DOUBLE_EQ(ref->decode.tok_s, 100.0);
  ASSERT_TRUE(ref->prompt.ci.has_value());
  EXPECT_DOUBLE_EQ(ref->prompt.ci->lower, 8000.0);
  const CellCost* q8 = costs.find(*data.find_cell("m", "q8_0", "q8_0"));
  EXPECT_DOUBLE_EQ(q8->kv_bytes_per_token, 544.0);
  EXPECT_DOUBLE_EQ(q8->prompt_x, 0.5);
  EXPECT_DOUBLE_EQ(q8->decode_x, 1.0);
  // Without a speed probe, --max-slowdown reads the server's rates.
  EXPECT_DOUBLE_EQ(q8->pp_x_worst, 0.5);
  EXPECT_DOUBLE_EQ(q8->tg_x_worst, 1.0);
  EXPECT_THAT(cost_markdown(data, costs),
              HasSubstr("| m q8_0/q8_0 | 272 | 272 | 544 | 68.0 | 4000.0 [4000.0, 4000.0] | "
                        "120 req × 400 @ d0 | 0.50× |"))
      << cost_markdown(data, costs);
}

TEST(Cost, SpeedRatiosFromFewItemsOrALoadedHostCarryTheirCaveat) {
  const RunData plenty = literal_run();
  const CostTable calm = cell_costs(plenty);
  EXPECT_EQ(calm.find(*plenty.find_cell("m", "q8_0", "q8_0"))->speed_caveat, "");
  EXPECT_THAT(cost_markdown(plenty, calm), Not(HasSubstr("to take lightly")));

  // Two items a cell, and the q4_0 cell ended with the load at 6.2 on a 2-core host.
  json manifest = {{"name", "few"},
                   {"n_ctx", 4096},
                   {"host", {{"cores", 2}}},
                   {"probes", {{{"name", "complete"}, {"kind", "complete"},
                                {"metrics", {{{"name", "match_reference"}, {"direction", "higher"}, {"kind", "binary"},
                                              {"role", "quality"}}}}}}},
                   {"cells", {cell("f16", "f16", 2, 2), cell("q8_0", "f16", 1.0625, 2), cell("q4_0", "f16", 0.5625, 2)}},
                   {"config", {{"grid", {{"k", {"f16", "q8_0", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}}}}}};
  manifest["cells"][2]["load_avg"] = 6.2;
  manifest["cells"][1]["load_avg"] = 0.4;
  std::vector<json> records;
  for (int i = 0; i < 2; ++i)
    for (const std::string k : {"f16", "q8_0", "q4_0"})
      records.push_back(record(k, "f16", "complete", i, {{"match_reference", 1}}));
  auto few = RunData::from(std::move(manifest), std::move(records));
  ASSERT_TRUE(few.has_value());
  const CostTable costs = cell_costs(*few);
  EXPECT_EQ(costs.find(*few->reference("m"))->speed_caveat, "");
  EXPECT_EQ(costs.find(*few->find_cell("m", "q8_0", "f16"))->speed_caveat, "from 2 items");
  EXPECT_EQ(costs.find(*few->find_cell("m", "q4_0", "f16"))->speed_caveat,
            "from 2 items; host loaded (load 6.2 on 2 cores)");
  EXPECT_THAT(cost_markdown(*few, costs), HasSubstr("Prefill and decode × to take lightly"));
  EXPECT_THAT(cost_markdown(*few, costs), HasSubstr("m q4_0/f16: from 2 items; host loaded (load 6.2 on 2 cores)"));
  const auto json_costs = cost_json(*few, costs);  // kept: a loop over a temporary's member would dangle
  for (const auto& c : json_costs["cells"])
    EXPECT_EQ(c.value("speed_caveat", ""), c["id"] == "m-q4_0-f16"   ? "from 2 items; host loaded (load 6.2 on 2 cores)"
                                           : c["id"] == "m-q8_0-f16" ? "from 2 items"
                                                                     : "")
        << c.dump();
}

/// A recall-shaped cell: one long prefill of the corpus, then short follow-ups served from the prefix cache.
RunData prefill_run(int items, bool with_speed) {
  json manifest = {{"name", "p"},
                   {"n_ctx", 16384},
                   {"probes", {{{"name", "recall"}, {"kind", "recall"},
                                {"metrics", {{{"name", "similarity"}, {"direction", "higher"}, {"kind", "continuous"},
                                              {"role", "quality"}}}}}}},
                   {"cells", {cell("f16", "f16", 2, 2), cell("q4_0", "f16", 0.5625, 2)}},
                   {"config", {{"grid", {{"k", {"f16", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}}}}}};
  std::vector<json> records;
  for (const std::string k : {"f16", "q4_0"}) {
    const double slow = k == "f16" ? 1.0 : 2.0;  // q4_0 decodes at half the speed
    for (int i = 0; i < items; ++i) {
      json r = record(k, "f16", "recall", i, {{"similarity", 0.5 + 0.01 * i}});  // the same in both cells
      // Item 0 carries the corpus: 10000 tokens in 250 ms (40,000 tok/s); the rest 20 tokens in 10 ms.
      r["timings"] = {{"prompt_n", i == 0 ? 10000 : 20}, {"cache_n", i == 0 ? 0 : 10000},
                      {"prompt_ms", i == 0 ? 250.0 : 10.0}, {"predicted_n", 100},
                      {"predicted_ms", 1000.0 * slow * (i == 0 ? 1.0 : 3.0)}, {"requests", 1}};
      records.push_back(r);
    }
    if (with_speed) {
      json s = {{"cell", {{"model", "m"}, {"type_k", k}, {"type_v", "f16"}}}, {"probe", "speed"}, {"kind", "speed"},
                {"item", "d8192"}, {"status", "ok"}, {"spec", {{"depth", 8192}, {"pp", 512}, {"tg", 128}, {"repetitions", 3}}},
                {"metrics", {{"pp_tok_s", 30000.0}, {"pp_tok_s_sd", 100.0}, {"tg_tok_s", 90.0 / slow}, {"tg_tok_s_sd", 1.0}}}};
      records.push_back(s);
    }
  }
  manifest["probes"].push_back({{"name", "speed"}, {"kind", "speed"},
                                {"metrics", {{{"name", "pp_tok_s"}, {"direction", "higher"}, {"kind", "continuous"}, {"role", "cost"}},
                                             {{"name", "pp_tok_s_sd"}, {"direction", "none"}, {"kind", "continuous"}, {"role", "diagnostic"}},
                                             {{"name", "tg_tok_s"}, {"direction", "higher"}, {"kind", "continuous"}, {"role", "cost"}},
                                             {{"name", "tg_tok_s_sd"}, {"direction", "none"}, {"kind", "continuous"}, {"role", "diagnostic"}}}}});
  auto data = RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data.has_value());
  return std::move(*data);
}

TEST(Cost, PrefillIsTheLongRequestsTokensOverTheirTimeNotTheMedianOfShortFollowUps) {
  const RunData data = prefill_run(8, false);
  const CostTable costs = cell_costs(data);
  const CellCost* ref = costs.find(*data.reference("m"));
  ASSERT_NE(ref, nullptr);
  // Only the corpus prefill counts (the 7 follow-ups of 20 tokens would have said 2,000 tok/s).
  EXPECT_EQ(ref->prompt.n, 1u);
  EXPECT_EQ(ref->prompt.skipped, 7u);
  EXPECT_DOUBLE_EQ(ref->prompt.tok_s, 40000.0);
  EXPECT_DOUBLE_EQ(ref->prompt.depth, 0.0);
  EXPECT_FALSE(ref->prompt.ci.has_value()) << "no bound from one item";
  // Decode token-weighted: 800 tokens in 1000 + 7 × 3000 ms, at the depth after each prompt.
  EXPECT_EQ(ref->decode.n, 8u);
  EXPECT_DOUBLE_EQ(ref->decode.tok_s, 800.0 / 22000.0 * 1000.0);
  EXPECT_DOUBLE_EQ(ref->decode.depth, (10000.0 + 7 * 10020.0) / 8);
  ASSERT_TRUE(ref->decode.ci.has_value());
  EXPECT_LE(ref->decode.ci->lower, ref->decode.tok_s);
  EXPECT_GE(ref->decode.ci->upper, ref->decode.tok_s);
  const std::string md = cost_markdown(data, costs);
  // 2 + 2 MiB over the run's -c of 16384: 256 B/token.
  EXPECT_THAT(md, HasSubstr("| m f16/f16 (ref) | 128 | 128 | 256 | 4.0 | 40000.0 | 1 req × 10000 @ d0 | 1.00× |"))
      << md;
  EXPECT_THAT(md, Not(HasSubstr("1000000")));
}

TEST(Cost, TooFewTokensGiveADashWithTheReasonNeverASentinel) {
  const RunData data = literal_run();
  // The literal run's items all decode 20 tokens; a one-token request (teacher forcing) reports ~0 ms.
  std::vector<json> records;
  for (int i = 0; i < 3; ++i) {
    json r = record("f16", "f16", "complete", i, {{"match_reference", 1}}, 1.0, 10);
    r["timings"]["predicted_n"] = 1;
    r["timings"]["predicted_ms"] = 0.001;
    records.push_back(r);
  }
  auto small = RunData::from(data.manifest(), std::move(records));
  ASSERT_TRUE(small.has_value());
  const CostTable costs = cell_costs(*small);
  const CellCost* ref = costs.find(*small->reference("m"));
  EXPECT_EQ(ref->prompt.n, 0u);
  EXPECT_EQ(ref->decode.n, 0u);
  EXPECT_TRUE(std::isnan(ref->decode.tok_s));
  const std::string md = cost_markdown(*small, costs);
  EXPECT_THAT(md,
              HasSubstr("| m f16/f16 (ref) | 512 | 512 | 1024 | 4.0 | — | none large enough | — | — | none large enough | — |"))
      << md;
  EXPECT_THAT(md, Not(HasSubstr("1000000")));
}

TEST(Cost, LlamaBenchSpeedsSitBesideTheServersAtTheirDepth) {
  const RunData data = prefill_run(4, true);
  const CostTable costs = cell_costs(data);
  const CellCost* q4 = costs.find(*data.find_cell("m", "q4_0", "f16"));
  ASSERT_EQ(q4->bench.size(), 1u);
  EXPECT_EQ(q4->bench[0].depth, 8192);
  EXPECT_DOUBLE_EQ(q4->bench[0].tg_tok_s, 45.0);
  EXPECT_DOUBLE_EQ(q4->bench[0].tg_x, 0.5);
  EXPECT_DOUBLE_EQ(q4->bench[0].pp_x, 1.0);
  EXPECT_DOUBLE_EQ(q4->tg_x_worst, 0.5);
  const std::string md = cost_markdown(data, costs);
  EXPECT_THAT(md, HasSubstr("| pp512 @ d8192 tok/s | tg128 @ d8192 tok/s |")) << md;
  EXPECT_THAT(md, HasSubstr("| 30000.0 ± 100.0 | 45.0 ± 1.0 |")) << md;
  const auto j = cost_json(data, costs);
  EXPECT_EQ(j["cells"][1]["bench"][0]["tg_tok_s"], 45.0);
}

TEST(Recommend, MaxSlowdownDropsAPairSlowerThanRTimesTheReference) {
  const RunData data = prefill_run(4, true);
  RecommendOptions options;
  const Recommendation plain = recommend(data, options);
  ASSERT_TRUE(plain.models[0].recommended.has_value());
  EXPECT_EQ(*plain.models[0].recommended, *data.find_cell("m", "q4_0", "f16"));
  EXPECT_THAT(recommend_markdown(data, plain), HasSubstr("tg128 @ d8192 45.0 tok/s (0.50×)"))
      << recommend_markdown(data, plain);
  options.max_slowdown = 0.9;
  const Recommendation fast = recommend(data, options);
  EXPECT_FALSE(fast.models[0].recommended.has_value());
  EXPECT_EQ(verdict_of(fast.models[0], data, "q4_0", "f16").too_slow, "tg 0.50× < 0.90×");
  const std::string md = recommend_markdown(data, fast);
  EXPECT_THAT(md, HasSubstr("1 non-inferior cell is slower than --max-slowdown allows")) << md;
  EXPECT_THAT(md, HasSubstr("(too slow: tg 0.50× < 0.90×)")) << md;
  options.max_slowdown = 0.5;
  EXPECT_TRUE(recommend(data, options).models[0].recommended.has_value());
}

TEST(Recommend, AProvenCellALimitLeavesOutIsSaidSoNeverNotProvenWithNothingUnsettled) {
  const RunData data = prefill_run(4, true);
  RecommendOptions options;
  options.max_slowdown = 0.9;  // leaves out q4_0/f16, the only non-inferior cell
  const Recommendation fast = recommend(data, options);
  ASSERT_FALSE(fast.models[0].recommended.has_value());
  const RecommendHeadline h = recommend_headline(fast.models[0]);
  EXPECT_EQ(h.kind, RecommendHeadline::Kind::over_limits);
  const HeadlineWords words = explain(h, data);
  EXPECT_EQ(words.verdict, "Nothing within your limits");
  EXPECT_THAT(words.sentence, HasSubstr("--max-slowdown: tg 0.50× < 0.90×")) << words.sentence;
  EXPECT_THAT(words.sentence, Not(HasSubstr("not proven"))) << words.sentence;
  EXPECT_THAT(words.sentence, Not(HasSubstr("corpus"))) << words.sentence;
}

}  // namespace
}  // namespace kvsweep::report
