// A first run's paths, end to end on the real llama-server and the tiny
// model: a difference seen but not proven is never called worse; `--only` keeps the reference its cells
// are compared with, and takes alternatives; the gate fails closed on a run that lacks baseline cells or
// items. No fakes.
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kt = kvsweep::testing;
using nlohmann::json;
using std::filesystem::path;

namespace {

std::string pair_of(const json& cell) {
  return cell["type_k"].get<std::string>() + "/" + cell["type_v"].get<std::string>();
}

/// A copy of `run` (without its report) whose records pass through `edit`; an edit returning false drops
/// the record.
path doctored_copy(const path& run, const path& to, const std::function<bool(json&)>& edit) {
  std::filesystem::copy(run, to, std::filesystem::copy_options::recursive);
  std::filesystem::remove_all(to / "report");
  std::ofstream out(to / "records.jsonl", std::ios::trunc);
  for (json r : kt::read_records(run))
    if (edit(r)) out << r.dump() << "\n";
  return to;
}

/// A copy of `run` as if its grid had no cell `pair` ("K/V"): no record, no manifest or journal entry.
path without_cell(const path& run, const path& to, const std::string& pair) {
  doctored_copy(run, to, [&](json& r) { return pair_of(r["cell"]) != pair; });
  json manifest = kt::read_manifest(run);
  json cells = json::array();
  for (const auto& c : manifest["cells"])
    if (pair_of(c) != pair) cells.push_back(c);
  manifest["cells"] = cells;
  std::ofstream(to / "manifest.json", std::ios::trunc) << manifest.dump(2);
  std::ofstream journal(to / "cells.jsonl", std::ios::trunc);
  for (const auto& c : cells) journal << c.dump() << "\n";
  return to;
}

/// The tiny model, K f16 (the reference), q8_0 and q4_0 over V f16, the `complete` probe (4 prompts).
json three_cells() {
  json cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16", "q8_0", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  return cfg;
}

std::set<std::string> cells_of(const path& run) {
  const json manifest = kt::read_manifest(run);
  std::set<std::string> cells;
  for (const auto& c : manifest["cells"]) cells.insert(pair_of(c));
  return cells;
}

}  // namespace

TEST(MeasureGrowGate, ASeenButUnprovenDifferenceIsNeverCalledWorse) {
  kt::TempDir dir;
  json cfg = three_cells();
  cfg["grid"]["k"] = {"f16", "q4_0"};
  // complete's metrics are changes, gated only when named: named here, by the probe's "gate".
  cfg["probes"][0]["gate"] = {"match_reference", "common_prefix_chars"};
  const path run = dir / "run";
  auto swept = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(swept.exit_code, 0) << swept.output;

  // The q4_0 cell answers as the reference did on every prompt but one, where it matches nothing: a
  // difference seen on 1 of 4 items, which no verdict can call inferior (or settle) on 4 items.
  std::map<std::string, json> reference;  // item → the reference's metrics
  for (const auto& r : kt::read_records(run))
    if (r["status"] == "ok" && pair_of(r["cell"]) == "f16/f16") reference[r["item"].get<std::string>()] = r["metrics"];
  ASSERT_EQ(reference.size(), 4u);
  std::string lost;
  const path seen = doctored_copy(run, dir / "seen", [&](json& r) {
    if (r["status"] != "ok" || pair_of(r["cell"]) == "f16/f16") return true;
    const std::string item = r["item"].get<std::string>();
    for (const char* m : {"match_reference", "common_prefix_chars"}) r["metrics"][m] = reference[item][m];
    if (lost.empty()) lost = item;
    if (item == lost) r["metrics"]["match_reference"] = r["metrics"]["common_prefix_chars"] = 0;
    return true;
  });
  ASSERT_GT(reference[lost]["common_prefix_chars"].get<double>(), 0.0);

  auto rec = kt::run_kvsweep({"recommend", seen.string()});
  EXPECT_EQ(rec.exit_code, 0) << rec.output;
  EXPECT_THAT(rec.output, HasSubstr("A difference seen, not proven")) << rec.output;
  EXPECT_THAT(rec.output, HasSubstr("items would settle it")) << rec.output;
  EXPECT_THAT(rec.output, HasSubstr("no verdict is inferior")) << rec.output;
  EXPECT_THAT(rec.output, Not(HasSubstr("worse than"))) << rec.output;
  EXPECT_THAT(rec.output, Not(HasSubstr("Differs from the reference"))) << rec.output;

  auto brief = kt::run_kvsweep({"report", seen.string(), "--format", "summary"});
  EXPECT_EQ(brief.exit_code, 0) << brief.output;
  EXPECT_THAT(brief.output, HasSubstr("A difference seen, not proven")) << brief.output;
  EXPECT_THAT(brief.output, Not(HasSubstr("worse than"))) << brief.output;
  // The significance list sits under the verdict as one message that cannot read as a contradiction.
  EXPECT_THAT(brief.output, HasSubstr("No change is significant either (p < 0.05 after Holm): nothing here is proven worse"))
      << brief.output;
}

