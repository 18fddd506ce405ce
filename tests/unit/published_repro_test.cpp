// Reproducing a published grid: the format's errors, like-with-like pairing by variant,
// the single-item and no-spread cases, the setup differences, the exit status and the export.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "kvsweep/report/analysis/published.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/output/summary_json.hpp"
#include "report_fixture.hpp"

using ::testing::HasSubstr;

namespace kvsweep::report {
namespace {

using json = nlohmann::json;

/// The golden fixture's summary (model tiny; probes complete and telephone), read back.
Summary fixture_document() {
  auto data = RunData::from(json::parse(testing::kManifest), testing::fixture_records());
  EXPECT_TRUE(data);
  return make_summary(*data, summarize_run(*data), {"0.0.0-test", "0000000test"});
}

std::filesystem::path published_dir() { return std::filesystem::path(KVSWEEP_TEST_DATA) / ".." / ".." / "published"; }

/// A metric of n items: its mean, 95% CI and values by item.
SummaryMetric metric(std::string name, std::size_t n, double mean, double lower, double upper,
                     std::vector<std::pair<std::string, double>> values) {
  SummaryMetric m;
  m.name = std::move(name);
  m.n = n;
  m.mean = mean;
  m.ci_lower = lower;
  m.ci_upper = upper;
  m.values = std::move(values);
  return m;
}

/// A run of one model under two variants, a kld probe (one item per cell) and a divergence probe with
/// two items; the rotation-off cells hold other numbers than the rotation-on ones.
Summary variant_run() {
  Summary run;
  run.run_name = "two-variants";
  run.models = {{"smollm2", "/m/smollm2.gguf", std::string(64, 'a')}};
  run.probes = {{"kld", "kld", 1, true, true, false, "", "", {probe::distance("mean_kld", probe::Direction::lower_better, probe::MetricKind::continuous, 0.01)}, {}},
                {"divergence-reference", "divergence", 2, true, true, false, "", "",
                 {probe::quality("flip_index", probe::Direction::higher_better, probe::MetricKind::count)}, {}}};
  for (const std::string variant : {"rot-on", "rot-off"}) {
    const double scale = variant == "rot-on" ? 1.0 : 3.0;
    for (const auto& [k, kld] : std::vector<std::pair<std::string, double>>{{"f16", 0.0}, {"q4_0", 0.01131}}) {
      SummaryResult r;
      r.model = "smollm2";
      r.variant = variant;
      r.type_k = k;
      r.type_v = "f16";
      r.probe = "kld";
      const double v = kld * scale;
      r.metrics = {metric("mean_kld", 1, v, v, v, {{"kld", v}})};
      run.results.push_back(r);
      r.probe = "divergence-reference";
      const double a = k == "f16" ? 32 : 0, b = k == "f16" ? 32 : 3 * scale;
      r.metrics = {metric("flip_index", 2, (a + b) / 2, std::min(a, b), std::max(a, b), {{"p0", a}, {"p1", b}})};
      run.results.push_back(r);
    }
  }
  return run;
}

/// A published file of variant_run's rotation-on figures: kld's mean, divergence's per item.
json variant_document() {
  return json::parse(R"json({
    "schema_version": 2, "kind": "kvsweep-published", "name": "rot",
    "source": {"title": "Rotation", "url": "https://example.org/rot"},
    "setup": {"model": "smollm2", "model_sha256": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
              "probes": {"divergence-reference": {"kind": "divergence", "items": 2}}},
    "grids": [
      {"id": "on-kld", "variant": "rot-on", "settings": {"env": {"LLAMA_ATTN_ROT_DISABLE": "0"}},
       "probe": "kld", "metric": "mean_kld", "decimals": 5, "type_v": ["f16"],
       "rows": [{"type_k": "f16", "values": [0.0]}, {"type_k": "q4_0", "values": [0.01131]}]},
      {"id": "on-flip", "variant": "rot-on", "probe": "divergence-reference", "metric": "flip_index", "tolerance": 0,
       "items": ["p0", "p1"], "type_v": ["f16", "q8_0"],
       "rows": [{"type_k": "f16", "values": [[32, 32], null]}, {"type_k": "q4_0", "values": [[0, 3], [5, 6]]}]}
    ]
  })json");
}

std::string parse_error(const json& doc) {
  auto p = parse_published(doc);
  EXPECT_FALSE(p);
  return p ? "" : p.error().message;
}

TEST(PublishedFormat, UnknownKeysAndMetricsAreErrorsWithDidYouMean) {
  ASSERT_TRUE(parse_published(variant_document())) << parse_error(variant_document());
  auto doc = variant_document();
  doc["grids"][0]["decimal"] = 5;
  EXPECT_EQ(parse_error(doc), "grids[0]: unknown key 'decimal' (did you mean 'decimals'?)");
  doc = variant_document();
  doc["setup"]["modle"] = "x";
  EXPECT_EQ(parse_error(doc), "setup: unknown key 'modle' (did you mean 'model'?)");
  doc = variant_document();
  doc["grids"][0]["metric"] = "mean_kl";
  EXPECT_THAT(parse_error(doc), HasSubstr("grids[0].metric: unknown metric 'mean_kl' of a kld probe (did you mean 'mean_kld'?)"));
  doc = variant_document();
  doc["grids"][1]["probe"] = "divergence-refrence";
  EXPECT_THAT(parse_error(doc), HasSubstr("grids[1].probe: unknown probe 'divergence-refrence' (did you mean 'divergence-reference'?)"));
  doc = variant_document();
  doc["setup"]["model_sha256"] = "abc";
  EXPECT_THAT(parse_error(doc), HasSubstr("setup.model_sha256: expected a sha256"));
}

TEST(PublishedFormat, PrecisionIsStatedNeverDefaulted) {
  auto doc = variant_document();
  doc["grids"][0].erase("decimals");
  EXPECT_THAT(parse_error(doc), HasSubstr("grids[0]: no precision: state \"decimals\""));
  doc["decimals"] = 4;  // the file's, for every grid that states none
  auto p = parse_published(doc);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->grids[0].precision.decimals, 4);
  EXPECT_DOUBLE_EQ(p->grids[0].precision.allowed(), 0.00005);
  EXPECT_DOUBLE_EQ(p->grids[1].precision.allowed(), 0.0) << "the grid's own tolerance 0 wins";
  doc = variant_document();
  doc.erase("setup");
  EXPECT_THAT(parse_error(doc), HasSubstr("setup: missing"));
  doc = variant_document();
  doc["grids"][0].erase("variant");
  EXPECT_THAT(parse_error(doc), HasSubstr("grids[0].settings: settings are a variant's"));
  doc = variant_document();
  doc["grids"][1]["rows"][1]["values"][0] = json::array({1});
  EXPECT_EQ(parse_error(doc), "grids[1].rows[1].values[0]: expected 2 numbers (one per item), got array [1]");
}

