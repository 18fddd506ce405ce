// Greedy telephone chains on the real SmolLM2: at temperature 0 a chain does not
// depend on its seed, so the spread the report shows is the texts' own, none of it sampling — the
// reason the shipped configs run telephone greedy over many texts instead of a few sampled chains.
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

namespace kt = kvsweep::testing;
using ::testing::HasSubstr;

TEST(TelephoneGreedy, AChainDoesNotDependOnItsSeedAndTheReportSaysTheSpreadIsTheTexts) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::smollm2_model());
  cfg["name"] = "greedy";
  cfg["models"] = {{{"name", "smollm2"}, {"path", kt::smollm2_model().string()}}};
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  cfg["probes"] = {{{"kind", "telephone"},
                    {"texts", {"The meeting moved from Tuesday at 3 pm to Thursday at 10 am in room B.",
                               "Take one tablet twice a day with food, and stop if you feel dizzy."}},
                    {"hops", 2},
                    {"seeds", {42, 137}},
                    {"temperature", 0},
                    {"max_tokens", 48},
                    {"mode", "chat"}}};
  cfg["embedder"] = {{"backend", "llama-server"}, {"model", kt::minilm_model().string()}, {"pooling", "mean"}};
  const auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()}, 900);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Per text, the last hop of each seed's chain.
  std::map<std::string, std::map<std::string, std::string>> last;
  for (const auto& rec : kt::read_records(run)) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    const std::string item = rec["item"];
    last[item.substr(0, item.find("-s"))][item] = rec["response"]["hops"].back()["text"];
  }
  ASSERT_EQ(last.size(), 2u);
  for (const auto& [text, chains] : last) {
    ASSERT_EQ(chains.size(), 2u) << text;
    EXPECT_EQ(chains.begin()->second, chains.rbegin()->second) << text << ": a greedy chain changed with its seed";
  }
  const std::string report = kt::read_text(run / "report" / "report.md");
  EXPECT_THAT(report, HasSubstr("Sampling: none — greedy chains (temperature 0)")) << report;
  EXPECT_THAT(report, HasSubstr("is the texts' own")) << report;
}