TEST(MeasureGrowGate, OnlyKeepsTheReferenceAndAGateOnTheSmallerRunFailsClosed) {
  kt::TempDir dir;
  const path config = kt::write_config(dir, three_cells());
  const path full = dir / "full", only = dir / "only";
  auto swept = kt::run_kvsweep({"run", config.string(), "-o", full.string()});
  ASSERT_EQ(swept.exit_code, 0) << swept.output;

  {
    SCOPED_TRACE("--only k=q4_0 runs the reference too, and recommend compares with it");
    auto r = kt::run_kvsweep({"run", config.string(), "-o", only.string(), "--only", "k=q4_0"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(cells_of(only), (std::set<std::string>{"f16/f16", "q4_0/f16"}));
    std::set<std::string> recorded;
    for (const auto& rec : kt::read_records(only)) recorded.insert(pair_of(rec["cell"]));
    EXPECT_EQ(recorded, (std::set<std::string>{"f16/f16", "q4_0/f16"}));
    auto rec = kt::run_kvsweep({"recommend", only.string()});
    EXPECT_EQ(rec.exit_code, 0) << rec.output;
    EXPECT_THAT(rec.output, Not(HasSubstr("No reference cell"))) << rec.output;
  }
  {
    SCOPED_TRACE("alternatives: k=q4_0|q8_0 and a repeated --only select either, with the reference");
    using Args = std::vector<std::string>;
    for (const Args& filter : {Args{"--only", "k=q4_0|q8_0"}, Args{"--only", "k=q4_0", "--only", "k=q8_0"}}) {
      Args args{"run", config.string(), "--dry-run"};
      args.insert(args.end(), filter.begin(), filter.end());
      auto plan = kt::run_kvsweep(args);
      EXPECT_EQ(plan.exit_code, 0) << plan.output;
      EXPECT_THAT(plan.output, HasSubstr("cells (3, in run order)")) << plan.output;
      EXPECT_THAT(plan.output, HasSubstr("tiny/f16/f16  (reference)")) << plan.output;
      EXPECT_THAT(plan.output, HasSubstr("tiny/q8_0/f16")) << plan.output;
      EXPECT_THAT(plan.output, HasSubstr("tiny/q4_0/f16")) << plan.output;
    }
    auto help = kt::run_kvsweep({"run", "--help"});
    EXPECT_THAT(help.output, HasSubstr("k=q4_0|q8_0")) << help.output;
  }
  {
    SCOPED_TRACE("a run without a baseline cell: MISSING, exit 1, a JUnit failure; --allow-missing passes it");
    const path junit = dir / "junit.xml";
    auto gate = kt::run_kvsweep({"compare", only.string(), "--baseline", full.string(), "--junit", junit.string()});
    EXPECT_EQ(gate.exit_code, 1) << gate.output;
    EXPECT_THAT(gate.output, HasSubstr("MISSING ")) << gate.output;
    EXPECT_THAT(gate.output, HasSubstr("this run has no such cell")) << gate.output;
    EXPECT_THAT(gate.output, HasSubstr("missing (baseline cells or items this run lacks: they fail the gate)"))
        << gate.output;
    EXPECT_THAT(kt::read_text(junit), HasSubstr("<failure type=\"missing\"")) << kt::read_text(junit);
    auto allowed = kt::run_kvsweep(
        {"compare", only.string(), "--baseline", full.string(), "--allow-missing", "--junit", junit.string()});
    EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
    EXPECT_THAT(allowed.output, HasSubstr("--allow-missing: they pass")) << allowed.output;
    EXPECT_THAT(kt::read_text(junit), Not(HasSubstr("<failure"))) << kt::read_text(junit);
  }
  {
    SCOPED_TRACE("a run whose grid lacks a baseline cell, whatever the reason: exit 1");
    const path smaller = without_cell(full, dir / "smaller", "q8_0/f16");
    auto gate = kt::run_kvsweep({"compare", smaller.string(), "--baseline", full.string()});
    EXPECT_EQ(gate.exit_code, 1) << gate.output;
    EXPECT_THAT(gate.output, HasSubstr("this run has no such cell")) << gate.output;
  }
  {
    SCOPED_TRACE("a cell that lost one item the other cells hold: MISSING, exit 1, the item named");
    std::string lost;
    const path fewer = doctored_copy(full, dir / "fewer", [&](json& r) {
      if (pair_of(r["cell"]) != "q8_0/f16" || r["status"] != "ok" || !lost.empty()) return true;
      lost = r["item"].get<std::string>();
      return false;  // its record never written: the item did not run
    });
    ASSERT_FALSE(lost.empty());
    auto gate = kt::run_kvsweep({"compare", fewer.string(), "--baseline", full.string()});
    EXPECT_EQ(gate.exit_code, 1) << gate.output;
    EXPECT_THAT(gate.output, HasSubstr("missing from this cell (failed or not run: " + lost + ")")) << gate.output;
    EXPECT_EQ(kt::run_kvsweep({"compare", fewer.string(), "--baseline", full.string(), "--allow-missing"}).exit_code, 0);
  }
}

TEST(MeasureGrowGate, ARunGrowsKeepingItsRecordsByteForByteAndRunsOnlyWhatIsNew) {
  kt::TempDir dir;
  json cfg = three_cells();
  cfg["grid"]["k"] = {"f16", "q8_0"};
  cfg["probes"][0]["prompts"] = {"The capital of France is", "Water boils at"};
  const path run = dir / "run";
  auto first = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string before = kt::read_text(run / "records.jsonl");
  ASSERT_EQ(kt::read_records(run).size(), 4u);
  const std::string hash_before = kt::read_manifest(run)["config_hash"];

  json grown = cfg;
  grown["grid"]["k"].push_back("q4_0");
  grown["probes"][0]["prompts"].push_back("The opposite of hot is");
  const path grown_config = kt::write_config(dir, grown, "grown.json");
  {
    SCOPED_TRACE("--dry-run --resume shows what is kept and what would run, and what the config adds");
    auto plan = kt::run_kvsweep({"run", grown_config.string(), "--resume", run.string(), "--dry-run"});
    ASSERT_EQ(plan.exit_code, 0) << plan.output;
    EXPECT_THAT(plan.output, HasSubstr("4 of these 9 items are recorded ok and kept; 5 to run")) << plan.output;
    EXPECT_THAT(plan.output, HasSubstr("+ grid.k: 1 more (2 → 3)")) << plan.output;
    EXPECT_THAT(plan.output, HasSubstr("+ probes[complete].prompts: 1 more (2 → 3)")) << plan.output;
    EXPECT_EQ(kt::read_text(run / "records.jsonl"), before);
  }
  {
    SCOPED_TRACE("the resume keeps the four records as they were and runs the five new items");
    auto r = kt::run_kvsweep({"run", grown_config.string(), "--resume", run.string()});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("the run grows (config hash " + hash_before)) << r.output;
    const std::string after = kt::read_text(run / "records.jsonl");
    ASSERT_GE(after.size(), before.size());
    EXPECT_EQ(after.substr(0, before.size()), before);
    const auto records = kt::read_records(run);
    ASSERT_EQ(records.size(), 9u);
    std::set<std::string> triples;
    for (std::size_t i = 4; i < records.size(); ++i) {
      EXPECT_EQ(records[i]["status"], "ok") << records[i].dump();
      EXPECT_TRUE(pair_of(records[i]["cell"]) == "q4_0/f16" || records[i]["item"] == "p2") << records[i].dump();
    }
    for (const auto& rec : records) triples.insert(pair_of(rec["cell"]) + " " + rec["item"].get<std::string>());
    EXPECT_EQ(triples.size(), 9u);
    const json manifest = kt::read_manifest(run);
    ASSERT_EQ(manifest["grown"].size(), 1u) << manifest.dump(2);
    EXPECT_EQ(manifest["config_hash"], manifest["grown"][0]["to_config_hash"]);
    EXPECT_EQ(manifest["grown"][0]["from_config_hash"], hash_before);
    EXPECT_EQ(manifest["grown"][0]["added"].size(), 2u) << manifest["grown"].dump();
    EXPECT_EQ(cells_of(run), (std::set<std::string>{"f16/f16", "q8_0/f16", "q4_0/f16"}));
  }
  {
    SCOPED_TRACE("a change that is not growth is refused naming it, in the dry run too; nothing is written");
    const std::string now = kt::read_text(run / "records.jsonl");
    json changed = grown;
    changed["probes"][0]["max_tokens"] = 32;
    const path changed_config = kt::write_config(dir, changed, "changed.json");
    for (const bool dry : {true, false}) {
      std::vector<std::string> args{"run", changed_config.string(), "--resume", run.string()};
      if (dry) args.push_back("--dry-run");
      auto r = kt::run_kvsweep(args);
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_THAT(r.output, HasSubstr("the config changed since the run started")) << r.output;
      EXPECT_THAT(r.output, HasSubstr("probes[complete].max_tokens: 16 → 32")) << r.output;
      EXPECT_THAT(r.output, Not(HasSubstr("items are recorded ok and kept"))) << r.output;
    }
    json reordered = grown;
    reordered["probes"][0]["prompts"] = {"Water boils at", "The capital of France is", "The opposite of hot is"};
    auto r = kt::run_kvsweep({"run", kt::write_config(dir, reordered, "reordered.json").string(), "--resume", run.string()});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("asks something else in this config (its spec differs)")) << r.output;
    EXPECT_EQ(kt::read_text(run / "records.jsonl"), now);
  }
}