TEST(PublishedRepro, AGridIsPairedWithItsOwnVariantOnly) {
  auto p = parse_published(variant_document());
  ASSERT_TRUE(p);
  auto cmp = compare_published(variant_run(), *p);
  ASSERT_TRUE(cmp) << cmp.error().message;
  ASSERT_EQ(cmp->grids.size(), 2u) << "one check per published grid: never the rot-off cells beside rot-on figures";
  const GridCheck& kld = cmp->grids[0];
  EXPECT_EQ(kld.variant, "rot-on");
  EXPECT_TRUE(kld.unpaired.empty());
  EXPECT_DOUBLE_EQ(kld.cells[1].run_mean, 0.01131) << "rot-off's q4_0 is 0.03393";
  EXPECT_TRUE(cmp->caveats.empty()) << "the model is matched by its sha256";

  // The same figures published as rotation-off: they pair with rot-off's cells, and do not reproduce.
  auto doc = variant_document();
  doc["grids"][0]["variant"] = "rot-off";
  doc["grids"][0]["settings"]["env"]["LLAMA_ATTN_ROT_DISABLE"] = "1";
  auto off = compare_published(variant_run(), *parse_published(doc));
  ASSERT_TRUE(off);
  EXPECT_DOUBLE_EQ(off->grids[0].cells[1].run_mean, 0.01131 * 3);
  EXPECT_EQ(off->grids[0].cells[1].outcome(), Reproduced::no);

  // A variant the run has under another name, or with other settings, is not paired.
  doc["grids"][0]["variant"] = "rotation-off";
  auto other = compare_published(variant_run(), *parse_published(doc));
  ASSERT_TRUE(other);
  EXPECT_THAT(other->grids[0].unpaired, HasSubstr("no cells of variant rotation-off"));
  EXPECT_THAT(other->grids[0].unpaired, HasSubstr("its variants: rot-off, rot-on"));
  EXPECT_EQ(other->grids[0].count_not_run(), 2u);
  PublishedCompareOptions options;
  options.run_variant_settings["rot-on"] = json{{"env", {{"LLAMA_ATTN_ROT_DISABLE", "1"}}}, {"args", json::array()}};
  auto settings = compare_published(variant_run(), *p, options);
  ASSERT_TRUE(settings);
  EXPECT_THAT(settings->grids[0].unpaired, HasSubstr("other settings"));
  ASSERT_FALSE(settings->setup.empty());
  EXPECT_EQ(settings->setup[0].field, "variant rot-on settings");
}

