#include "kvsweep/report/analysis/published.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "kvsweep/report/output/summary_json.hpp"
#include "report_fixture.hpp"

using ::testing::HasSubstr;

namespace kvsweep::report {
namespace {

const Generator kGenerator{"0.0.0-test", "0000000test"};

std::filesystem::path published_dir() { return std::filesystem::path(KVSWEEP_TEST_DATA) / ".." / ".." / "published"; }

nlohmann::json fixture_summary() {
  auto data = RunData::from(nlohmann::json::parse(testing::kManifest), testing::fixture_records());
  EXPECT_TRUE(data);
  return nlohmann::json::parse(summary_document(*data, summarize_run(*data), kGenerator).dump());
}

/// A published document over the fixture's 2 × 2 grid and its `complete` probe.
nlohmann::json grid_document() {
  return nlohmann::json::parse(R"json({
    "schema_version": 2, "kind": "kvsweep-published", "name": "literal",
    "source": {"title": "A Literal Post", "file": "literal.txt"}, "setup": {"model": "tiny"},
    "probe": "complete", "metric": "common_prefix_chars", "pass_metric": "match_reference",
    "decimals": 2, "items_per_cell": 4,
    "summaries": {"rows": [{"run": 1, "id": "a", "label": "a (lit)", "combos": 4,
                            "pass": {"mean": 3.5, "sd": 0.5},
                            "matched": {"mean": 90.0, "sd": 10.0, "min": 80.0, "max": 100.0}, "gradient": "none"}]},
    "grids": [{"id": "lit", "title": "Literal grid", "range": [0, 200], "type_v": ["f16", "q4_0"],
               "rows": [{"type_k": "f16", "values": [105.00, 150.00]},
                        {"type_k": "q4_0", "values": [53.33, 60.00]}]}]
  })json");
}

nlohmann::json delta_document() {
  return nlohmann::json::parse(R"json({
    "schema_version": 2, "kind": "kvsweep-published", "name": "literal-deltas",
    "source": {"title": "A Literal Post", "file": "literal.txt"}, "setup": {},
    "probe": "telephone", "metric": "final_similarity", "decimals": 2,
    "deltas": {"title": "Deltas", "definition": "f16 minus q4_0 V",
               "reference": {"label": "f16 KV", "type_k": "f16", "type_v": "f16"},
               "other": {"label": "q4_0 V", "type_k": "f16", "type_v": "q4_0"},
               "models": [{"label": "the tiny one", "match": ["TINY"], "delta": 0.17, "reference_value": 0.89},
                          {"label": "a big one", "match": ["80b", "next"], "delta": -0.36}],
               "aggregate": {"models": 2, "improved": 1, "mean_delta": -0.1}}
  })json");
}

PublishedCompareOptions only(const std::string& metric, const std::string& grid) {
  PublishedCompareOptions o;
  o.metric = metric;
  o.grid = grid;
  return o;
}

std::string parse_error(const nlohmann::json& doc) {
  auto p = parse_published(doc);
  EXPECT_FALSE(p);
  return p ? "" : p.error().message;
}

// ---- the real published files ----------------------------------------------------------------

TEST(Published, Seed001ParsesWithTwoFullGridsAndFourRuns) {
  auto p = load_published(published_dir() / "seed001-codeneedle.json");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->source.title, "KV-Cache Quantization vs Positional Recall");
  EXPECT_EQ(p->source.file, "001_aae9b99ca4456d81.txt");
  EXPECT_EQ(p->probe, "recall");
  EXPECT_EQ(p->metric, "primary_matched");
  EXPECT_EQ(p->items_per_cell, 16u);
  ASSERT_EQ(p->grids.size(), 2u);
  const std::vector<std::string> types{"bf16", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0"};
  for (const auto& g : p->grids) {
    EXPECT_EQ(g.cells.size(), 36u) << g.id;
    EXPECT_EQ(g.k_types, types);
    EXPECT_EQ(g.v_types, types);
    for (const auto& c : g.cells) {
      EXPECT_GE(c.value, 0.0) << g.id << " " << c.type_k << "/" << c.type_v;
      EXPECT_LE(c.value, 20.0) << g.id << " " << c.type_k << "/" << c.type_v;
    }
  }
  EXPECT_EQ(p->grids[0].id, "proprietary-full");
  EXPECT_EQ(p->grids[1].id, "random-bodies");
  // Spot checks against the post: bf16/q5_0 is run 3's low; q8_0/q8_0 one of run 4's three 19.94s.
  EXPECT_DOUBLE_EQ(p->grids[0].cells[3].value, 18.38);
  EXPECT_EQ(p->grids[0].cells[3].type_v, "q5_0");
  EXPECT_DOUBLE_EQ(p->grids[1].cells[7].value, 19.94);
  EXPECT_EQ(p->grids[1].cells[7].type_k, "q8_0");
  EXPECT_EQ(std::count_if(p->grids[1].cells.begin(), p->grids[1].cells.end(),
                          [](const PublishedCell& c) { return c.value == 20.0; }),
            33);
  ASSERT_EQ(p->summaries.size(), 4u);
  for (const auto& r : p->summaries) {
    EXPECT_EQ(r.combos, 36.0);
    EXPECT_LE(r.pass_mean, 16.0);
    EXPECT_LE(r.min, r.mean);
    EXPECT_LE(r.mean, r.max);
    EXPECT_LE(r.max, 20.0);
    EXPECT_EQ(r.gradient, "none");
  }
}

