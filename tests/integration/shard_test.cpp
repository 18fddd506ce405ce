// Scale-out: shards of one sweep merged give what the unsharded run gives.
#include <fstream>
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

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
  // The Cost section (measured speeds) and the cell-outcomes table (measured start-up time) are
  // timings, not results, so they are left out; the outcomes are checked from the manifest.
  auto timings = body.find("## Cost");
  if (timings == std::string::npos) timings = body.find("## Cell outcomes");
  return timings == std::string::npos ? body : body.substr(0, timings);
}

}  // namespace

TEST(Shard, ThreeShardsMergedEqualTheUnshardedRun) {
  kt::TempDir dir;
  auto cfg = kt::write_config(dir, kt::base_config(kt::tiny_model()));
  auto whole = dir / "whole";
  ASSERT_EQ(kt::run_kvsweep({"run", cfg.string(), "-o", whole.string()}).exit_code, 0);

  std::vector<std::string> merge_args = {"merge"};
  std::set<std::string> owned;  // cells some shard owns
  int support_copies = 0;
  for (int i = 0; i < 3; ++i) {
    auto shard = dir / ("shard" + std::to_string(i));
    auto r = kt::run_kvsweep({"run", cfg.string(), "-o", shard.string(), "--shard", std::to_string(i) + "/3"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto manifest = kt::read_manifest(shard);  // keep it alive: operator[] returns into it
    for (const auto& c : manifest["cells"]) {
      std::string key = c["type_k"].get<std::string>() + "/" + c["type_v"].get<std::string>();
      // `complete` compares with the reference (match_reference): a shard that does not own the
      // reference cell runs a support copy of it. Every cell is owned by exactly one shard.
      if (c.value("support", false)) {
        EXPECT_TRUE(c["is_reference"].get<bool>()) << key;
        ++support_copies;
        continue;
      }
      EXPECT_TRUE(owned.insert(key).second) << key << " in two shards";
    }
    merge_args.push_back(shard.string());
  }
  EXPECT_EQ(owned.size(), 9u);
  EXPECT_EQ(support_copies, 2);
  auto merged = dir / "merged";
  merge_args.insert(merge_args.end(), {"-o", merged.string()});
  auto m = kt::run_kvsweep(merge_args);
  ASSERT_EQ(m.exit_code, 0) << m.output;
  // 2 support copies × 4 prompts.
  EXPECT_THAT(m.output, HasSubstr("9 cells, 36 records (0 duplicates dropped, 8 records of support copies"))
      << m.output;

  auto a = by_triple(kt::read_records(whole));
  auto b = by_triple(kt::read_records(merged));
  EXPECT_EQ(a.size(), 36u);
  EXPECT_EQ(kt::read_records(merged).size(), 36u);
  EXPECT_EQ(a, b);  // same triples, same greedy answers

  auto ra = kt::run_kvsweep({"report", whole.string()});
  auto rb = kt::run_kvsweep({"report", merged.string()});
  ASSERT_EQ(ra.exit_code, 0) << ra.output;
  ASSERT_EQ(rb.exit_code, 0) << rb.output;
  EXPECT_EQ(report_body(ra.output), report_body(rb.output));
  EXPECT_THAT(report_body(ra.output), HasSubstr("## complete"));
  // The recommendation reads the real server's KV sizes and timings, and a merged run recommends as the whole.
  auto ca = kt::run_kvsweep({"recommend", whole.string(), "--format", "json"});
  ASSERT_EQ(ca.exit_code, 0) << ca.output;
  const auto rec = nlohmann::json::parse(ca.output);
  ASSERT_EQ(rec["models"].size(), 1u);
  EXPECT_EQ(rec["models"][0]["cells"].size(), 8u) << ca.output;
  for (const auto& c : rec["cost"]["cells"]) {
    EXPECT_GT(c["kv_bytes_per_token"].get<double>(), 0.0) << c.dump();
    EXPECT_GT(c["decode_tps"]["n"].get<int>(), 0) << c.dump();
  }
  auto cb = kt::run_kvsweep({"recommend", merged.string(), "--format", "json"});
  ASSERT_EQ(cb.exit_code, 0) << cb.output;
  EXPECT_EQ(nlohmann::json::parse(cb.output)["models"][0]["frontier"], rec["models"][0]["frontier"]);
  const auto merged_manifest = kt::read_manifest(merged);
  EXPECT_EQ(merged_manifest["cells"].size(), 9u);
  EXPECT_EQ(merged_manifest["status"], "complete");
  for (const auto& c : merged_manifest["cells"]) {
    EXPECT_EQ(c["outcome"], "ok");
    EXPECT_FALSE(c.value("support", false)) << c.dump();
  }

  // Two of three shards: a partial run, and merge says which shard is missing.
  auto partial = dir / "partial";
  auto p = kt::run_kvsweep({"merge", (dir / "shard0").string(), (dir / "shard2").string(), "-o", partial.string()});
  ASSERT_EQ(p.exit_code, 0) << p.output;
  EXPECT_THAT(p.output, HasSubstr("missing shards 1/3: the merged run is partial"))
      << p.output;
  EXPECT_EQ(kt::read_manifest(partial)["status"], "partial");

  // A shard is also deterministic: the same I/N gives the same cells.
  auto again = kt::run_kvsweep({"run", cfg.string(), "--shard", "1/3", "--dry-run"});
  auto again2 = kt::run_kvsweep({"run", cfg.string(), "--shard", "1/3", "--dry-run"});
  EXPECT_EQ(again.output, again2.output);
}

TEST(Shard, SupportCopiesGiveWayToTheOwnerAndAShardResumesAsItself) {
  kt::TempDir dir;
  auto config = kt::base_config(kt::tiny_model());
  config["grid"] = {{"k", {"f16", "q4_0"}}, {"v", "same-as-k"}, {"reference", "f16/f16"}, {"order", "as-listed"}};
  config["probes"][0]["max_tokens"] = 8;
  auto cfg = kt::write_config(dir, config);
  // Canonical order f16/f16, f16/q4_0, q4_0/f16, q4_0/q4_0: shard 0/2 owns the reference.
  auto s0 = dir / "s0", s1 = dir / "s1";
  ASSERT_EQ(kt::run_kvsweep({"run", cfg.string(), "-o", s0.string(), "--shard", "0/2"}).exit_code, 0);
  ASSERT_EQ(kt::run_kvsweep({"run", cfg.string(), "-o", s1.string(), "--shard", "1/2"}).exit_code, 0);
  ASSERT_EQ(kt::read_records(s1).size(), 12u);  // f16/q4_0 and q4_0/q4_0 plus the support reference

  // The support copy measured something else (another GPU, say): merge keeps the owner's.
  std::vector<std::string> lines;
  for (auto r : kt::read_records(s1)) {
    if (r["cell"]["type_k"] == "f16" && r["cell"]["type_v"] == "f16") r["response"] = "measured elsewhere";
    lines.push_back(r.dump());
  }
  {
    std::ofstream out(s1 / "records.jsonl", std::ios::trunc);
    for (const auto& l : lines) out << l << "\n";
  }
  auto merged = dir / "merged";
  auto m = kt::run_kvsweep({"merge", s0.string(), s1.string(), "-o", merged.string()});
  ASSERT_EQ(m.exit_code, 0) << m.output;
  auto want = by_triple(kt::read_records(s0));
  auto got = by_triple(kt::read_records(merged));
  EXPECT_EQ(got.size(), 16u);
  for (const auto& [key, response] : want) EXPECT_EQ(got[key], response) << key;

  // An owned cell whose records differ between two runs is refused.
  auto copy = dir / "s0copy";
  std::filesystem::copy(s0, copy, std::filesystem::copy_options::recursive);
  lines.clear();
  for (auto r : kt::read_records(copy)) {
    if (r["cell"]["type_k"] == "q4_0") r["response"] = "not what s0 has";
    lines.push_back(r.dump());
  }
  {
    std::ofstream out(copy / "records.jsonl", std::ios::trunc);
    for (const auto& l : lines) out << l << "\n";
  }
  auto refused = kt::run_kvsweep({"merge", s0.string(), copy.string(), "-o", (dir / "refused").string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.output, HasSubstr("has different results in")) << refused.output;

  // --resume of a shard runs the shard's cells (all recorded: nothing), not the whole grid.
  auto r = kt::run_kvsweep({"run", "--resume", s0.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(kt::read_records(s0).size(), 8u);
  auto wrong = kt::run_kvsweep({"run", "--resume", s0.string(), "--shard", "1/2"});
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_THAT(wrong.output, HasSubstr("the run is shard 0/2, not 1/2")) << wrong.output;

  // Without a probe that compares with the reference, a shard runs only its own cells.
  config["probes"] = {{{"kind", "divergence"}, {"mode", "cache"}, {"tokens", 4}}};
  auto plan = kt::run_kvsweep({"run", kt::write_config(dir, config, "cache.json").string(), "--shard", "1/2", "--dry-run"});
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr("cells (2, in run order)")) << plan.output;
  EXPECT_THAT(plan.output, Not(HasSubstr("f16/f16"))) << plan.output;
  auto with_support = kt::run_kvsweep({"run", cfg.string(), "--shard", "1/2", "--dry-run"});
  EXPECT_THAT(with_support.output, HasSubstr("tiny/f16/f16  (reference, support")) << with_support.output;
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
  EXPECT_THAT(r.output, HasSubstr("refusing to merge runs of different configs")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "m" / "records.jsonl"));
}