/// A cell mean the run has beside a published figure.
CellCheck run_figure(double published, std::size_t n, double mean, double lo, double hi) {
  CellCheck c;
  c.type_k = "q8_0";
  c.type_v = "f16";
  c.published = published;
  c.run = true;
  c.n = n;
  c.run_mean = mean;
  c.ci_lower = lo;
  c.ci_upper = hi;
  return c;
}

/// Precision `p` of `figure` (its run values set): whether it reproduces, and by which test.
std::pair<bool, ReproTest> judged(CellCheck figure, double run_mean, const Precision& p) {
  figure.run_mean = run_mean;
  figure.diff = run_mean - figure.published;
  decide_figure(figure, p);
  return {figure.inside, figure.test};
}

Precision rounded_to(int decimals) {
  Precision p;
  p.decimals = decimals;
  return p;
}

TEST(PublishedRepro, OneItemOrNoSpreadIsJudgedByTheStatedTolerance) {
  const CellCheck one = run_figure(0.00226, 1, 0.0022614, 0.0022614, 0.0022614);
  EXPECT_EQ(judged(one, 0.0022614, rounded_to(5)), std::make_pair(true, ReproTest::one_item)) << "prints as 0.00226";
  EXPECT_EQ(judged(one, 0.002212, rounded_to(5)), std::make_pair(false, ReproTest::one_item))
      << "0.00221 is not 0.00226, however narrow a CI of one item is";

  // Four identical items: a zero-width CI says nothing; the tolerance does.
  const CellCheck flat = run_figure(19.94, 4, 20.0, 20.0, 20.0);
  EXPECT_EQ(judged(flat, 20.0, rounded_to(2)), std::make_pair(false, ReproTest::no_spread));
  Precision loose;
  loose.tolerance = 0.1;
  EXPECT_EQ(judged(flat, 20.0, loose), std::make_pair(true, ReproTest::no_spread));

  // With spread: the published figure inside the run's CI, widened by the tolerance.
  const CellCheck spread = run_figure(0.0034, 4, 0.0032, 0.0027, 0.00339);
  EXPECT_EQ(judged(spread, 0.0032, rounded_to(4)), std::make_pair(true, ReproTest::interval));
  EXPECT_EQ(judged(spread, 0.0032, rounded_to(5)), std::make_pair(false, ReproTest::interval));
}

