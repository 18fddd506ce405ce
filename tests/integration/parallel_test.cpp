// --parallel-cells: several cells at once, each server in its slot, give what one at a time gives.
#include <signal.h>

#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

namespace {

using Triples = std::map<std::string, nlohmann::json>;

// (cell, probe, item) → response; fails the test on a second record for a triple.
Triples by_triple(const std::vector<nlohmann::json>& records) {
  Triples out;
  for (const auto& r : records) {
    std::string key = r["cell"].dump() + "|" + r["probe"].get<std::string>() + "|" + r["item"].get<std::string>();
    EXPECT_TRUE(out.emplace(key, r["response"]).second) << "two records for " << key;
  }
  return out;
}

// NUL-separated entries of /proc/<pid>/<file>.
std::vector<std::string> proc_strings(pid_t pid, const char* file) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + file, std::ios::binary);
  std::vector<std::string> out;
  std::string s;
  while (std::getline(in, s, '\0')) out.push_back(s);
  return out;
}

// What a running llama-server is: its cell ("k/v", from -ctk/-ctv) and KVSWEEP_TEST_SLOT as its
// environment holds it ("<unset>" when missing). Empty cell when the process is already gone.
std::pair<std::string, std::string> server_cell_and_slot(pid_t pid) {
  // The environment first: a server that exits between two reads of /proc shows an empty
  // environment (never the case for a live one, which has at least PATH), and that must not
  // read as "started without its slot's variable".
  auto env = proc_strings(pid, "environ");
  if (env.empty()) return {};
  auto argv = proc_strings(pid, "cmdline");
  std::string k, v;
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "-ctk") k = argv[i + 1];
    if (argv[i] == "-ctv") v = argv[i + 1];
  }
  std::string slot = "<unset>";
  for (const auto& e : env)
    if (e.rfind("KVSWEEP_TEST_SLOT=", 0) == 0) slot = e.substr(18);
  if (k.empty()) return {};
  return {k + "/" + v, slot};
}

std::string cell_key(const nlohmann::json& c) {
  return c["type_k"].get<std::string>() + "/" + c["type_v"].get<std::string>();
}

}  // namespace

