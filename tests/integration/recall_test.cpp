// The recall probe (seed 001, codeneedle-compatible) on the real llama-server.
#include <set>

#include <gtest/gtest.h>

#include "harness.hpp"

namespace kt = kvsweep::testing;

TEST(Recall, RandomBodiesCorpusGivesScoredRecordsPerCellWithTheSameTargets) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["server"]["ctx"] = 8192;
  cfg["grid"] = {{"k", {"f16", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  cfg["probes"] = {{{"kind", "recall"},
                    {"corpus", {{"random_bodies", {{"functions", 6}, {"value_len", 8}, {"seed", 42}}}}},
                    {"k", 3},
                    {"seed", 42},
                    {"mode", "raw"},
                    {"max_tokens", 48}}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 2u * 3u);
  std::set<std::string> f16_items, q4_items;
  for (const auto& rec : records) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump().substr(0, 400);
    const auto& m = rec["metrics"];
    for (const char* key : {"primary_matched", "bonus_matched", "hallucinated", "passed", "produced_lines"})
      EXPECT_TRUE(m.contains(key)) << key;
    EXPECT_GE(m["primary_matched"].get<int>(), 0);
    EXPECT_LE(m["primary_matched"].get<int>(), 20);
    EXPECT_TRUE(m["passed"] == 0 || m["passed"] == 1);
    (rec["cell"]["type_k"] == "f16" ? f16_items : q4_items).insert(rec["item"].get<std::string>());
  }
  EXPECT_EQ(f16_items, q4_items);  // the same sampled functions in every cell
  // The corpus comes first, so every question after the first is served by the prefix cache.
  int cached = 0;
  for (const auto& rec : records) cached += rec["timings"]["cache_n"].get<int>() > 1000;
  EXPECT_GE(cached, 4);
}