TEST(PublishedRepro, ExitStatusCountsComparedFiguresOnly) {
  auto p = parse_published(variant_document());
  ASSERT_TRUE(p);
  auto cmp = compare_published(variant_run(), *p);
  ASSERT_TRUE(cmp);
  // kld: both reproduce. flip: f16 32 32 yes; q4_0/f16 run 0 3 = published 0 3; q4_0/q8_0 not run.
  const ReproCounts n = repro_counts(*cmp);
  EXPECT_EQ(n.reproduced, 6u);
  EXPECT_EQ(n.not_run, 2u);
  EXPECT_EQ(n.not_reproduced, 0u);
  EXPECT_EQ(published_exit_status(*cmp), 0);

  auto doc = variant_document();
  doc["grids"][1]["rows"][1]["values"][0][1] = 4;  // p1 of q4_0/f16: the run has 3
  auto altered = compare_published(variant_run(), *parse_published(doc));
  ASSERT_TRUE(altered);
  EXPECT_EQ(published_exit_status(*altered), 1);
  ASSERT_EQ(repro_counts(*altered).failed.size(), 1u);
  EXPECT_THAT(repro_counts(*altered).failed[0], HasSubstr("grid on-flip (variant rot-on) q4_0/f16 item p1: published 4, run 3.0"));
  EXPECT_THAT(repro_counts(*altered).failed[0], HasSubstr("(allowed ±0)"));
  const json out = json::parse(write_published_json(*altered));
  EXPECT_EQ(out["reproduced"], false);
  EXPECT_EQ(out["counts"]["not_reproduced"], 1);
  EXPECT_EQ(out["grids"][1]["figures"][3]["outcome"], "not reproduced");
  EXPECT_EQ(out["grids"][1]["figures"][3]["test"], "item");
}

TEST(PublishedRepro, SetupDifferencesLeadField) {
  // Seed 000 against a run on another model, backend and embedder, with 3 hops.
  auto manifest = sweep::Manifest::from_json(json::parse(testing::kManifest));
  ASSERT_TRUE(manifest);
  manifest->embedder = {{"model", "/models/minilm.gguf"}, {"sha256", std::string(64, 'b')}};
  const PublishedSetup run = run_setup(*manifest);
  EXPECT_EQ(run.model_sha256, "1996269170e4e3d25d40e6dbdc78ea5870797ed4bba0f24c77214cb40d7d346c");
  auto seed = load_published(published_dir() / "seed000-telephone.json");
  ASSERT_TRUE(seed) << seed.error().message;
  std::map<std::string, std::pair<std::string, std::string>> differs;
  for (const auto& d : setup_differences(seed->setup, run))
    if (d.kind == SetupDifference::Kind::differs) differs[d.field] = {d.published, d.run};
  EXPECT_EQ(differs["backend"], std::make_pair(std::string("ollama"), std::string("llama-server")));
  EXPECT_EQ(differs["embedder"], std::make_pair(std::string("Qwen3-Embedding-0.6B"), std::string("minilm.gguf")));
  EXPECT_EQ(differs["probe telephone: hops"], std::make_pair(std::string("30"), std::string("3")));
  EXPECT_TRUE(differs.contains("model"));

  // The same build named in other words is no difference; another commit is.
  PublishedSetup a, b;
  a.build = "llama.cpp de3ff81 (CPU build)";
  b.build = "0.5.0-dev (build 1, commit de3ff81)";
  EXPECT_TRUE(setup_differences(a, b).empty());
  b.build = "0.5.0-dev (build 2, commit 0a1b2c3)";
  ASSERT_EQ(setup_differences(a, b).size(), 1u);

  // The page says so before any number.
  PublishedCompareOptions options;
  options.run_setup = &run;
  auto cmp = compare_published(fixture_document(), *seed, options);
  ASSERT_TRUE(cmp) << cmp.error().message;
  const std::string md = write_published_comparison(*cmp);
  const auto setup = md.find("## Setup"), hops = md.find("| probe telephone: hops | 30 | 3 |"), first = md.find("| 0.6B");
  ASSERT_NE(setup, std::string::npos) << md;
  ASSERT_NE(hops, std::string::npos) << md;
  EXPECT_LT(hops, first) << md;
  EXPECT_THAT(md, HasSubstr("matched by name only")) << md;
}