TEST(MeasureGrowGate, AFirstRunGetsATimeFromOneItemPerProbeMeasuredOnTheReference) {
  kt::TempDir dir;
  json cfg = three_cells();
  cfg["output_dir"] = (dir / "runs").string();  // no earlier run to estimate from
  const path config = kt::write_config(dir, cfg);
  auto plain = kt::run_kvsweep({"run", config.string(), "--dry-run"});
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_THAT(plain.output, HasSubstr("time: no previous run of this model")) << plain.output;
  EXPECT_THAT(plain.output, HasSubstr("--dry-run --measure times one item of each probe")) << plain.output;

  auto measured = kt::run_kvsweep({"run", config.string(), "--dry-run", "--measure"});
  ASSERT_EQ(measured.exit_code, 0) << measured.output;
  EXPECT_THAT(measured.output, HasSubstr("(from run measured now: one item of each probe on the reference cell: "))
      << measured.output;
  EXPECT_THAT(measured.output, HasSubstr("s/item for complete")) << measured.output;
  EXPECT_THAT(measured.output, HasSubstr("s to start and stop a server")) << measured.output;
  // A plan, not a run: nothing is left under output_dir, nor the measurement's own directory.
  EXPECT_FALSE(std::filesystem::exists(dir / "runs"));
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    EXPECT_THAT(e.path().filename().string(), Not(HasSubstr("kvsweep-measure-")));  // only this test measures

  // Once a run of the model is complete, every later run says its time before it starts.
  auto first = kt::run_kvsweep({"run", config.string(), "-o", (dir / "runs" / "first").string()});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, Not(HasSubstr("kvsweep: time:"))) << first.output;
  auto second = kt::run_kvsweep({"run", config.string(), "-o", (dir / "runs" / "second").string()});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("kvsweep: time: ~")) << second.output;
  EXPECT_THAT(second.output, HasSubstr("(from run first: ")) << second.output;
}
