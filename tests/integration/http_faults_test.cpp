// Against fake-llama-server (tests/fakes; a fake because the real server will not fail on demand).
// HTTP faults on a real socket: a 500, a non-JSON 200, an answer cut mid-way and a stall, each
// once. Each gives its item status, the sweep goes on, and every --resume reruns only the items
// without an ok record until all are recorded once. And a log without the KV cache line: the
// cell is kv_unverified wherever its outcome is shown.

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

TEST(HttpFaults, EachFaultIsItsItemsStatusAndResumeRerunsOnlyThoseItems) {
  kt::TempDir dir;
  std::filesystem::create_directory(dir / "faults");
  ::setenv("FAKE_FAULT_DIR", (dir / "faults").c_str(), 1);
  // The stall outlasts the request timeout; both scale, so that an ok answer on a loaded machine
  // never reads as a timeout.
  ::setenv("FAKE_STALL_MS", std::to_string(4000 * kt::scaled_s(1)).c_str(), 1);
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["server"]["binary"] = KVSWEEP_FAKE_LLAMA_SERVER;
  cfg["server"]["request_timeout_s"] = kt::scaled_s(1);
  cfg["server"]["stop_grace_s"] = 1;
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16"}}};
  const std::vector<std::string> prompts = {"alpha", "FAULT-500 beta", "FAULT-NONJSON gamma", "FAULT-CUT delta",
                                            "FAULT-STALL epsilon", "omega"};
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 8}, {"prompts", prompts}}};
  auto file = kt::write_config(dir, cfg);
  auto run = dir / "run";

  // Run 1: 500, non-JSON and the cut answer (a malformed answer from a live server, never a wait
  // that ran out) fail their items and the cell goes on; the stall times out and wedges the cell.
  auto r1 = kt::run_kvsweep({"run", file.string(), "-o", run.string()});
  EXPECT_EQ(r1.exit_code, 0) << r1.output;
  std::vector<std::string> statuses;
  for (const auto& rec : kt::read_records(run)) statuses.push_back(rec["status"]);
  EXPECT_EQ(statuses, (std::vector<std::string>{"ok", "http_status", "parse", "parse", "timeout"})) << r1.output;
  auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 5u);
  EXPECT_THAT(records[3]["error"].get<std::string>(), HasSubstr("the answer was cut or malformed")) << records[3].dump();
  EXPECT_EQ(records[1]["http_status"], 500);
  EXPECT_THAT(records[1]["error"].get<std::string>(), HasSubstr("fake: injected failure")) << records[1].dump();
  EXPECT_EQ(kt::read_manifest(run)["cells"][0]["outcome"], "wedged");

  // Run 2: the failed items and the one never run (each fault is injected once).
  auto r2 = kt::run_kvsweep({"run", "--resume", run.string()});
  EXPECT_EQ(r2.exit_code, 0) << r2.output;
  // Run 3: what is left.
  auto r3 = kt::run_kvsweep({"run", "--resume", run.string()});
  EXPECT_EQ(r3.exit_code, 0) << r3.output;
  ::unsetenv("FAKE_FAULT_DIR");
  ::unsetenv("FAKE_STALL_MS");

  std::map<std::string, int> ok;
  std::vector<std::string> failed;
  for (const auto& rec : kt::read_records(run)) {
    if (rec["status"] == "ok") ++ok[rec["spec"]["prompt"]];
    else failed.push_back(rec["spec"]["prompt"].get<std::string>() + ":" + rec["status"].get<std::string>());
  }
  EXPECT_EQ(failed, (std::vector<std::string>{"FAULT-500 beta:http_status", "FAULT-NONJSON gamma:parse",
                                              "FAULT-CUT delta:parse", "FAULT-STALL epsilon:timeout"}));
  for (const auto& p : prompts) EXPECT_EQ(ok[p], 1) << p;
  EXPECT_EQ(kt::read_manifest(run)["cells"][0]["outcome"], "ok");
  // alpha was asked once in all three runs: resume never reruns an item that has its ok record.
  const std::string log = [&] {
    std::ifstream in(run / "logs" / "tiny-f16-f16.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  std::size_t alpha = 0;
  for (auto at = log.find("fake: completion \"alpha\""); at != std::string::npos; at = log.find("fake: completion \"alpha\"", at + 1))
    ++alpha;
  EXPECT_EQ(alpha, 1u) << log;
}

TEST(KvUnverified, ALogWithoutTheKvLineIsMarkedInTheManifestTheSummaryAndTheReport) {
  kt::TempDir dir;
  ::setenv("FAKE_NO_KV_LINE", "1", 1);
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["server"]["binary"] = KVSWEEP_FAKE_LLAMA_SERVER;
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16"}}};
  auto file = kt::write_config(dir, cfg);
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", file.string(), "-o", run.string()});
  // --strict: unverified types are not a clean run.
  auto strict = kt::run_kvsweep({"run", file.string(), "-o", (dir / "strict").string(), "--strict"});
  ::unsetenv("FAKE_NO_KV_LINE");
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(kt::read_manifest(run)["cells"][0]["outcome"], "kv_unverified");
  EXPECT_THAT(r.output, HasSubstr("tiny/f16/f16 *                  kv_unverified")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no KV cache line")) << r.output;
  auto report = kt::run_kvsweep({"report", run.string()});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_THAT(report.output, HasSubstr("kv_unverified")) << report.output;
}

TEST(HttpFaults, CtrlCDuringDryRunMeasureExitsInterruptedNotOk) {
  // The measurement's one item stalls on the fake: Ctrl-C while it waits must not print a plan and exit 0.
  kt::TempDir dir;
  ::setenv("FAKE_STALL_MS", std::to_string(60000 * kt::scaled_s(1)).c_str(), 1);
  const std::filesystem::path model = dir / "measured-tiny.gguf";  // a path only this test's server has
  std::filesystem::copy_file(kt::tiny_model(), model);
  auto cfg = kt::base_config(model);
  cfg["server"]["binary"] = KVSWEEP_FAKE_LLAMA_SERVER;
  cfg["server"]["stop_grace_s"] = 1;
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16"}}};
  cfg["output_dir"] = (dir / "runs").string();
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 8}, {"prompts", {"FAULT-STALL alpha"}}}};
  kt::Background bg({"run", kt::write_config(dir, cfg).string(), "--dry-run", "--measure"}, dir / "out.txt");
  const bool started = kt::wait_until([&] { return !kt::pids_with_arg(model.string()).empty(); }, 120);
  ::unsetenv("FAKE_STALL_MS");
  ASSERT_TRUE(started) << bg.output();
  ::kill(bg.pid(), SIGINT);
  EXPECT_EQ(bg.wait(60), 130) << bg.output();
  EXPECT_THAT(bg.output(), HasSubstr("interrupted")) << bg.output();
  EXPECT_TRUE(kt::wait_until([&] { return kt::pids_with_arg(model.string()).empty(); }, 30));
}
