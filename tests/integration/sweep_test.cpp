// The sweep engine against the real llama-server on the tiny model.
#include <signal.h>

#include <fstream>
#include <map>
#include <sstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kt = kvsweep::testing;

namespace {

std::string cell_of(const nlohmann::json& r) {
  return r["cell"]["type_k"].get<std::string>() + "/" + r["cell"]["type_v"].get<std::string>();
}

// Every ok (cell, probe, item) triple appears exactly once.
void expect_no_duplicate_ok(const std::vector<nlohmann::json>& records) {
  std::map<std::string, int> seen;
  for (const auto& r : records)
    if (r["status"] == "ok") ++seen[cell_of(r) + "|" + r["probe"].get<std::string>() + "|" + r["item"].get<std::string>()];
  for (const auto& [k, n] : seen) EXPECT_EQ(n, 1) << k;
}

}  // namespace

TEST(Sweep, ThreeByThreeGridAllCellsOkWithVerifiedKvTypes) {
  kt::TempDir dir;
  auto cfg = kt::write_config(dir, kt::base_config(kt::tiny_model()));
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", cfg.string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;

  auto manifest = kt::read_manifest(run);
  ASSERT_EQ(manifest["cells"].size(), 9u);
  EXPECT_EQ(manifest["status"], "complete");
  EXPECT_EQ(manifest["models"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_THAT(manifest["server"]["version"].get<std::string>(), HasSubstr("de3ff81"));
  std::set<std::string> cells;
  for (const auto& c : manifest["cells"]) {
    EXPECT_EQ(c["outcome"], "ok") << c.dump();
    // The server allocated exactly what was asked for, with flash attention on.
    EXPECT_TRUE(c["effective"]["found"].get<bool>());
    EXPECT_EQ(c["effective"]["type_k"], c["type_k"]);
    EXPECT_EQ(c["effective"]["type_v"], c["type_v"]);
    EXPECT_EQ(c["effective"]["flash_attn"], "enabled");
    EXPECT_GT(c["effective"]["kv_mib"].get<double>(), 0.0);
    // A CPU build: the attention runs on the CPU, and the KV buffer is the CPU's.
    EXPECT_EQ(c["effective"]["path"], "cpu") << c["effective"].dump();
    bool cpu_kv = false;
    for (const auto& m : c["effective"]["memory"]) cpu_kv = cpu_kv || (m["device"] == "CPU" && m["kv_mib"].get<double>() > 0);
    EXPECT_TRUE(cpu_kv) << c["effective"].dump();
    cells.insert(c["type_k"].get<std::string>() + "/" + c["type_v"].get<std::string>());
  }
  EXPECT_EQ(cells.size(), 9u);
  // Quantized caches are smaller than f16.
  double f16 = 0, q4 = 0;
  for (const auto& c : manifest["cells"]) {
    if (c["type_k"] == "f16" && c["type_v"] == "f16") f16 = c["effective"]["kv_mib"];
    if (c["type_k"] == "q4_0" && c["type_v"] == "q4_0") q4 = c["effective"]["kv_mib"];
  }
  EXPECT_LT(q4, f16 / 2);

  auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 9u * 4u);  // 4 default prompts per cell
  expect_no_duplicate_ok(records);
  std::map<std::string, std::string> answers;  // cell -> answer to p0
  for (const auto& r2 : records) {
    EXPECT_EQ(r2["status"], "ok");
    EXPECT_GT(r2["timings"]["predicted_n"].get<int>(), 0);
    EXPECT_FALSE(r2["response"]["content"].get<std::string>().empty());
    if (r2["item"] == "p0") answers[cell_of(r2)] = r2["response"]["content"];
  }
  // Greedy and deterministic: the reference matches itself, q4_0 K changes the answer.
  EXPECT_NE(answers["q4_0/q4_0"], answers["f16/f16"]);
  EXPECT_NE(answers["q4_0/f16"], answers["f16/f16"]);
  for (const auto& r2 : records)
    if (cell_of(r2) == "f16/f16") {
      EXPECT_EQ(r2["metrics"]["match_reference"], 1);
    }
  // Logs per cell, with the server's own KV line.
  EXPECT_TRUE(std::filesystem::exists(run / "logs" / "tiny-q4_0-f16.log"));
  // The run ends with its summary and its report written: report.md and index.html, one document.
  EXPECT_THAT(r.output, HasSubstr("kvsweep summary: "));
  EXPECT_THAT(r.output, HasSubstr((run / "report" / "index.html").string()));
  EXPECT_TRUE(std::filesystem::exists(run / "report" / "report.md"));
  EXPECT_TRUE(std::filesystem::exists(run / "report" / "index.html"));
  EXPECT_TRUE(std::filesystem::exists(run / "report" / "summary.json"));
}

TEST(Sweep, QuantizedVWithoutFlashAttentionIsUnsupportedAndTheSweepGoesOn) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["server"]["args"] = {"-fa", "off", "-t", "1"};
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16", "q8_0"}}, {"reference", "f16/f16"}, {"order", "as-listed"}};
  cfg["server"]["env"] = {{"MY_API_KEY", "s3cret-value-123"}, {"OMP_NUM_THREADS", "1"}};
  auto run = dir / "run";
  // -q: only what went wrong is narrated.
  auto r = kt::run_kvsweep({"-q", "run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("starting server"))) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("tiny/f16/f16: ok"))) << r.output;
  EXPECT_THAT(r.output, HasSubstr("tiny/f16/q8_0: unsupported")) << r.output;
  auto manifest = kt::read_manifest(run);
  ASSERT_EQ(manifest["cells"].size(), 2u);
  // A secret-looking environment value never reaches the run directory; others are recorded.
  EXPECT_EQ(manifest["config"]["server"]["env"]["MY_API_KEY"], "<redacted>");
  EXPECT_EQ(manifest["config"]["server"]["env"]["OMP_NUM_THREADS"], "1");
  EXPECT_THAT(manifest.dump(), Not(HasSubstr("s3cret-value-123")));
  EXPECT_THAT(r.output, Not(HasSubstr("s3cret-value-123")));
  for (const auto& c : manifest["cells"]) {
    if (c["type_v"] == "q8_0") {
      EXPECT_EQ(c["outcome"], "unsupported") << c.dump();
      // The server's own words are in the message.
      EXPECT_THAT(c["message"].get<std::string>(), HasSubstr("flash_attn")) << c["message"];
    } else {
      EXPECT_EQ(c["outcome"], "ok");
      EXPECT_EQ(c["items_ok"], 4);
    }
  }
  EXPECT_THAT(r.output, HasSubstr("unsupported"));
  // --strict turns a bad cell into exit 1.
  auto run2 = dir / "run2";
  auto strict = kt::run_kvsweep({"run", (dir / "sweep.json").string(), "-o", run2.string(), "--strict"});
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  EXPECT_THAT(strict.output, HasSubstr("tiny/f16/f16: ok")) << strict.output;  // narrated without -q
}

TEST(Sweep, ServerKilledMidCellIsRestartedOnceAndEveryItemRecordedOnce) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  nlohmann::json prompts = nlohmann::json::array();
  for (int i = 0; i < 12; ++i) prompts.push_back("Prompt number " + std::to_string(i) + " says");
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 96}, {"prompts", prompts}}};
  auto run = dir / "run";
  kt::Background bg({"run", kt::write_config(dir, cfg).string(), "-o", run.string()}, dir / "out.txt");
  // Once some items are recorded, kill -9 the server.
  ASSERT_TRUE(kt::wait_until([&] { return kt::count_lines(run / "records.jsonl") >= 2; }, 180)) << bg.output();
  auto pids = kt::pids_with_arg(kt::tiny_model().string());
  ASSERT_EQ(pids.size(), 1u);
  ::kill(pids[0], SIGKILL);
  ASSERT_EQ(bg.wait(), 0) << bg.output();
  auto records = kt::read_records(run);
  EXPECT_EQ(records.size(), 12u);
  expect_no_duplicate_ok(records);
  for (const auto& r : records) EXPECT_EQ(r["status"], "ok");
  auto manifest = kt::read_manifest(run);
  EXPECT_EQ(manifest["cells"][0]["outcome"], "ok");
  EXPECT_EQ(manifest["cells"][0]["restarts"], 1);
  EXPECT_THAT(bg.output(), HasSubstr("restarting it once"));
}

