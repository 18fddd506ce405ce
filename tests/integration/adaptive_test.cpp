// Adaptive sweeps on the real llama-server and the copy model (rotation off): a q4_0 K cell that
// loses every line is settled at min_items (its pass rate by curtailment), a q8_0 K cell that loses
// none too (its pass rate for futility), the items they did not run are recorded skipped/settled
// (never ok), recommend says the verdicts are adaptive, and a resume without --adaptive completes
// the settled items without duplicating any.
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

TEST(Adaptive, ABrokenCellSettlesEarlyAndResumeWithoutAdaptiveCompletesIt) {
  kt::TempDir dir;
  auto cfg = kt::copy_recall_config({"f16", "q8_0", "q4_0"}, 12, 10, 8);
  cfg["name"] = "adaptive";
  cfg["server"]["env"] = {{"LLAMA_ATTN_ROT_DISABLE", "1"}};
  const auto config = kt::write_config(dir, cfg);
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", config.string(), "-o", run.string(), "--adaptive"}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::map<std::string, int> ok, settled;  // by K type
  std::map<std::string, std::string> passed_by;  // by K type: what settled the pass rate, and when
  std::map<std::string, int> passed_at;
  for (const auto& rec : kt::read_records(run)) {
    const std::string k = rec["cell"]["type_k"];
    if (rec["status"] == "ok") ++ok[k];
    if (rec["status"] == "skipped") {
      EXPECT_EQ(rec["reason"], "settled") << rec.dump().substr(0, 300);
      ++settled[k];
      passed_by[k] = rec["adaptive"]["metrics"]["passed"].value("by", "");
      passed_at[k] = rec["adaptive"]["metrics"]["passed"].value("decided_at", 0);
    }
  }
  EXPECT_EQ(ok["f16"], 10) << "the reference runs every item";
  EXPECT_EQ(settled["f16"], 0);
  // Unrotated q4_0 K loses every line: its pass rate is inferior by curtailment at item 5 (5 failures of
  // 10 whatever the other 5 answer); its hallucinated count varies (0–10 lines) and may take the normal
  // mixture a few more items.
  EXPECT_GE(ok["q4_0"], 5) << "at least min_items";
  EXPECT_LT(ok["q4_0"], 10) << "settled before the items run out\n" << r.output;
  EXPECT_EQ(ok["q4_0"] + settled["q4_0"], 10);
  EXPECT_EQ(passed_by["q4_0"], "curtailment");
  EXPECT_EQ(passed_at["q4_0"], 5);
  // q8_0 K copies every line: the counts are non-inferior at 5 and no 10-item run could prove the pass
  // rate non-inferior, nor, with 5 of 5 passed, is it likely to find it inferior.
  EXPECT_EQ(ok["q8_0"], 5) << r.output;
  EXPECT_EQ(ok["q8_0"] + settled["q8_0"], 10);
  EXPECT_EQ(passed_by["q8_0"], "futility");

  auto rec = kt::run_kvsweep({"recommend", run.string()});
  ASSERT_EQ(rec.exit_code, 0) << rec.output;
  EXPECT_THAT(rec.output, HasSubstr("Adaptive verdicts")) << rec.output;

  // Without --adaptive, a resume runs exactly the settled items.
  auto done = kt::run_kvsweep({"run", "--resume", run.string(), "--no-adaptive"}, 600);
  ASSERT_EQ(done.exit_code, 0) << done.output;
  std::map<std::string, int> after;
  std::set<std::string> triples;
  for (const auto& x : kt::read_records(run)) {
    if (x["status"] != "ok") continue;
    ++after[x["cell"]["type_k"].get<std::string>()];
    EXPECT_TRUE(triples.insert(x["cell"].dump() + x["item"].get<std::string>()).second) << "duplicate ok record";
  }
  EXPECT_EQ(after["f16"], 10);
  EXPECT_EQ(after["q8_0"], 10);
  EXPECT_EQ(after["q4_0"], 10);
}
