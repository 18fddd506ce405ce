// Probes end to end: the kvsweep binary, the real llama-server, the tiny model.
#include <fstream>
#include <map>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

TEST(Telephone, TwoByTwoGridChainsOfThreeHopsWithOneEmbedderForTheRun) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16", "q4_0"}}, {"v", {"f16", "q8_0"}}, {"reference", "f16/f16"}};
  cfg["probes"] = {{{"kind", "telephone"}, {"hops", 3}, {"seeds", {42, 137}}, {"max_tokens", 24}, {"mode", "raw"}}};
  cfg["embedder"] = {{"backend", "llama-server"}, {"model", kt::tiny_model().string()}, {"pooling", "mean"}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 4u * 2u);
  for (const auto& rec : records) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    const auto& hops = rec["response"]["hops"];
    ASSERT_EQ(hops.size(), 3u);
    for (const auto& h : hops) {
      double s = h["sim_original"];
      EXPECT_GE(s, -1.0);
      EXPECT_LE(s, 1.0);
    }
    EXPECT_DOUBLE_EQ(rec["metrics"]["final_similarity"].get<double>(), hops[2]["sim_original"].get<double>());
  }
  // The embedder is an instrument: started once for the whole run, named in the manifest.
  std::ifstream log(run / "logs" / "embedder.log");
  std::stringstream ss;
  ss << log.rdbuf();
  std::string text = ss.str();
  std::size_t launches = 0;
  for (std::size_t pos = 0; (pos = text.find("# kvsweep: launching", pos)) != std::string::npos; ++pos) ++launches;
  EXPECT_EQ(launches, 1u);
  EXPECT_THAT(text, HasSubstr("--embeddings"));
  auto manifest = kt::read_manifest(run);
  EXPECT_EQ(manifest["embedder"]["sha256"].get<std::string>().size(), 64u);

  // Seeded sampling with -np 1 reproduces: a second run gives the same chains.
  auto run2 = dir / "run2";
  ASSERT_EQ(kt::run_kvsweep({"run", (dir / "sweep.json").string(), "-o", run2.string()}).exit_code, 0);
  auto again = kt::read_records(run2);
  auto key = [](const nlohmann::json& x) {
    return x["cell"].dump() + x["item"].get<std::string>();
  };
  std::map<std::string, nlohmann::json> first;
  for (const auto& rec : records) first[key(rec)] = rec["response"]["hops"];
  for (const auto& rec : again) EXPECT_EQ(first[key(rec)], rec["response"]["hops"]) << key(rec);
}
