// The twins probe on the real llama-server and the copy model: the reference measures
// each item's margin, every cell is binned by it, and the report reads the flip rate out per bin.
#include <filesystem>
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

// The copy model copies after its last 6 tokens match: twins that differ in the last word of a 6-word
// key are told apart by a whole matching token (a margin of ≥ 10 nats at f16), twins that differ only in
// the first word are tied (the word lies before the window: a margin near 0). Without the rotation a
// q4_0 K cache loses the copy altogether (README, The copy model), whatever the margin.
TEST(Twins, TheReferenceMeasuresEachItemsMarginAndEveryCellIsReadInTheSameBins) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::copy_model());
  cfg["name"] = "twins";
  cfg["models"] = {{{"name", "copy"}, {"path", kt::copy_model().string()}}};
  cfg["variants"] = {{{"name", "rot-off"}, {"env", {{"LLAMA_ATTN_ROT_DISABLE", "1"}}}}};
  cfg["grid"] = {{"k", {"f16", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}, {"order", "as-listed"}};
  cfg["probes"] = {{{"kind", "twins"},
                    {"families", 4},
                    {"twins", 4},
                    {"distance", 1},
                    {"at", "both"},  // families 0 and 2 at the end, 1 and 3 at the start
                    {"bins", {1, 4, 10}},
                    {"gate", {"recalled_low"}}}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;  // 1: q4_0 K fails the gate
  const auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 2u * 16u);
  std::map<std::string, double> ref_margin;
  std::map<std::string, int> ref_bin;
  for (const auto& rec : records) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump().substr(0, 600);
    if (rec["cell"]["type_k"] != "f16") continue;
    const std::string item = rec["item"];
    const auto& resp = rec["response"];
    ASSERT_TRUE(rec["metrics"]["margin"].is_number()) << rec.dump().substr(0, 600);
    ref_margin[item] = rec["metrics"]["margin"].get<double>();
    ref_bin[item] = resp["bin"].get<int>();
    EXPECT_EQ(rec["metrics"]["cell_margin"], rec["metrics"]["margin"]) << item;  // the reference's own gap
    if (rec["spec"]["at"] == "end") {
      EXPECT_EQ(rec["metrics"]["recalled"], 1) << item << " " << resp.dump();
      EXPECT_GE(resp["bin"].get<int>(), 2) << item << " " << resp.dump();  // 4 nats or more
      EXPECT_TRUE(rec["metrics"]["recalled_low"].is_null()) << item;
    } else {
      EXPECT_EQ(resp["bin"], 0) << item << " " << resp.dump();  // tied twins: below 1 nat
      EXPECT_EQ(rec["metrics"]["recalled_low"], rec["metrics"]["recalled"]) << item;
    }
  }
  ASSERT_EQ(ref_margin.size(), 16u);
  for (const auto& rec : records) {
    if (rec["cell"]["type_k"] != "q4_0") continue;
    const std::string item = rec["item"];
    // Binned by the reference's margin, not its own.
    EXPECT_EQ(rec["metrics"]["margin"].get<double>(), ref_margin.at(item)) << item;
    EXPECT_EQ(rec["response"]["bin"].get<int>(), ref_bin.at(item)) << item;
    EXPECT_EQ(rec["metrics"]["recalled"], 0) << item << " " << rec["response"].dump();
  }
  // The read-out: a table per bin and cell with intervals, and the figure.
  const std::string report = kt::read_text(run / "report" / "report.md");
  EXPECT_THAT(report, HasSubstr("### Flip rate by margin"));
  EXPECT_THAT(report, HasSubstr("| cell | margin < 1 |"));
  EXPECT_THAT(report, HasSubstr("copy/rot-off/q4_0/f16 | 1.00 ["));
  EXPECT_TRUE(std::filesystem::exists(run / "report" / "twins-twins-flips-copy_rot-off.svg"));
  EXPECT_THAT(report, HasSubstr("twins-twins-flips-copy_rot-off.svg"));
}
