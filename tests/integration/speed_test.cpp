// The speed probe on the real llama-bench with the tiny model (CPU), beside kld, and the cell
// lifecycle that runs both with no llama-server of the cell alive.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

namespace {

/// The program (argv[0]'s file name) of a running process, "" when it has gone.
std::string program_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string argv0;
  std::getline(f, argv0, '\0');
  return std::filesystem::path(argv0).filename().string();
}

/// The time of the lifecycle event `name` of the manifest cell `c` ("" when absent).
std::string event_at(const nlohmann::json& c, const std::string& name) {
  for (const auto& e : c.value("lifecycle", nlohmann::json::array()))
    if (e.value("event", "") == name) return e.value("at", "");
  return "";
}

}  // namespace

TEST(Speed, OneItemPerDepthWithTheCellsTypesAndNoServerAliveWhileToolsRun) {
  kt::TempDir dir;
  // A model path of this test's own: every process that loads it is this run's.
  const auto model = dir / "speed-tiny.gguf";
  std::filesystem::copy_file(kt::tiny_model(), model);
  auto cfg = kt::base_config(model);
  cfg["grid"] = {{"k", {"f16", "q8_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}, {"order", "as-listed"}};
  cfg["probes"] = {
      {{"kind", "speed"}, {"depths", {0, 64}}, {"pp", 32}, {"tg", 8}, {"repetitions", 2}},
      {{"kind", "complete"}, {"max_tokens", 4}, {"prompts", {"Once upon a time"}}},
      {{"kind", "kld"}, {"corpus", {{"random_bodies", {{"functions", 4}, {"value_len", 24}, {"seed", 7}}}}},
       {"ctx", 128}, {"chunks", 2}},
  };
  auto cfg_path = kt::write_config(dir, cfg);
  auto run = dir / "run";

  // Watch the process table while the sweep runs: whenever llama-bench or llama-perplexity holds our
  // model, no llama-server may hold it.
  std::atomic<bool> done{false};
  std::atomic<int> tool_seen{0}, overlap{0};
  std::thread watcher([&] {
    while (!done) {
      bool tool = false, server = false;
      for (pid_t pid : kt::pids_with_arg(model.string())) {
        const std::string program = program_of(pid);
        tool = tool || program == "llama-bench" || program == "llama-perplexity";
        server = server || program == "llama-server";
      }
      if (tool) ++tool_seen;
      if (tool && server) ++overlap;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  auto r = kt::run_kvsweep({"run", cfg_path.string(), "-o", run.string()});
  done = true;
  watcher.join();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(tool_seen.load(), 0) << "the watcher never saw llama-bench or llama-perplexity run";
  EXPECT_EQ(overlap.load(), 0) << "a tool ran while the cell's llama-server was alive";

  auto records = kt::read_records(run);
  std::set<std::string> speed_items;
  for (const auto& rec : records) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    if (rec["probe"] != "speed") continue;
    const std::string k = rec["cell"]["type_k"], v = rec["cell"]["type_v"];
    speed_items.insert(k + "/" + v + "/" + rec["item"].get<std::string>());
    EXPECT_GT(rec["metrics"]["pp_tok_s"].get<double>(), 0.0) << rec.dump();
    EXPECT_GT(rec["metrics"]["tg_tok_s"].get<double>(), 0.0) << rec.dump();
    const std::string command = rec["response"]["command"];
    EXPECT_THAT(command, HasSubstr("-ctk " + k + " -ctv " + v)) << command;
    EXPECT_THAT(command, HasSubstr("-fa on")) << command;
    EXPECT_THAT(command, HasSubstr("-t 1")) << command;
    // llama-bench's own objects, kept whole: it ran the cell's types at the item's depth.
    ASSERT_EQ(rec["response"]["tests"].size(), 2u);
    for (const auto& t : rec["response"]["tests"]) {
      EXPECT_EQ(t["type_k"], k);
      EXPECT_EQ(t["type_v"], v);
      EXPECT_EQ("d" + std::to_string(t["n_depth"].get<int>()), rec["item"]);
    }
  }
  EXPECT_EQ(speed_items, (std::set<std::string>{"f16/f16/d0", "f16/f16/d64", "q8_0/f16/d0", "q8_0/f16/d64"}));

  // The lifecycle says it: the server stopped, then the tool probes ran (speed and kld, after complete).
  const auto manifest = kt::read_manifest(run);
  ASSERT_EQ(manifest["cells"].size(), 2u);
  for (const auto& c : manifest["cells"]) {
    const std::string stopped = event_at(c, "server_stopped"), tools = event_at(c, "tool_probes");
    ASSERT_FALSE(stopped.empty()) << c.dump();
    ASSERT_FALSE(tools.empty()) << c.dump();
    EXPECT_LE(stopped, tools);  // ISO 8601 at ms, one clock
    for (const auto& e : c["lifecycle"]) {
      if (e["event"] == "tool_probes") {
        EXPECT_EQ(e["probes"], (nlohmann::json{"speed", "kld"}));
      }
    }
    for (const auto& rec : records) {
      if (rec["cell"]["type_k"] != c["type_k"]) continue;
      // Records carry whole seconds: compare to the second.
      const std::string at = rec["time"].get<std::string>().substr(0, 19);
      if (rec["probe"] == "complete") {
        EXPECT_LE(at, stopped.substr(0, 19));
      } else {
        EXPECT_GE(at, tools.substr(0, 19));
      }
    }
  }

  // The report puts llama-bench's speeds in the Cost section.
  auto rep = kt::run_kvsweep({"report", run.string(), "--format", "md"});
  ASSERT_EQ(rep.exit_code, 0) << rep.output;
  std::ifstream md_file(run / "report" / "report.md");
  const std::string md((std::istreambuf_iterator<char>(md_file)), std::istreambuf_iterator<char>());
  EXPECT_THAT(md, HasSubstr("pp32 tok/s | tg8 tok/s | pp32 @ d64 tok/s | tg8 @ d64 tok/s |")) << md;
}