TEST(Parallel, TwoSlotsGiveTheSerialRecordsWhileCellsOverlap) {
  kt::TempDir dir;
  auto cfg = kt::write_config(dir, kt::base_config(kt::tiny_model()));
  auto serial = dir / "serial";
  auto s = kt::run_kvsweep({"run", cfg.string(), "-o", serial.string()});
  ASSERT_EQ(s.exit_code, 0) << s.output;

  auto parallel = dir / "parallel";
  kt::Background bg({"run", cfg.string(), "-o", parallel.string(), "--parallel-cells", "2", "--slot-env",
                     "KVSWEEP_TEST_SLOT={slot}"},
                    dir / "out.txt");
  // Watch the servers while the run goes: which cell each is, and the slot its environment names.
  std::map<std::string, std::set<std::string>> seen;  // cell → KVSWEEP_TEST_SLOT values of its servers
  std::size_t most_at_once = 0;
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      auto pids = kt::pids_with_arg(kt::tiny_model().string());
      most_at_once = std::max(most_at_once, pids.size());
      for (pid_t pid : pids) {
        auto [cell, slot] = server_cell_and_slot(pid);
        if (!cell.empty()) seen[cell].insert(slot);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  int code = bg.wait(300);
  done = true;
  watcher.join();
  ASSERT_EQ(code, 0) << bg.output();

  // The same (cell, probe, item) triples with the same greedy answers, each once.
  auto a = by_triple(kt::read_records(serial));
  auto b = by_triple(kt::read_records(parallel));
  EXPECT_EQ(a.size(), 36u);
  EXPECT_EQ(kt::read_records(parallel).size(), b.size());
  EXPECT_EQ(a, b);

  const auto manifest = kt::read_manifest(parallel);
  ASSERT_EQ(manifest["cells"].size(), 9u);
  EXPECT_EQ(manifest["status"], "complete");
  std::map<std::string, std::string> slot_of;  // cell → the slot the manifest says it ran in
  std::string reference_finished;
  for (const auto& c : manifest["cells"]) {
    EXPECT_EQ(c["outcome"], "ok") << c.dump();
    ASSERT_TRUE(c.contains("slot")) << c.dump();
    std::string slot = std::to_string(c["slot"].get<int>());
    EXPECT_TRUE(slot == "0" || slot == "1") << slot;
    EXPECT_EQ(c["slot_env"], (nlohmann::json{{"KVSWEEP_TEST_SLOT", slot}}));
    EXPECT_TRUE(slot_of.emplace(cell_key(c), slot).second) << cell_key(c) << " twice in the manifest";
    if (c["is_reference"].get<bool>()) reference_finished = c["finished_at"];
  }
  // The reference cell ends before any other starts (they compare with its records); after it,
  // two cells ran at once: some pair's [started_at, finished_at] spans intersect.
  ASSERT_FALSE(reference_finished.empty());
  bool overlapped = false;
  std::set<std::string> slots_used;
  for (const auto& c : manifest["cells"]) {
    slots_used.insert(std::to_string(c["slot"].get<int>()));
    if (c["is_reference"].get<bool>()) continue;
    EXPECT_GE(c["started_at"].get<std::string>(), reference_finished) << cell_key(c);
    for (const auto& d : manifest["cells"]) {
      if (cell_key(c) != cell_key(d) && c["started_at"] < d["finished_at"] && d["started_at"] < c["finished_at"])
        overlapped = true;
    }
  }
  EXPECT_TRUE(overlapped) << manifest["cells"].dump(1);
  EXPECT_EQ(slots_used, (std::set<std::string>{"0", "1"}));
  EXPECT_EQ(most_at_once, 2u);  // never more servers than slots, and both slots busy at some point

  // Each server got its own slot's value, the one the manifest records for its cell.
  EXPECT_GE(seen.size(), 2u);
  for (const auto& [cell, values] : seen)
    EXPECT_EQ(values, (std::set<std::string>{slot_of[cell]})) << cell;

  // The progress names the slots; the summary has a slot column.
  EXPECT_THAT(bg.output(), HasSubstr("starting server in slot 1")) << bg.output();
  EXPECT_THAT(bg.output(), HasSubstr("ready s  slot")) << bg.output();
}

TEST(Parallel, InterruptStopsEveryServerAndResumeFinishesInParallel) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  nlohmann::json prompts = nlohmann::json::array();
  for (int i = 0; i < 6; ++i) prompts.push_back("Count to ten, slowly: " + std::to_string(i));
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 48}, {"prompts", prompts}}};
  auto cfg_path = kt::write_config(dir, cfg);
  auto run = dir / "run";
  kt::Background bg({"run", cfg_path.string(), "-o", run.string(), "--parallel-cells", "2"}, dir / "out.txt");
  // Past the reference cell, with two servers up.
  ASSERT_TRUE(kt::wait_until([&] { return kt::count_lines(run / "records.jsonl") >= 8; }, 180)) << bg.output();
  ASSERT_TRUE(kt::wait_until([] { return kt::pids_with_arg(kt::tiny_model().string()).size() == 2; }, 60));
  ::kill(bg.pid(), SIGINT);
  EXPECT_EQ(bg.wait(60), 130) << bg.output();
  EXPECT_TRUE(kt::wait_until([] { return kt::pids_with_arg(kt::tiny_model().string()).empty(); }, 30));
  auto partial = kt::read_records(run);  // parses: no line torn by two threads
  ASSERT_LT(partial.size(), 54u);
  EXPECT_EQ(kt::read_manifest(run)["status"], "interrupted");
  EXPECT_THAT(bg.output(), HasSubstr("kvsweep run --resume")) << bg.output();

  auto r = kt::run_kvsweep({"run", "--resume", run.string(), "--parallel-cells", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto records = kt::read_records(run);
  EXPECT_EQ(by_triple(records).size(), 54u);
  EXPECT_EQ(records.size(), 54u);
  const auto manifest = kt::read_manifest(run);
  EXPECT_EQ(manifest["status"], "complete");
  EXPECT_EQ(manifest["cells"].size(), 9u);
  for (const auto& c : manifest["cells"]) EXPECT_EQ(c["outcome"], "ok") << c.dump();
}

TEST(Parallel, BadSlotTemplateIsAClearErrorBeforeAnythingRuns) {
  kt::TempDir dir;
  auto cfg = kt::write_config(dir, kt::base_config(kt::tiny_model()));
  auto r = kt::run_kvsweep({"run", cfg.string(), "-o", (dir / "run").string(), "--parallel-cells", "2", "--slot-env",
                            "CUDA_VISIBLE_DEVICES={gpu}"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--slot-env CUDA_VISIBLE_DEVICES={gpu}: unknown placeholder '{gpu}'"))
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "run" / "records.jsonl"));
}