TEST(Published, Seed001GridsAgreeWithTheirSummaryRows) {
  // The post's summary rows for runs 3 and 4 are its grids' mean ± sd and range. Both are rounded
  // to 2 decimals from the unrounded cell means, so they may disagree by up to 0.005 + 0.005
  // (run 4: the cells' true 19.9375 print as 19.94, and the true mean 19.9948 as 19.99).
  auto p = load_published(published_dir() / "seed001-codeneedle.json");
  ASSERT_TRUE(p);
  for (const auto& g : p->grids) {
    const auto row = std::find_if(p->summaries.begin(), p->summaries.end(),
                                  [&](const PublishedSummaryRow& r) { return r.id == g.id; });
    ASSERT_NE(row, p->summaries.end()) << g.id;
    std::vector<double> v;
    for (const auto& c : g.cells) v.push_back(c.value);
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    const double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
    EXPECT_NEAR(mean, row->mean, 0.01 + 1e-9) << g.id;
    EXPECT_NEAR(sd, row->sd, 0.01 + 1e-9) << g.id;
    EXPECT_DOUBLE_EQ(*std::min_element(v.begin(), v.end()), row->min) << g.id;
    EXPECT_DOUBLE_EQ(*std::max_element(v.begin(), v.end()), row->max) << g.id;
  }
}

TEST(Published, Seed000ParsesWithTheSevenHeroModels) {
  auto p = load_published(published_dir() / "seed000-telephone.json");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->source.file, "000_214420634bbdc440.txt");
  EXPECT_EQ(p->metric, "final_similarity");
  ASSERT_TRUE(p->deltas);
  const auto& d = *p->deltas;
  EXPECT_EQ(d.type_k_reference, "f16");
  EXPECT_EQ(d.type_k_other, "q8_0");
  ASSERT_EQ(d.models.size(), 7u);
  std::size_t with_delta = 0;
  for (const auto& m : d.models) {
    for (double v : {m.delta, m.reference_value, m.other_value, m.range_lo, m.range_hi}) {
      if (std::isnan(v)) continue;
      EXPECT_GE(v, -1.0) << m.label;
      EXPECT_LE(v, 1.0) << m.label;
    }
    with_delta += !std::isnan(m.delta);
  }
  // The 4B instruct model is "flat ~0.93–0.94": a range, no delta.
  EXPECT_EQ(with_delta, 6u);
  EXPECT_TRUE(std::isnan(d.models[3].delta));
  EXPECT_DOUBLE_EQ(d.models[3].range_lo, 0.93);
  EXPECT_DOUBLE_EQ(d.models[0].delta, 0.62);
  EXPECT_DOUBLE_EQ(d.models[0].other_value, 0.23);
  EXPECT_DOUBLE_EQ(d.models[0].reference_value, 0.84);
  EXPECT_DOUBLE_EQ(d.models[6].delta, -0.36);
  EXPECT_DOUBLE_EQ(d.models[6].other_value, 0.79);
  EXPECT_DOUBLE_EQ(d.models[6].reference_value, 0.43);
  ASSERT_TRUE(d.aggregate);
  EXPECT_EQ(d.aggregate->models, 22.0);
  EXPECT_EQ(d.aggregate->improved, 17.0);
  EXPECT_DOUBLE_EQ(d.aggregate->mean_delta, 0.09);
}

// ---- bad files -----------------------------------------------------------------------------

