// Divergence and KLD probes on the real llama-server / llama-perplexity with the tiny model.
#include <map>

#include <gtest/gtest.h>

#include "harness.hpp"

namespace kt = kvsweep::testing;

namespace {

// Mean of a metric over the ok records of one probe, per cell "K/V".
std::map<std::string, double> cell_means(const std::vector<nlohmann::json>& records, const std::string& probe,
                                         const std::string& metric) {
  std::map<std::string, std::pair<double, int>> acc;
  for (const auto& r : records) {
    if (r["probe"] != probe || r["status"] != "ok") continue;
    auto key = r["cell"]["type_k"].get<std::string>() + "/" + r["cell"]["type_v"].get<std::string>();
    acc[key].first += r["metrics"][metric].get<double>();
    acc[key].second += 1;
  }
  std::map<std::string, double> out;
  for (const auto& [k, v] : acc) out[k] = v.first / v.second;
  return out;
}

}  // namespace

TEST(Divergence, ReferenceModeKlGrowsAsPrecisionDropsAndKldAgrees) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16", "f32", "bf16", "q8_0", "q4_0"}}, {"v", "tied"}, {"reference", "f16/f16"}};
  nlohmann::json prompts = {"The lighthouse keeper climbed the stairs one last time and", "def merge(a, b):"};
  cfg["probes"] = {
      {{"kind", "divergence"}, {"mode", "cache"}, {"tokens", 8}, {"top_n", 20}, {"prompts", prompts}},
      {{"kind", "divergence"}, {"mode", "reference"}, {"tokens", 12}, {"top_n", 20}, {"prompts", prompts}},
      {{"kind", "kld"},
       {"corpus", {{"random_bodies", {{"functions", 4}, {"value_len", 24}, {"seed", 7}}}}},
       {"ctx", 128},
       {"chunks", 4}},
  };
  auto cfg_path = kt::write_config(dir, cfg);
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", cfg_path.string(), "-o", run.string(), "--only", "probe=divergence-reference"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto resumed = kt::run_kvsweep({"run", cfg_path.string(), "-o", run.string(), "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  auto records = kt::read_records(run);
  for (const auto& rec : records) ASSERT_EQ(rec["status"], "ok") << rec.dump().substr(0, 400);

  // cache-ON vs cache-OFF on f16/f16: a record per prompt with per-step KL.
  int cache_records = 0;
  for (const auto& rec : records) {
    if (rec["probe"] != "divergence-cache" || rec["cell"]["type_k"] != "f16") continue;
    ++cache_records;
    EXPECT_TRUE(rec["metrics"].contains("diverged"));
    EXPECT_TRUE(rec["metrics"].contains("mean_kl"));
  }
  EXPECT_EQ(cache_records, 2);

  auto kl = cell_means(records, "divergence-reference", "mean_kl");
  ASSERT_EQ(kl.size(), 5u);
  std::cerr << "reference-mode mean KL vs f16/f16:";
  for (const auto& [cell, v] : kl) std::cerr << " " << cell << "=" << v;
  std::cerr << "\n";
  EXPECT_EQ(kl["f16/f16"], 0.0);
  EXPECT_LT(kl["f32/f32"], 1e-3);
  EXPECT_LT(kl["bf16/bf16"], 1e-2);
  EXPECT_GT(kl["q4_0/q4_0"], 0.0);
  EXPECT_GT(kl["q4_0/q4_0"], 10 * kl["bf16/bf16"]);
  EXPECT_GT(kl["q4_0/q4_0"], kl["q8_0/q8_0"]);

  auto kld = cell_means(records, "kld", "mean_kld");
  ASSERT_EQ(kld.size(), 5u);
  std::cerr << "llama-perplexity mean KLD:";
  for (const auto& [cell, v] : kld) std::cerr << " " << cell << "=" << v;
  std::cerr << "\n";
  EXPECT_GT(kld["q4_0/q4_0"], kld["q8_0/q8_0"]);
  EXPECT_LT(kld["f32/f32"], kld["q8_0/q8_0"] + 1e-9);

  // Deterministic: the same sweep again gives identical numbers.
  auto run2 = dir / "run2";
  ASSERT_EQ(kt::run_kvsweep({"run", cfg_path.string(), "-o", run2.string(), "--only", "probe=divergence-reference"})
                .exit_code,
            0);
  EXPECT_EQ(cell_means(kt::read_records(run2), "divergence-reference", "mean_kl"), kl);
}