TEST(Sweep, SigintStopsPromptlyLeavesNoServerAndResumeCompletesWithoutDuplicates) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  nlohmann::json prompts = nlohmann::json::array();
  for (int i = 0; i < 6; ++i) prompts.push_back("Story " + std::to_string(i) + ":");
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 64}, {"prompts", prompts}}};
  auto cfg_path = kt::write_config(dir, cfg);
  auto run = dir / "run";
  kt::Background bg({"run", cfg_path.string(), "-o", run.string()}, dir / "out.txt");
  ASSERT_TRUE(kt::wait_until([&] { return kt::count_lines(run / "records.jsonl") >= 8; }, 180)) << bg.output();
  ::kill(bg.pid(), SIGINT);
  EXPECT_EQ(bg.wait(60), 130) << bg.output();
  EXPECT_TRUE(kt::wait_until([] { return kt::pids_with_arg(kt::tiny_model().string()).empty(); }, 30));
  // "Promptly" is behaviour, not a duration: it stopped with the sweep unfinished.
  auto partial = kt::read_records(run);  // parses: every line intact
  ASSERT_GE(partial.size(), 8u);
  ASSERT_LT(partial.size(), 54u);
  EXPECT_EQ(kt::read_manifest(run)["status"], "interrupted");

  auto r = kt::run_kvsweep({"run", "--resume", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto records = kt::read_records(run);
  EXPECT_EQ(records.size(), 54u);
  expect_no_duplicate_ok(records);
  EXPECT_EQ(kt::read_manifest(run)["status"], "complete");
  // A second resume has nothing to do.
  auto again = kt::run_kvsweep({"run", "--resume", run.string()});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(kt::read_records(run).size(), 54u);
}

TEST(Sweep, StoppedServerIsWedgedAfterTheTimeoutAndTheSweepGoesOn) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  // Short, since the stopped server's request must time out; scaled, since the other requests must not.
  cfg["server"]["request_timeout_s"] = kt::scaled_s(3);
  cfg["grid"] = {{"k", {"f16", "q8_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}, {"order", "as-listed"}};
  nlohmann::json prompts = nlohmann::json::array();
  for (int i = 0; i < 6; ++i) prompts.push_back("Line " + std::to_string(i));
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 48}, {"prompts", prompts}}};
  auto run = dir / "run";
  kt::Background bg({"run", kt::write_config(dir, cfg).string(), "-o", run.string()}, dir / "out.txt");
  ASSERT_TRUE(kt::wait_until([&] { return kt::count_lines(run / "records.jsonl") >= 1; }, 180)) << bg.output();
  auto pids = kt::pids_with_arg(kt::tiny_model().string());
  ASSERT_EQ(pids.size(), 1u);
  ::kill(pids[0], SIGSTOP);
  ASSERT_EQ(bg.wait(120), 0) << bg.output();
  auto manifest = kt::read_manifest(run);
  std::map<std::string, std::string> outcome;
  for (const auto& c : manifest["cells"]) outcome[c["type_k"].get<std::string>()] = c["outcome"];
  EXPECT_EQ(outcome["f16"], "wedged");
  EXPECT_EQ(outcome["q8_0"], "ok");
  int timeouts = 0;
  for (const auto& r : kt::read_records(run)) timeouts += r["status"] == "timeout";
  EXPECT_EQ(timeouts, 1);
  EXPECT_TRUE(kt::wait_until([] { return kt::pids_with_arg(kt::tiny_model().string()).empty(); }, 30));
}