TEST(Published, BadDocumentsFailNamingWhere) {
  auto doc = grid_document();
  doc["kind"] = "kvsweep-summary";
  EXPECT_THAT(parse_error(doc), HasSubstr("kind"));

  doc = grid_document();
  doc["schema_version"] = 1;  // before the setup block and stated precision
  EXPECT_THAT(parse_error(doc), HasSubstr("schema_version"));

  doc = grid_document();
  doc["source"].erase("file");
  EXPECT_EQ(parse_error(doc), "source.file: missing: give the shipped document's \"file\" or its \"url\"");
  doc["source"]["url"] = "https://example.org/post";
  EXPECT_TRUE(parse_published(doc));

  doc = grid_document();
  doc["grids"][0]["rows"][1]["values"] = {53.33};
  EXPECT_EQ(parse_error(doc), "grids[0].rows[1].values: expected 2 numbers (one per type_v), got 1");

  doc = grid_document();
  doc["grids"][0]["type_v"][1] = "q4";
  EXPECT_THAT(parse_error(doc), HasSubstr("grids[0].type_v[1]: unknown cache type 'q4'"));

  doc = grid_document();
  doc["grids"][0]["rows"][0]["values"][1] = 250;
  EXPECT_EQ(parse_error(doc), "grids[0].rows[0].values[1]: 250 is outside the grid's range [0, 200]");

  doc = grid_document();
  doc["summaries"]["rows"][0]["matched"]["mean"] = "90";
  EXPECT_EQ(parse_error(doc), "summaries.rows[0].matched.mean: expected a number, got string \"90\"");

  doc = delta_document();
  doc["deltas"]["models"][1].erase("delta");
  EXPECT_EQ(parse_error(doc), "deltas.models[1]: no number (give delta, reference_value, other_value or range)");
}

TEST(Published, UnreadableOrInvalidFilesFail) {
  testing::TempDir dir("published");
  auto missing = load_published(dir.path() / "nope.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, core::ErrorKind::io);
  testing::write_text(dir.path() / "broken.json", "{\"kind\": ");
  auto broken = load_published(dir.path() / "broken.json");
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().kind, core::ErrorKind::parse);
  EXPECT_THAT(broken.error().message, HasSubstr("broken.json: not valid JSON"));
}

// ---- against a run ---------------------------------------------------------------------------

TEST(Published, GridCellsMatchByTypesWithCisAndNotRun) {
  auto p = parse_published(grid_document());
  ASSERT_TRUE(p) << p.error().message;
  auto cmp = compare_published(fixture_summary(), *p);
  ASSERT_TRUE(cmp) << cmp.error().message;
  EXPECT_TRUE(cmp->warnings.empty());
  ASSERT_EQ(cmp->grids.size(), 1u);
  const GridCheck& g = cmp->grids[0];
  EXPECT_EQ(g.model, "tiny");
  EXPECT_EQ(g.probe, "complete");
  ASSERT_EQ(g.cells.size(), 4u);
  // f16/f16: 100 120 90 110 → 105, exactly the published value.
  EXPECT_TRUE(g.cells[0].run);
  EXPECT_EQ(g.cells[0].n, 4u);
  EXPECT_DOUBLE_EQ(g.cells[0].run_mean, 105.0);
  EXPECT_DOUBLE_EQ(g.cells[0].diff, 0.0);
  EXPECT_TRUE(g.cells[0].inside);
  // f16/q4_0: 100 120 40 110 → 92.5; 150 is above any resampled mean (max 120).
  EXPECT_DOUBLE_EQ(g.cells[1].run_mean, 92.5);
  EXPECT_DOUBLE_EQ(g.cells[1].diff, 92.5 - 150.0);
  EXPECT_FALSE(g.cells[1].inside);
  // q4_0/f16 (crashed after 3 items): 10 120 30 → 53.333…; the post's 53.33 is its rounding.
  EXPECT_EQ(g.cells[2].n, 3u);
  EXPECT_NEAR(g.cells[2].diff, 160.0 / 3.0 - 53.33, 1e-9);
  EXPECT_TRUE(g.cells[2].inside);
  // q4_0/q4_0 failed to load: not run.
  EXPECT_FALSE(g.cells[3].run);
  EXPECT_EQ(g.count_not_run(), 1u);
  EXPECT_EQ(g.count_inside(), 2u);

  const std::string md = write_published_comparison(*cmp);
  EXPECT_THAT(md, HasSubstr("| q4_0 | q4_0 | 60.00 | not run | — | — | — | — | not run |")) << md;
  EXPECT_THAT(md, HasSubstr("2 of 3 run figures reproduce within ±0.005 (2 decimals as published); 1 of 4 published "
                            "figures not run."))
      << md;
  EXPECT_EQ(published_exit_status(*cmp), 1) << "f16/q4_0 does not reproduce";
  EXPECT_THAT(md, HasSubstr("Source: \"A Literal Post\" (literal.txt)")) << md;
}