TEST(PublishedRepro, AnExportReadsBackAndReproducesItself) {
  auto manifest = sweep::Manifest::from_json(json::parse(testing::kManifest));
  ASSERT_TRUE(manifest);
  manifest->config["variants"] = json::array({{{"name", "rot-on"}, {"env", {{"LLAMA_ATTN_ROT_DISABLE", "0"}}}},
                                              {{"name", "rot-off"}, {"env", {{"LLAMA_ATTN_ROT_DISABLE", "1"}}}}});
  const Summary run = variant_run();
  auto exported = export_published(run, *manifest, {});
  ASSERT_TRUE(exported) << exported.error().message;
  auto p = parse_published(json(*exported));
  ASSERT_TRUE(p) << p.error().message << "\n" << exported->dump(1);
  ASSERT_EQ(p->grids.size(), 4u);  // 2 variants × (kld mean_kld, divergence flip_index)
  for (const auto& g : p->grids) {
    EXPECT_FALSE(g.settings.is_null()) << g.id;
    EXPECT_TRUE(g.precision.stated()) << g.id;
  }
  const auto flip = std::find_if(p->grids.begin(), p->grids.end(), [](const PublishedGrid& g) { return g.metric == "flip_index"; });
  ASSERT_NE(flip, p->grids.end());
  EXPECT_EQ(flip->items, (std::vector<std::string>{"p0", "p1"})) << "a deterministic probe's 2 items are figures";
  EXPECT_EQ(p->setup.model_sha256, "1996269170e4e3d25d40e6dbdc78ea5870797ed4bba0f24c77214cb40d7d346c");
  auto cmp = compare_published(run, *p);
  ASSERT_TRUE(cmp);
  EXPECT_EQ(repro_counts(*cmp).not_reproduced, 0u);
  EXPECT_EQ(repro_counts(*cmp).reproduced, 2u * 2u + 2u * 2u * 2u);  // kld: 2 cells × 2 variants; flip: × 2 items

  PublishedExportOptions recall;
  recall.probes = {"recall"};
  auto none = export_published(run, *manifest, recall);
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("nothing to export"));
}

TEST(PublishedRepro, TheReadmeTableShipsWithItsSetup) {
  auto p = load_published(published_dir() / "smollm2-effects.json");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->grids.size(), 14u);  // 7 columns × 2 variants
  EXPECT_THAT(p->setup.host, HasSubstr("family 6, model 207"));
  EXPECT_THAT(p->setup.build, HasSubstr("de3ff81"));
  EXPECT_EQ(p->setup.model_sha256.size(), 64u);
  for (const auto& g : p->grids) {
    EXPECT_FALSE(g.variant.empty()) << g.id;
    EXPECT_TRUE(g.precision.stated()) << g.id;
  }
}

}  // namespace
}  // namespace kvsweep::report

namespace kvsweep::report {
namespace {

/// The README's "Real effects on SmolLM2" rows: variant, K/V, then one column per figure.
std::vector<std::vector<std::string>> readme_rows() {
  std::ifstream in(std::filesystem::path(KVSWEEP_TEST_DATA) / ".." / ".." / "README.md");
  std::vector<std::vector<std::string>> rows;
  bool table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| variant | K/V | mean KLD", 0) == 0) table = true;
    else if (table && line.rfind("| rot-", 0) != 0 && line.rfind("|---", 0) != 0) break;
    if (!table || line.rfind("| rot-", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string cell; std::getline(ss, cell, '|');) {
      const auto a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
      if (a != std::string::npos) cells.push_back(cell.substr(a, b - a + 1));
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

TEST(PublishedRepro, TheReadmeTableIsThePublishedFile) {
  // The table is published once, in published/smollm2-effects.json (scripts/published-table prints it):
  // every figure the README prints is the file's, at the file's decimals.
  auto p = load_published(std::filesystem::path(KVSWEEP_TEST_DATA) / ".." / ".." / "published" / "smollm2-effects.json");
  ASSERT_TRUE(p) << p.error().message;
  const std::vector<std::string> columns{"mean_kld", "kld_p999", "same_top_p", "ppl_ratio", "flip_index", "mean_kl",
                                         "final_similarity"};
  const auto rows = readme_rows();
  ASSERT_EQ(rows.size(), 24u);
  std::size_t checked = 0;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 2 + columns.size()) << row[0];
    const std::string kv = row[1];
    for (const auto& g : p->grids) {
      if (g.variant != row[0]) continue;
      const auto col = std::find(columns.begin(), columns.end(), g.metric) - columns.begin();
      std::string text;
      for (const auto& c : g.cells)
        if (c.type_k + "/" + c.type_v == kv) text += (text.empty() ? "" : " ") + fixed(c.value, g.precision.decimals);
      EXPECT_EQ(text, row[2 + static_cast<std::size_t>(col)]) << row[0] << " " << kv << " " << g.metric;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 24u * 7u);
}

}  // namespace
}  // namespace kvsweep::report
