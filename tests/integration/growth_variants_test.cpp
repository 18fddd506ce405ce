// Growing a run by its first variants: a run made without variants has cells of no
// variant, and a config with variants has only its variants' cells, so such a growth is refused — in
// those words, with how to get the variants instead — never as "cell … is not in this config's grid",
// and nothing of the run changes: its records, its manifest, its report. The advised new run (a variant
// with no settings beside the new one) runs. Real llama-server on the tiny model.

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

namespace kt = kvsweep::testing;
using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;

TEST(GrowthVariants, ARunWithoutVariantsGrownByItsFirstVariantsIsRefusedSayingSoAndTheRunKeepsItsReport) {
  kt::TempDir dir;
  json cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16", "q8_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  cfg["probes"][0]["prompts"] = {"The capital of France is"};
  const auto run = dir / "run";
  auto first = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string records = kt::read_text(run / "records.jsonl");
  const std::string manifest = kt::read_text(run / "manifest.json");
  ASSERT_FALSE(records.empty());

  json grown = cfg;
  grown["variants"] = {{{"name", "rot-off"}, {"env", {{"LLAMA_ATTN_ROT_DISABLE", "1"}}}}};
  const auto grown_config = kt::write_config(dir, grown, "grown.json");
  for (const bool dry : {true, false}) {
    SCOPED_TRACE(dry ? "--dry-run" : "run");
    std::vector<std::string> args{"run", grown_config.string(), "--resume", run.string()};
    if (dry) args.push_back("--dry-run");
    auto r = kt::run_kvsweep(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("the run was made without variants, and this config adds its first (rot-off)")) << r.output;
    EXPECT_THAT(r.output, HasSubstr("A run grows by variants only when it already has variants")) << r.output;
    EXPECT_THAT(r.output, HasSubstr("Start a new run with -o NEW_DIR")) << r.output;
    EXPECT_THAT(r.output, Not(HasSubstr("is not in this config's grid"))) << r.output;
    // Nothing of the run changed: no record of another config mixed in, no manifest rewritten.
    EXPECT_EQ(kt::read_text(run / "records.jsonl"), records);
    EXPECT_EQ(kt::read_text(run / "manifest.json"), manifest);
  }
  // The run's report is still written from it, as before.
  auto report = kt::run_kvsweep({"report", run.string(), "--format", "json"});
  EXPECT_EQ(report.exit_code, 0) << report.output;
  const json summary = json::parse(kt::read_text(run / "report" / "summary.json"));
  for (const auto& c : summary.at("cells")) EXPECT_FALSE(c.contains("variant")) << c.dump();

  // What the refusal advises: a new run whose variants include one with no settings.
  json fresh = grown;
  fresh["variants"].insert(fresh["variants"].begin(), json{{"name", "base"}});
  auto again = kt::run_kvsweep({"run", kt::write_config(dir, fresh, "fresh.json").string(), "-o", (dir / "fresh").string()});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  std::set<std::string> variants;
  for (const auto& r : kt::read_records(dir / "fresh")) variants.insert(r["cell"].value("variant", ""));
  EXPECT_EQ(variants, (std::set<std::string>{"base", "rot-off"}));
}