TEST(Sweep, TornLastLineIsRepairedOnResume) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  auto cfg_path = kt::write_config(dir, cfg);
  auto run = dir / "run";
  ASSERT_EQ(kt::run_kvsweep({"run", cfg_path.string(), "-o", run.string()}).exit_code, 0);
  // Drop the last record and leave half of it, as a crash mid-write would.
  auto path = run / "records.jsonl";
  std::string data;
  {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    data = ss.str();
  }
  auto last_start = data.rfind('\n', data.size() - 2) + 1;
  std::string torn = data.substr(0, last_start) + data.substr(last_start, 25);
  std::ofstream(path, std::ios::trunc) << torn;
  auto r = kt::run_kvsweep({"run", cfg_path.string(), "-o", run.string(), "--resume"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("torn line")) << r.output;
  auto records = kt::read_records(run);  // would throw on a torn line
  EXPECT_EQ(records.size(), 8u);
  expect_no_duplicate_ok(records);
}

TEST(Sweep, KillingKvsweepTakesItsServerWithIt) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  nlohmann::json prompts = nlohmann::json::array();
  for (int i = 0; i < 20; ++i) prompts.push_back("Tale " + std::to_string(i));
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 64}, {"prompts", prompts}}};
  auto run = dir / "run";
  kt::Background bg({"run", kt::write_config(dir, cfg).string(), "-o", run.string()}, dir / "out.txt");
  ASSERT_TRUE(kt::wait_until([&] { return kt::count_lines(run / "records.jsonl") >= 1; }, 180)) << bg.output();
  ASSERT_EQ(kt::pids_with_arg(kt::tiny_model().string()).size(), 1u);
  ::kill(bg.pid(), SIGKILL);
  EXPECT_EQ(bg.wait(60), 137);
  // PR_SET_PDEATHSIG: the server dies with its parent.
  EXPECT_TRUE(kt::wait_until([] { return kt::pids_with_arg(kt::tiny_model().string()).empty(); }, 30));
}

