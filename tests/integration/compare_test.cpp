// `kvsweep compare` end to end: one real sweep (the tiny model on llama-server: a deterministic
// `complete` probe and a 2-chain `telephone` probe), copied and doctored, then the CLI's verdicts,
// exit codes, JUnit and JSON. One test, so the sweep runs once (ctest runs each test on its own).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kt = kvsweep::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// A copy of `run` whose records pass through `edit` (cell "K/V", probe, metrics).
fs::path doctored_copy(const fs::path& run, const fs::path& to,
                       const std::function<void(const std::string&, const std::string&, json&)>& edit) {
  fs::copy(run, to, fs::copy_options::recursive);
  std::ofstream out(to / "records.jsonl", std::ios::trunc);
  for (json r : kt::read_records(run)) {
    const std::string cell = r["cell"]["type_k"].get<std::string>() + "/" + r["cell"]["type_v"].get<std::string>();
    edit(cell, r["probe"].get<std::string>(), r["metrics"]);
    out << r.dump() << "\n";
  }
  return to;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(CompareCli, GatesARealRunDoctoredDeterministicallyAndStochastically) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 16}},
                   {{"kind", "telephone"}, {"hops", 2}, {"seeds", {42, 137}}, {"max_tokens", 16}, {"mode", "raw"}}};
  cfg["embedder"] = {{"backend", "llama-server"}, {"model", kt::tiny_model().string()}, {"pooling", "mean"}};
  const fs::path run = dir / "run";
  auto swept = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(swept.exit_code, 0) << swept.output;
  const std::string base = run.string();

  {
    SCOPED_TRACE("identical runs: exit 0 and a handful of lines");
    auto r = kt::run_kvsweep({"compare", base, "--baseline", base});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr(": 0 regressions, 0 inconclusive, 0 improvements")) << r.output;
    EXPECT_LE(count_of(r.output, "\n"), 8u) << r.output;  // per-probe counts and the summary line
    EXPECT_THAT(r.output, Not(HasSubstr("| tiny-"))) << "no check rows when nothing moved:\n" << r.output;
    auto all = kt::run_kvsweep({"compare", base, "--baseline", base, "--all"});
    EXPECT_EQ(all.exit_code, 0);
    // Every judged metric of every cell (telephone's min_similarity and first_below_threshold are
    // diagnostics, not checked).
    EXPECT_GE(count_of(all.output, "| tiny-"), 8u) << all.output;
  }
  {
    SCOPED_TRACE("a missing or malformed baseline: exit 2");
    EXPECT_EQ(kt::run_kvsweep({"compare", base, "--baseline", (dir / "nope.json").string()}).exit_code, 2);
    std::ofstream(dir / "bad.json") << "{not json";
    auto bad = kt::run_kvsweep({"compare", base, "--baseline", (dir / "bad.json").string()});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_THAT(bad.output, HasSubstr("bad.json: not valid JSON")) << bad.output;
    std::ofstream(dir / "other.json") << R"({"kind": "something-else", "results": []})";
    EXPECT_EQ(kt::run_kvsweep({"compare", base, "--baseline", (dir / "other.json").string()}).exit_code, 2);
  }

  // A deterministic metric halved in one non-reference cell.
  double q4_prefix = 0;
  const fs::path det = doctored_copy(run, dir / "det", [&](const std::string& cell, const std::string& probe, json& m) {
    if (cell != "q4_0/f16" || probe != "complete") return;
    q4_prefix += m["common_prefix_chars"].get<double>();
    m["common_prefix_chars"] = m["common_prefix_chars"].get<double>() / 2;
  });
  ASSERT_GT(q4_prefix, 0.0) << "the q4_0 cell shares no prefix with the reference: nothing to halve";
  {
    SCOPED_TRACE("a doctored deterministic metric: exit 1, the check named, one JUnit testcase per check");
    const fs::path junit = dir / "junit.xml";
    auto r = kt::run_kvsweep({"compare", det.string(), "--baseline", base, "--junit", junit.string()});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("REGRESSION tiny-q4_0-f16 complete/common_prefix_chars")) << r.output;
    EXPECT_THAT(r.output, HasSubstr("1 regression,")) << r.output;
    auto js = kt::run_kvsweep({"compare", det.string(), "--baseline", base, "--format", "json"});
    EXPECT_EQ(js.exit_code, 1);
    const json doc = json::parse(js.output.substr(0, js.output.rfind('}') + 1));
    const std::string xml = kt::read_text(junit);
    EXPECT_EQ(count_of(xml, "<testcase "), doc["checks"].size());
    EXPECT_EQ(count_of(xml, "<failure type=\"regression\""), 1u) << xml;
    EXPECT_EQ(doc["counts"]["regression"], 1);
    // Only quality metrics are checks: predicted_n (a token count) and empty_hops are diagnostics.
    for (const auto& c : doc["checks"]) {
      EXPECT_NE(c["metric"], "predicted_n");
      EXPECT_NE(c["metric"], "cut_hops");
    }

    SCOPED_TRACE("--tolerance NAME=V and *=V change the verdict");
    EXPECT_EQ(kt::run_kvsweep({"compare", det.string(), "--baseline", base, "--tolerance", "common_prefix_chars=60%"})
                  .exit_code,
              0);
    EXPECT_EQ(kt::run_kvsweep({"compare", det.string(), "--baseline", base, "--tolerance", "*=60%"}).exit_code, 0);
    EXPECT_EQ(kt::run_kvsweep({"compare", det.string(), "--baseline", base, "--tolerance", "*=60%", "--tolerance",
                               "complete.common_prefix_chars=10%"})
                  .exit_code,
              1);
    auto bad = kt::run_kvsweep({"compare", det.string(), "--baseline", base, "--tolerance", "common_prefix_chars"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_THAT(bad.output, HasSubstr("--tolerance common_prefix_chars: no METRIC=")) << bad.output;
  }
  {
    SCOPED_TRACE("a diagnostic metric moved: not gated");
    const fs::path diag = doctored_copy(run, dir / "diag", [](const std::string& cell, const std::string& probe, json& m) {
      if (cell == "q4_0/f16" && probe == "complete") m["predicted_n"] = 1000;
    });
    auto r = kt::run_kvsweep({"compare", diag.string(), "--baseline", base});
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }

  // The reference cell's telephone final_similarity lowered by 30%: two chains per cell can never
  // give a significant paired test (the smallest Wilcoxon p of 2 pairs is 0.5).
  double sim = 0;
  const fs::path sto = doctored_copy(run, dir / "sto", [&](const std::string& cell, const std::string& probe, json& m) {
    if (cell != "f16/f16" || probe != "telephone") return;
    sim += m["final_similarity"].get<double>();
    m["final_similarity"] = m["final_similarity"].get<double>() * 0.7;
  });
  ASSERT_GT(sim, 0.0);
  {
    SCOPED_TRACE("a doctored stochastic metric on a 2-item probe: inconclusive, exit 0 (1 with --fail-inconclusive)");
    const fs::path junit = dir / "sto.xml";
    auto r = kt::run_kvsweep({"compare", sto.string(), "--baseline", base, "--junit", junit.string()});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("INCONCLUSIVE tiny-f16-f16 telephone/final_similarity")) << r.output;
    EXPECT_THAT(r.output, HasSubstr("1 inconclusive: telephone has 2 items per cell; at least ")) << r.output;
    EXPECT_THAT(kt::read_text(junit), HasSubstr("<skipped message=\"inconclusive: "));
    auto strict = kt::run_kvsweep(
        {"compare", sto.string(), "--baseline", base, "--fail-inconclusive", "--junit", junit.string()});
    EXPECT_EQ(strict.exit_code, 1) << strict.output;
    EXPECT_THAT(kt::read_text(junit), HasSubstr("<failure type=\"inconclusive\""));
  }
  {
    SCOPED_TRACE("--published: seed 000's models are not run (exit 0), its setup differences first; 2 for a malformed file");
    auto r = kt::run_kvsweep(
        {"compare", base, "--published", std::string(KVSWEEP_SOURCE_DIR) + "/published/seed000-telephone.json"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_LT(r.output.find("| probe telephone: hops | 30 | 2 |"), r.output.find("## Hero plot")) << r.output;
    std::ofstream(dir / "pub.json") << R"({"kind": "kvsweep-published"})";
    EXPECT_EQ(kt::run_kvsweep({"compare", base, "--published", (dir / "pub.json").string()}).exit_code, 2);
  }
  {
    SCOPED_TRACE("published export, then the run reproduces its own file (exit 0); an altered figure exits 1 naming it");
    const fs::path pub = dir / "exported.json";
    auto exported = kt::run_kvsweep({"published", "export", base, "--probe", "complete", "-o", pub.string()});
    ASSERT_EQ(exported.exit_code, 0) << exported.output;
    auto same = kt::run_kvsweep({"compare", base, "--published", pub.string(), "--format", "json"});
    EXPECT_EQ(same.exit_code, 0) << same.output;
    EXPECT_THAT(same.output, HasSubstr("\"reproduced\": true")) << same.output;
    json doc = json::parse(kt::read_text(pub));
    ASSERT_FALSE(doc["grids"].empty());
    json& grid = doc["grids"][0];
    json& first = grid["rows"][0]["values"][0];
    json& figure = first.is_array() ? first[0] : first;
    figure = figure.get<double>() + 1000;
    std::ofstream(dir / "altered.json") << doc.dump(1);
    auto altered = kt::run_kvsweep({"compare", base, "--published", (dir / "altered.json").string()});
    EXPECT_EQ(altered.exit_code, 1) << altered.output;
    EXPECT_THAT(altered.output, HasSubstr("not reproduced: grid " + grid["id"].get<std::string>())) << altered.output;
  }
}
