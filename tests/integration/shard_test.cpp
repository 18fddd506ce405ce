// Scale-out: shards of one sweep merged give what the unsharded run gives.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "harness.hpp"

namespace kt = kvsweep::testing;

namespace {

std::map<std::string, nlohmann::json> by_triple(const std::vector<nlohmann::json>& records) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& r : records)
    out[r["cell"].dump() + "|" + r["probe"].get<std::string>() + "|" + r["item"].get<std::string>()] = r["response"];
  return out;
}

// The report body from the first probe section on (the header carries run times), without
// the stderr line naming the output directory.
std::string report_body(const std::string& markdown) {
  auto pos = markdown.find("\n## ");
  std::string body = pos == std::string::npos ? markdown : markdown.substr(pos);
  // The cell-outcomes table ends with the measured start-up time (ready s): a timing,
  // not a result, so it is left out; the outcomes are checked from the manifest.
  auto outcomes = body.find("## Cell outcomes");
  return outcomes == std::string::npos ? body : body.substr(0, outcomes);
}

}  // namespace

TEST(Shard, ThreeShardsMergedEqualTheUnshardedRun) {
  kt::TempDir dir;
  auto cfg = kt::write_config(dir, kt::base_config(kt::tiny_model()));
  auto whole = dir / "whole";
  ASSERT_EQ(kt::run_kvsweep({"run", cfg.string(), "-o", whole.string()}).exit_code, 0);

  std::vector<std::string> merge_args = {"merge"};
  std::set<std::string> cells_seen;
  for (int i = 0; i < 3; ++i) {
    auto shard = dir / ("shard" + std::to_string(i));
    auto r = kt::run_kvsweep({"run", cfg.string(), "-o", shard.string(), "--shard", std::to_string(i) + "/3"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto manifest = kt::read_manifest(shard);  // keep it alive: operator[] returns into it
    for (const auto& c : manifest["cells"]) {
      std::string key = c["type_k"].get<std::string>() + "/" + c["type_v"].get<std::string>();
      // Every cell in exactly one shard; the reference cell runs in each (probes compare with it).
      if (c["is_reference"].get<bool>()) continue;
      EXPECT_TRUE(cells_seen.insert(key).second) << key << " in two shards";
    }
    merge_args.push_back(shard.string());
  }
  EXPECT_EQ(cells_seen.size(), 8u);
  auto merged = dir / "merged";
  merge_args.insert(merge_args.end(), {"-o", merged.string()});
  auto m = kt::run_kvsweep(merge_args);
  ASSERT_EQ(m.exit_code, 0) << m.output;

  auto a = by_triple(kt::read_records(whole));
  auto b = by_triple(kt::read_records(merged));
  EXPECT_EQ(a.size(), 36u);
  EXPECT_EQ(a, b);  // same triples, same greedy answers

  auto ra = kt::run_kvsweep({"report", whole.string()});
  auto rb = kt::run_kvsweep({"report", merged.string()});
  ASSERT_EQ(ra.exit_code, 0) << ra.output;
  ASSERT_EQ(rb.exit_code, 0) << rb.output;
  EXPECT_EQ(report_body(ra.output), report_body(rb.output));
  EXPECT_NE(report_body(ra.output).find("## complete"), std::string::npos);
  const auto merged_manifest = kt::read_manifest(merged);
  EXPECT_EQ(merged_manifest["cells"].size(), 9u);
  for (const auto& c : merged_manifest["cells"]) EXPECT_EQ(c["outcome"], "ok");

  // A shard is also deterministic: the same I/N gives the same cells.
  auto again = kt::run_kvsweep({"run", cfg.string(), "--shard", "1/3", "--dry-run"});
  auto again2 = kt::run_kvsweep({"run", cfg.string(), "--shard", "1/3", "--dry-run"});
  EXPECT_EQ(again.output, again2.output);
}

TEST(Shard, MergeRefusesRunsOfDifferentConfigs) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  auto a = dir / "a";
  ASSERT_EQ(kt::run_kvsweep({"run", kt::write_config(dir, cfg, "a.json").string(), "-o", a.string()}).exit_code, 0);
  cfg["probes"][0]["max_tokens"] = 8;
  auto b = dir / "b";
  ASSERT_EQ(kt::run_kvsweep({"run", kt::write_config(dir, cfg, "b.json").string(), "-o", b.string()}).exit_code, 0);
  auto r = kt::run_kvsweep({"merge", a.string(), b.string(), "-o", (dir / "m").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("refusing to merge runs of different configs"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "m" / "records.jsonl"));
}