TEST(Cli, BadConfigsFailBeforeAnythingStartsNamingFileAndKey) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"]["k"] = {"f16", "q4"};
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", (dir / "run").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("grid.k[1]: unknown cache type 'q4'")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("iq4_nl")) << r.output;  // lists the valid ones
  EXPECT_FALSE(std::filesystem::exists(dir / "run"));

  auto cfg2 = kt::base_config(kt::tiny_model());
  cfg2["server"]["ready_timeot_s"] = 5;
  auto r2 = kt::run_kvsweep({"run", kt::write_config(dir, cfg2, "b.json").string()});
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_THAT(r2.output, HasSubstr("b.json: server: unknown key 'ready_timeot_s' (did you mean 'ready_timeout_s'?)"))
      << r2.output;

  auto cfg3 = kt::base_config(kt::tiny_model());
  cfg3["probes"] = {{{"kind", "complet"}}};
  auto r3 = kt::run_kvsweep({"run", kt::write_config(dir, cfg3, "c.json").string()});
  EXPECT_EQ(r3.exit_code, 2);
  EXPECT_THAT(r3.output, HasSubstr("probes[0].kind: unknown probe kind 'complet' (did you mean 'complete'?)"))
      << r3.output;
}

TEST(Cli, DryRunPrintsThePlanWithTheReferenceFirst) {
  kt::TempDir dir;
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, kt::base_config(kt::tiny_model())).string(), "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cells (9, in run order)")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("1. tiny/f16/f16  (reference)")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("total: 36 items")) << r.output;
}

TEST(Cli, TinyModelIsByteIdenticalForOneSeedAndDiffersForAnother) {
  kt::TempDir dir;
  auto a = dir / "a.gguf", b = dir / "b.gguf", c = dir / "c.gguf";
  ASSERT_EQ(kt::run_kvsweep({"tiny-model", "-o", a.string(), "--seed", "5"}).exit_code, 0);
  ASSERT_EQ(kt::run_kvsweep({"tiny-model", "-o", b.string(), "--seed", "5"}).exit_code, 0);
  ASSERT_EQ(kt::run_kvsweep({"tiny-model", "-o", c.string(), "--seed", "6"}).exit_code, 0);
  auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(read(a), read(b));
  EXPECT_NE(read(a), read(c));
  auto v = kt::run_kvsweep({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_THAT(v.output, HasSubstr("git "));
}

