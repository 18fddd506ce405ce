// The variants axis on the real llama-server and the copy model: attention rotation on and off
// (LLAMA_ATTN_ROT_DISABLE) × K {f16, q4_0}. The run resumes after SIGINT without duplicates,
// two shards merge to the same records, the manifest says per cell what the server did (the q4_0
// cells differ in attn_rot_k), and the report has the variant-effect table.
#include <csignal>
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

namespace {

nlohmann::json rotation_config() {
  auto cfg = kt::copy_recall_config({"f16", "q4_0"}, 8, 3, 20);
  cfg["name"] = "rotation";
  cfg["variants"] = {{{"name", "rot-on"}, {"env", {{"LLAMA_ATTN_ROT_DISABLE", "0"}}}},
                     {{"name", "rot-off"}, {"env", {{"LLAMA_ATTN_ROT_DISABLE", "1"}}}}};
  return cfg;
}

/// (variant/K, item) → primary_matched of the ok records; fails the test on a duplicate ok triple.
std::map<std::string, int> matched_by_triple(const std::vector<nlohmann::json>& records) {
  std::map<std::string, int> out;
  for (const auto& r : records) {
    if (r["status"] != "ok") continue;
    const std::string key = r["cell"].value("variant", "?") + "/" + r["cell"]["type_k"].get<std::string>() + " " +
                            r["item"].get<std::string>();
    EXPECT_TRUE(out.emplace(key, r["metrics"]["primary_matched"].get<int>()).second) << "duplicate ok " << key;
  }
  return out;
}

}  // namespace

TEST(Variants, RotationOnOffGridResumesShardsMergesAndReportsTheVariantEffect) {
  kt::TempDir dir;
  const auto cfg = kt::write_config(dir, rotation_config());

  // A variant that is not in the config is an error, not an empty selection.
  auto typo = kt::run_kvsweep({"run", cfg.string(), "--only", "variant=rotoff", "--dry-run"});
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_THAT(typo.output, HasSubstr("no such variant")) << typo.output;
  EXPECT_THAT(typo.output, HasSubstr("'rot-off'")) << typo.output;

  // Interrupted after a few items, then resumed.
  auto run = dir / "run";
  kt::Background bg({"run", cfg.string(), "-o", run.string()}, dir / "out.txt");
  ASSERT_TRUE(kt::wait_until([&] { return kt::count_lines(run / "records.jsonl") >= 4; }, 180)) << bg.output();
  ::kill(bg.pid(), SIGINT);
  EXPECT_EQ(bg.wait(60), 130) << bg.output();
  EXPECT_EQ(kt::read_manifest(run)["status"], "interrupted");
  auto resumed = kt::run_kvsweep({"run", "--resume", run.string()}, 600);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const auto whole = matched_by_triple(kt::read_records(run));
  ASSERT_EQ(whole.size(), 12u) << "2 variants × 2 K types × 3 items, each once";
  for (const auto& r : kt::read_records(run)) EXPECT_EQ(r["status"], "ok") << r.dump().substr(0, 300);

  // What the server did, per cell: the rotation differs between the two q4_0 cells.
  std::map<std::string, nlohmann::json> effective;
  const auto manifest = kt::read_manifest(run);  // keep it alive: operator[] returns into it
  for (const auto& c : manifest["cells"]) {
    effective[c.value("variant", "?") + "/" + c["type_k"].get<std::string>()] = c["effective"];
    EXPECT_EQ(c["outcome"], "ok") << c.dump();
  }
  ASSERT_EQ(effective.size(), 4u);
  EXPECT_EQ(effective["rot-on/q4_0"].value("attn_rot_k", -1), 1);
  EXPECT_EQ(effective["rot-off/q4_0"].value("attn_rot_k", -1), 0);
  EXPECT_EQ(effective["rot-off/q4_0"].value("n_ctx", 0), 6144);
  // The copy model's key outliers: unrotated q4_0 K loses lines, rotated it recalls as f16 does.
  int on = 0, off = 0, ref = 0;
  for (const auto& [key, m] : whole) {
    if (key.starts_with("rot-on/q4_0")) on += m;
    if (key.starts_with("rot-off/q4_0")) off += m;
    if (key.starts_with("rot-off/f16")) ref += m;
  }
  EXPECT_GE(ref, 57) << "20 lines × 3 items at f16";
  EXPECT_GE(on, ref - 3);
  EXPECT_LE(off, on - 20);

  // Two shards merge to the same records.
  std::vector<std::string> merge_args = {"merge"};
  for (int i = 0; i < 2; ++i) {
    auto shard = dir / ("shard" + std::to_string(i));
    auto r = kt::run_kvsweep({"run", cfg.string(), "-o", shard.string(), "--shard", std::to_string(i) + "/2"}, 600);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    merge_args.push_back(shard.string());
  }
  auto merged = dir / "merged";
  merge_args.insert(merge_args.end(), {"-o", merged.string()});
  auto m = kt::run_kvsweep(merge_args);
  ASSERT_EQ(m.exit_code, 0) << m.output;
  EXPECT_EQ(matched_by_triple(kt::read_records(merged)), whole);

  // The report: a grid per variant and the variant-effect table.
  auto rep = kt::run_kvsweep({"report", run.string()});
  ASSERT_EQ(rep.exit_code, 0) << rep.output;
  EXPECT_THAT(rep.output, HasSubstr("### Variant effect")) << rep.output;
  EXPECT_THAT(rep.output, HasSubstr("| copy | q4_0 | f16 | primary_matched ↑ | rot-off vs rot-on |"))
      << rep.output;
  EXPECT_THAT(rep.output, HasSubstr("primary_matched ↑ — copy/rot-off"));
}