TEST(Published, SummaryRowOfTheRunSitsBesideThePublishedOne) {
  auto p = parse_published(grid_document());
  ASSERT_TRUE(p);
  auto cmp = compare_published(fixture_summary(), *p);
  ASSERT_TRUE(cmp);
  ASSERT_EQ(cmp->headlines.size(), 1u);
  const RunHeadline& h = cmp->headlines[0];
  EXPECT_EQ(h.model, "tiny");
  EXPECT_EQ(h.combos, 3u);
  EXPECT_EQ(h.k, 4u);
  // Passing items per cell: 4, 3, 1.
  EXPECT_NEAR(h.pass_mean, 8.0 / 3.0, 1e-12);
  EXPECT_NEAR(h.pass_sd, std::sqrt(7.0 / 3.0), 1e-12);
  EXPECT_NEAR(h.mean, (105.0 + 92.5 + 160.0 / 3.0) / 3.0, 1e-12);
  EXPECT_NEAR(h.min, 160.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(h.max, 105.0);
  const std::string md = write_published_comparison(*cmp);
  EXPECT_THAT(md, HasSubstr("| published | a (lit) | 4 | 3.50 ± 0.50 /4 | 90.00 ± 10.00 | 80.00 – 100.00 | none |"))
      << md;
  EXPECT_THAT(md,
              HasSubstr("| this run | tiny · complete | 3 | 2.67 ± 1.53 /4 | 83.61 ± 26.96 | 53.33 – 105.00 | no |"))
      << md;
}

TEST(Published, TheMetricMustBeTheOneThePublishedGridsHold) {
  // Another metric beside the published one would be a difference of units (the run's
  // `passed` beside the published `primary_matched` would read as "Δ −19.00").
  auto p = parse_published(grid_document());
  ASSERT_TRUE(p);
  auto same = compare_published(fixture_summary(), *p, only(p->metric, ""));
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_EQ(same->metric, p->metric);
  auto other = compare_published(fixture_summary(), *p, only("match_reference", ""));
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().kind, core::ErrorKind::invalid);
  EXPECT_THAT(other.error().message,
              HasSubstr("--metric match_reference: " + p->name + " publishes " + p->metric + ", not 'match_reference'"))
      << other.error().message;
}

