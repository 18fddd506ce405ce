// The recall probe (seed 001, codeneedle-compatible) on the real llama-server.
#include <filesystem>
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

TEST(Recall, RandomBodiesCorpusGivesScoredRecordsPerCellWithTheSameTargets) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["server"]["ctx"] = 8192;
  cfg["grid"] = {{"k", {"f16", "q4_0"}}, {"v", {"f16", "q8_0"}}, {"reference", "f16/f16"}};
  cfg["probes"] = {{{"kind", "recall"},
                    {"corpus", {{"random_bodies", {{"functions", 6}, {"value_len", 8}, {"seed", 42}}}}},
                    {"k", 4},
                    {"seed", 42},
                    {"mode", "raw"},
                    {"max_tokens", 48}}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 4u * 4u);
  std::map<std::string, std::set<std::string>> items_by_cell;
  for (const auto& rec : records) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump().substr(0, 400);
    const auto& m = rec["metrics"];
    for (const char* key : {"primary_matched", "bonus_matched", "hallucinated", "passed", "produced_lines"})
      EXPECT_TRUE(m.contains(key)) << key;
    EXPECT_GE(m["primary_matched"].get<int>(), 0);
    EXPECT_LE(m["primary_matched"].get<int>(), 20);
    EXPECT_TRUE(m["passed"] == 0 || m["passed"] == 1);
    items_by_cell[rec["cell"]["type_k"].get<std::string>() + "/" + rec["cell"]["type_v"].get<std::string>()].insert(
        rec["item"].get<std::string>());
    // Bounded answers: the budget comes from the expected lines' tokens (the server tokenized
    // them), never above max_tokens, and generation stayed within it.
    const auto& response = rec["response"];
    ASSERT_TRUE(response.is_object()) << response.dump();
    EXPECT_TRUE(response["text"].is_string());
    ASSERT_TRUE(response["expected_tokens"].is_number_integer()) << response.dump();
    EXPECT_GT(response["expected_tokens"].get<int>(), 100);  // 25+ lines of random identifiers
    EXPECT_EQ(response["budget"], 48);
    EXPECT_LE(rec["timings"]["predicted_n"].get<int>(), 48);
    EXPECT_EQ(m["cut"] == 1, !response["cut"].is_null());
    // Raw mode sends token ids: llama-server's SPM tokenizer passes the check that the ids of
    // corpus and question equal its own tokens of the whole prompt.
    EXPECT_EQ(response["prompt_as"], "ids") << response.dump().substr(0, 400);
  }
  ASSERT_EQ(items_by_cell.size(), 4u);
  for (const auto& [cell, items] : items_by_cell) {
    EXPECT_EQ(items, items_by_cell.begin()->second) << cell;  // the same sampled functions in every cell
    EXPECT_EQ(items.size(), 4u);
  }
  // The corpus comes first, so every question after the first is served by the prefix cache.
  int cached = 0;
  for (const auto& rec : records) cached += rec["timings"]["cache_n"].get<int>() > 1000;
  EXPECT_GE(cached, 4 * 3);
}

TEST(Recall, CorpusBeyondTheContextStopsTheGridAfterItsFirstCellNamingTheTokensNeeded) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["server"]["ctx"] = 1024;
  cfg["grid"] = {{"k", {"f16", "q8_0", "q4_0"}}, {"v", "same-as-k"}, {"reference", "f16/f16"}, {"order", "as-listed"}};
  // 12 functions of 24-40 lines of random identifiers: several thousand tokens.
  cfg["probes"] = {{{"kind", "recall"},
                    {"corpus", {{"random_bodies", {{"functions", 12}, {"value_len", 16}, {"seed", 3}}}}},
                    {"k", 3},
                    {"mode", "raw"},
                    {"max_tokens", 48}}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  // The first cell's items cannot fit: the sweep stops there, exit 2, with the size it needs.
  ASSERT_EQ(r.exit_code, 2) << r.output;
  const auto at = r.output.find("recall needs ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" tokens of context; raise server.ctx to at least ", at), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" or shrink the corpus", at), std::string::npos) << r.output;
  std::string needed;
  for (std::size_t i = at + std::string("recall needs ").size(); i < r.output.size() && r.output[i] != ' '; ++i)
    if (r.output[i] != ',') needed += r.output[i];
  EXPECT_GT(std::stoll(needed), 1024) << r.output;
  // At most one server started: one cell's log, one cell's records, the other cells pending.
  std::size_t logs = 0;
  for (const auto& e : std::filesystem::directory_iterator(run / "logs")) logs += e.path().extension() == ".log";
  EXPECT_LE(logs, 1u);
  auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 3u);
  for (const auto& rec : records) {
    EXPECT_EQ(rec["cell"]["type_k"], "f16") << rec.dump().substr(0, 400);
    EXPECT_EQ(rec["status"], "exceeds_context") << rec.dump().substr(0, 400);
    const std::string error = rec["error"];
    EXPECT_EQ(error.rfind("recall prompt needs about ", 0), 0u) << error;
    EXPECT_THAT(error, HasSubstr("but the context holds 1024; raise the server's -c")) << error;
    EXPECT_FALSE(rec.contains("timings")) << rec.dump().substr(0, 400);  // nothing was generated
  }
  // The cell that ran is not shown as ok: every item failed.
  EXPECT_THAT(r.output, HasSubstr("items_failed")) << r.output;
  const auto manifest = kt::read_manifest(run);
  EXPECT_EQ(manifest["status"], "stopped");
  ASSERT_EQ(manifest["cells"].size(), 1u);
  EXPECT_EQ(manifest["cells"][0]["outcome"], "items_failed");
  EXPECT_EQ(manifest["cells"][0]["items_failed"], 3);
  EXPECT_THAT(manifest["cells"][0]["message"].get<std::string>(), HasSubstr("raise the server's -c"));
}
