// The toolcall probe end to end: the kvsweep binary, the real llama-server, the tiny model, over
// f16/f16, q4_0/f16 and f16/q4_0. Random weights answer nonsense, so the numbers are zeros; what
// is tested is that every cell scores every item with the 0/1 metrics, the same prompt reaches
// every cell, a length beyond the server's context is an item error, and the report carries the
// metrics per context length.
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "harness.hpp"

namespace kt = kvsweep::testing;

namespace {

const std::vector<std::string> kMetrics = {"all_correct",     "parsed",     "right_tool", "schema_valid",
                                           "no_extra_params", "args_exact"};

std::string cell_of(const nlohmann::json& r) {
  return r["cell"]["type_k"].get<std::string>() + "/" + r["cell"]["type_v"].get<std::string>();
}

}  // namespace

TEST(Toolcall, ThreeCellsTwoLengthsScoredRecordsAndAReportPerLength) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["server"]["ctx"] = 2048;
  cfg["grid"] = {{"k", {"f16", "q4_0"}},
                 {"v", {"f16", "q4_0"}},
                 {"exclude", {"q4_0/q4_0"}},
                 {"reference", "f16/f16"},
                 {"order", "as-listed"}};
  // 4096 does not fit the 2048-token server context: one item error per cell, no request sent.
  cfg["probes"] = {{{"kind", "toolcall"},
                    {"lengths", {512, 1024, 4096}},
                    {"seeds", {1}},
                    {"tools", 2},
                    {"mode", "json"},
                    {"max_tokens", 32}}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;

  auto manifest = kt::read_manifest(run);
  ASSERT_EQ(manifest["cells"].size(), 3u);
  for (const auto& c : manifest["cells"]) EXPECT_EQ(c["outcome"], "ok") << c.dump();

  auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 3u * 3u);
  std::map<std::string, std::set<std::string>> hashes;  // item -> prompt hashes seen across cells
  std::set<std::string> cells;
  for (const auto& rec : records) {
    cells.insert(cell_of(rec));
    const std::string item = rec["item"];
    if (item == "L4096-s1") {
      EXPECT_EQ(rec["status"], "exceeds_context") << rec.dump();
      EXPECT_EQ(rec["error"].get<std::string>().rfind("exceeds context: L4096-s1", 0), 0u) << rec["error"];
      continue;
    }
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    const int length = rec["spec"]["length"];
    const auto& m = rec["metrics"];
    for (const auto& name : kMetrics) {
      ASSERT_TRUE(m.contains(name)) << name << " " << m.dump();
      const int v = m[name];
      EXPECT_TRUE(v == 0 || v == 1) << name << "=" << v;
      // The per-length copy is on this length's items only.
      const std::string per_length = name + "_L" + std::to_string(length);
      ASSERT_TRUE(m.contains(per_length)) << per_length;
      EXPECT_EQ(m[per_length], m[name]);
      EXPECT_FALSE(m.contains(name + "_L" + std::to_string(length == 512 ? 1024 : 512)));
    }
    // Consistency: nothing scores 1 unless the answer parsed, and all_correct is the conjunction.
    if (m["parsed"] == 0) {
      for (const auto& name : kMetrics) EXPECT_EQ(m[name], 0) << name;
    }
    int all = 1;
    for (const auto& name : kMetrics)
      if (name != "all_correct") all &= m[name].get<int>();
    EXPECT_EQ(m["all_correct"], all);
    // The raw answer and the scorer's reasons are kept, so a record can be rescored.
    const auto& resp = rec["response"];
    EXPECT_TRUE(resp["content"].is_string());
    EXPECT_GT(rec["timings"]["predicted_n"].get<int>(), 0);
    if (m["parsed"] == 0) {
      EXPECT_FALSE(resp["parse_error"].get<std::string>().empty());
    }
    // The prompt was calibrated against the server's tokenizer: about `length` tokens reached it
    // (the chat template adds a few; filler comes in whole units).
    const int prompt_tokens = resp["prompt_tokens"];
    EXPECT_GT(prompt_tokens, length * 7 / 10) << item;
    EXPECT_LT(prompt_tokens, length * 13 / 10) << item;
    EXPECT_TRUE(resp["calibration"].is_object());
    hashes[item].insert(resp["prompt_hash"].get<std::string>());
  }
  EXPECT_EQ(cells, (std::set<std::string>{"f16/f16", "q4_0/f16", "f16/q4_0"}));
  // Every cell saw the same prompt for the same item.
  ASSERT_EQ(hashes.size(), 2u);
  for (const auto& [item, seen] : hashes) EXPECT_EQ(seen.size(), 1u) << item;

  // The report: every toolcall metric, overall and per length, for every cell.
  auto rep = kt::run_kvsweep({"report", run.string(), "--format", "json"});
  ASSERT_EQ(rep.exit_code, 0) << rep.output;
  std::ifstream in(run / "report" / "summary.json");
  ASSERT_TRUE(in) << rep.output;
  auto summary = nlohmann::json::parse(in);
  ASSERT_EQ(summary["probes"].size(), 1u);
  const auto& probe = summary["probes"][0];
  EXPECT_EQ(probe["kind"], "toolcall");
  EXPECT_EQ(probe["pass_metric"], "all_correct");
  std::set<std::string> names;
  for (const auto& m : probe["metrics"]) names.insert(m["name"].get<std::string>());
  for (const auto& name : kMetrics)
    for (const std::string suffix : {"", "_L512", "_L1024", "_L4096"}) EXPECT_TRUE(names.contains(name + suffix)) << name + suffix;
  ASSERT_EQ(summary["results"].size(), 3u);
  for (const auto& res : summary["results"]) {
    EXPECT_EQ(res["items_ok"], 2) << res["cell"];
    EXPECT_EQ(res["failed_items"], nlohmann::json::array({"L4096-s1"}));
    for (const auto& name : kMetrics) {
      const auto& all = res["metrics"][name];
      EXPECT_EQ(all["n"], 2) << name;
      EXPECT_GE(all["mean"].get<double>(), 0.0);
      EXPECT_LE(all["mean"].get<double>(), 1.0);
      EXPECT_EQ(res["metrics"][name + "_L512"]["n"], 1) << name;
      EXPECT_EQ(res["metrics"][name + "_L1024"]["n"], 1) << name;
    }
  }
}