TEST(Published, UnknownGridIsAnErrorAndAMissingProbeIsNotRun) {
  auto p = parse_published(grid_document());
  ASSERT_TRUE(p);
  auto bad = compare_published(fixture_summary(), *p, only("", "nope"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, core::ErrorKind::invalid);
  EXPECT_THAT(bad.error().message, HasSubstr("grids: lit"));

  auto doc = grid_document();
  doc["probe"] = "recall";
  doc["metric"] = "primary_matched";
  doc["pass_metric"] = "passed";
  auto other = parse_published(doc);
  ASSERT_TRUE(other) << other.error().message;
  auto cmp = compare_published(fixture_summary(), *other);
  ASSERT_TRUE(cmp);
  ASSERT_EQ(cmp->warnings.size(), 1u);
  EXPECT_THAT(cmp->warnings[0], HasSubstr("no probe named or of kind 'recall' (its probes: complete, telephone)"));
  ASSERT_EQ(cmp->grids.size(), 1u);
  EXPECT_EQ(cmp->grids[0].count_not_run(), 4u);
  EXPECT_EQ(published_exit_status(*cmp), 0) << "figures not run are not failures";

  auto not_a_summary = compare_published(nlohmann::json::object(), *other);
  ASSERT_FALSE(not_a_summary);
  EXPECT_EQ(not_a_summary.error().kind, core::ErrorKind::parse);
}

TEST(Published, ModelDeltasArePairedAndUnmatchedModelsNotRun) {
  auto p = parse_published(delta_document());
  ASSERT_TRUE(p) << p.error().message;
  auto cmp = compare_published(fixture_summary(), *p);
  ASSERT_TRUE(cmp) << cmp.error().message;
  ASSERT_EQ(cmp->deltas.size(), 2u);
  const ModelDeltaCheck& tiny = cmp->deltas[0];
  EXPECT_EQ(tiny.model, "tiny");
  // Final similarities f16/f16 0.88, 0.90; f16/q4_0 0.70, 0.75 on the same two chains.
  EXPECT_EQ(tiny.n_pairs, 2u);
  EXPECT_NEAR(tiny.delta, 0.165, 1e-12);
  EXPECT_NEAR(tiny.delta_lower, 0.15, 1e-12);
  EXPECT_NEAR(tiny.delta_upper, 0.18, 1e-12);
  EXPECT_NEAR(tiny.reference_mean, 0.89, 1e-12);
  EXPECT_NEAR(tiny.other_mean, 0.725, 1e-12);
  EXPECT_TRUE(cmp->deltas[1].model.empty());
  EXPECT_EQ(cmp->aggregate.models, 1u);
  EXPECT_EQ(cmp->aggregate.improved, 1u);
  EXPECT_NEAR(cmp->aggregate.mean_delta, 0.165, 1e-12);
  const std::string md = write_published_comparison(*cmp);
  EXPECT_THAT(md,
              HasSubstr("| the tiny one | tiny | +0.17 | +0.165 | [0.150, 0.180] | yes | 0.89 | 0.890 [0.880, 0.900] | — | "
                        "0.725 [0.700, 0.750] |"))
      << md;
  EXPECT_THAT(md, HasSubstr("| a big one | not run | -0.36 | — | — | — | — | — | — | — |")) << md;
  EXPECT_THAT(md, HasSubstr("Published: 2 models, 1 improved under f16 KV, mean Δ -0.10.")) << md;
  EXPECT_THAT(md, HasSubstr("This run: 1 model with both settings, 1 improved under f16 KV, mean Δ +0.165."))
      << md;
  EXPECT_EQ(tiny.outcome, Reproduced::yes);
  EXPECT_EQ(tiny.test, ReproTest::interval);
  EXPECT_EQ(published_exit_status(*cmp), 0);
}

TEST(Published, Seed000MatchesARunModelByTheWordsOfItsTag) {
  // The run calls its model "tiny" but pulled the Ollama tag qwen3:0.6b-fp16; only the f16 cell ran.
  auto manifest = nlohmann::json::parse(testing::kManifest);
  manifest["models"][0]["path"] = "qwen3:0.6b-fp16";
  auto data = RunData::from(std::move(manifest), testing::fixture_records());
  ASSERT_TRUE(data);
  const auto run = nlohmann::json::parse(summary_document(*data, summarize_run(*data), kGenerator).dump());
  auto p = load_published(published_dir() / "seed000-telephone.json");
  ASSERT_TRUE(p);
  auto cmp = compare_published(run, *p);
  ASSERT_TRUE(cmp);
  ASSERT_EQ(cmp->deltas.size(), 7u);
  const ModelDeltaCheck& small = cmp->deltas[0];
  EXPECT_EQ(small.published.label, "0.6B fp16 weights");
  EXPECT_EQ(small.model, "tiny");
  EXPECT_TRUE(small.has_reference);
  EXPECT_FALSE(small.has_other);  // no q8_0/q8_0 cell in the run
  EXPECT_NEAR(small.reference_mean, 0.89, 1e-12);
  EXPECT_TRUE(std::isnan(small.delta));
  // "0.6B q8_0 weights" needs the word q8_0, which the tag does not hold.
  EXPECT_TRUE(cmp->deltas[1].model.empty());
  EXPECT_EQ(cmp->aggregate.models, 0u);
  const std::string md = write_published_comparison(*cmp);
  EXPECT_THAT(md,
              HasSubstr("| 0.6B fp16 weights | tiny | +0.62 | — | — | — | 0.84 | 0.890 [0.880, 0.900] | 0.23 | not run |"))
      << md;
}

TEST(Published, RealFilesAgainstTheFixtureListEverythingNotRun) {
  // The fixture has no recall probe and no Qwen3 model: every published number is "not run", exit-free.
  for (const char* file : {"seed001-codeneedle.json", "seed000-telephone.json"}) {
    auto p = load_published(published_dir() / file);
    ASSERT_TRUE(p) << file;
    auto cmp = compare_published(fixture_summary(), *p);
    ASSERT_TRUE(cmp) << file;
    for (const auto& g : cmp->grids) EXPECT_EQ(g.count_not_run(), 36u) << file;
    for (const auto& d : cmp->deltas) EXPECT_TRUE(d.model.empty()) << file << " " << d.published.label;
    EXPECT_FALSE(write_published_comparison(*cmp).empty());
  }
}

}  // namespace
}  // namespace kvsweep::report
