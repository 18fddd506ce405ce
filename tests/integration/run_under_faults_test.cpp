// kvsweep under faults: each test puts kvsweep in a situation it must survive and asserts what it
// does. The real llama-server on the tiny model where
// it can produce the situation (a changed model, a lost manifest, a wrapper script, an api key);
// fake-llama-server (tests/fakes) only for answers the real server never gives: a body trickled
// byte by byte or endless, an echoed Authorization header, /props of the wrong types, impossible
// timings.

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kt = kvsweep::testing;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// One cell (f16/f16), one probe of `prompts` short completions.
nlohmann::json one_cell_config(const std::filesystem::path& model, const std::vector<std::string>& prompts) {
  auto cfg = kt::base_config(model);
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16"}}};
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 4}, {"prompts", prompts}}};
  return cfg;
}

/// A server.binary that first starts another llama-server (on `stranger_model`, in a session of its
/// own, as an unrelated process would be) on the port kvsweep gave, waits until it listens, then execs
/// llama-server with kvsweep's arguments: that one cannot bind the port and exits, while the other
/// answers there. The other's pids go to `pids`.
std::filesystem::path port_thief(const kt::TempDir& dir, const std::filesystem::path& stranger_model,
                                 const std::filesystem::path& pids) {
  const std::string server = kt::llama_bin_dir() + "/llama-server";
  const auto log = dir / "stranger.log";
  const auto script = dir / "port-thief";
  std::ofstream(script) << "#!/bin/sh\n"
                        << "port=; prev=\n"
                        << "for a in \"$@\"; do [ \"$prev\" = --port ] && port=$a; prev=$a; done\n"
                        << "setsid \"" << server << "\" -m \"" << stranger_model.string()
                        << "\" --host 127.0.0.1 --port \"$port\" -c 512 -np 1 -t 1 --no-webui > \"" << log.string()
                        << "\" 2>&1 &\n"
                        << "echo $! >> \"" << pids.string() << "\"\n"
                        << "i=0; until grep -q 'listening on' \"" << log.string() << "\" 2>/dev/null; do\n"
                        << "  i=$((i+1)); [ $i -gt 2400 ] && exit 3; sleep 0.05\n"
                        << "done\n"
                        << "exec \"" << server << "\" \"$@\"\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  return script;
}

void kill_listed(const std::filesystem::path& pids, const std::filesystem::path& stranger_model) {
  std::istringstream in(slurp(pids));
  for (pid_t pid; in >> pid;) ::kill(pid, SIGKILL);
  for (pid_t pid : kt::pids_with_arg(stranger_model.string())) ::kill(pid, SIGKILL);
}

}  // namespace

// The model file is rewritten between a run and its resume, same size (seed 2).
TEST(RunUnderFaults, ResumeRefusesAModelThatChangedEvenAtTheSameSize) {
  kt::TempDir dir;
  const auto model = dir / "model.gguf";
  std::filesystem::copy_file(kt::tiny_model(), model);
  auto file = kt::write_config(dir, one_cell_config(model, {"alpha"}));
  auto run = dir / "run";
  auto first = kt::run_kvsweep({"run", file.string(), "-o", run.string()});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string sha_then = kt::read_manifest(run)["models"][0]["sha256"];
  const auto size_then = std::filesystem::file_size(model);

  auto remade = kt::run_kvsweep({"tiny-model", "-o", model.string(), "--seed", "2"});
  ASSERT_EQ(remade.exit_code, 0) << remade.output;
  ASSERT_EQ(std::filesystem::file_size(model), size_then);
  const auto records_before = kt::count_lines(run / "records.jsonl");

  auto resumed = kt::run_kvsweep({"run", "--resume", run.string()});
  EXPECT_EQ(resumed.exit_code, 2) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr(sha_then)) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("changed since the run started")) << resumed.output;
  EXPECT_EQ(kt::read_manifest(run)["models"][0]["sha256"], sha_then);
  EXPECT_EQ(kt::count_lines(run / "records.jsonl"), records_before);
}

// A manifest that lost a cell (the state a kill between the outcomes journal and the manifest's
// rename leaves: the manifest before it, holding one journal entry less) is read with the cell back —
// by the report as by the resume — and the resume keeps the outcome the cell ended with.
TEST(RunUnderFaults, ResumeRebuildsTheCellsAManifestLost) {
  kt::TempDir dir;
  auto cfg = one_cell_config(kt::tiny_model(), {"alpha"});
  cfg["grid"] = {{"k", {"f16", "q8_0"}}, {"v", {"f16"}}, {"order", "as-listed"}};
  auto file = kt::write_config(dir, cfg);
  auto run = dir / "run";
  auto first = kt::run_kvsweep({"run", file.string(), "-o", run.string()});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  auto manifest = kt::read_manifest(run);
  ASSERT_EQ(manifest["cells"].size(), 2u);
  ASSERT_EQ(manifest["journaled"], 2) << "the manifest counts the journal entries it holds";
  const nlohmann::json lost = manifest["cells"][1];  // the last cell the journal took
  ASSERT_EQ(lost["type_k"], "q8_0");
  manifest["cells"].erase(1);
  manifest["journaled"] = 1;
  std::ofstream(run / "manifest.json") << manifest.dump(2);

  // The report reads the run through the store: the cell is back before any resume.
  auto report = kt::run_kvsweep({"report", run.string(), "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const auto summary = nlohmann::json::parse(kt::read_text(run / "report" / "summary.json"));
  EXPECT_EQ(summary["cells"].size(), 2u) << summary["cells"].dump(2);

  auto resumed = kt::run_kvsweep({"run", "--resume", run.string()});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const auto cells = kt::read_manifest(run)["cells"];
  ASSERT_EQ(cells.size(), 2u) << cells.dump(2);
  bool found = false;
  for (const auto& c : cells) {
    if (c["type_k"] != "q8_0") continue;
    found = true;
    EXPECT_EQ(c["outcome"], lost["outcome"]);
    EXPECT_EQ(c["items_ok"], lost["items_ok"]);
  }
  EXPECT_TRUE(found) << cells.dump(2);
}

// A manifest that cannot be written stops the run (exit 2) like a record that
// cannot be: here files may not grow past 1,500 bytes (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail
// with EFBIG, as on a full disk), less than the manifest's provenance holds. (Its temp name is the
// writer's own, so a directory cannot take it.)
TEST(RunUnderFaults, AManifestThatCannotBeWrittenStopsTheRun) {
  kt::TempDir dir;
  auto file = kt::write_config(dir, one_cell_config(kt::tiny_model(), {"alpha"}));
  auto run = dir / "run";
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = 1500;
  auto* previous = ::signal(SIGXFSZ, SIG_IGN);  // inherited through exec, as the limit is
  ::setrlimit(RLIMIT_FSIZE, &small);
  auto r = kt::run_kvsweep({"run", file.string(), "-o", run.string()});
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, previous);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("stopped")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("manifest.json")) << r.output;
  EXPECT_EQ(kt::count_lines(run / "records.jsonl"), 0u);
}

// With fake-llama-server (the real one never trickles or answers without end): request_timeout_s
// bounds the whole request and an answer may not pass what its request can need. The endless
// body fails its item `oversize` and the cell goes on; the trickle fails `timeout` at the deadline
// and wedges the cell. Without the bounds the first of them never ends (the harness gives up).
TEST(RunUnderFaults, ARequestHasATotalDeadlineAndASizeCap) {
  kt::TempDir dir;
  auto cfg = one_cell_config(kt::tiny_model(), {"alpha", "FAULT-ENDLESS beta", "FAULT-TRICKLE gamma", "omega"});
  cfg["server"]["binary"] = KVSWEEP_FAKE_LLAMA_SERVER;
  cfg["server"]["request_timeout_s"] = 2;
  cfg["server"]["stop_grace_s"] = 1;
  auto file = kt::write_config(dir, cfg);
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", file.string(), "-o", run.string()}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto records = kt::read_records(run);
  std::vector<std::string> statuses;
  for (const auto& rec : records) statuses.push_back(rec["status"]);
  ASSERT_EQ(statuses, (std::vector<std::string>{"ok", "oversize", "timeout"})) << r.output;
  EXPECT_THAT(records[1]["error"].get<std::string>(), HasSubstr("bytes")) << records[1].dump();
  EXPECT_THAT(records[2]["error"].get<std::string>(), HasSubstr("within 2.00 s")) << records[2].dump();
  const auto cell = kt::read_manifest(run)["cells"][0];
  EXPECT_EQ(cell["outcome"], "wedged");
  EXPECT_THAT(cell["message"].get<std::string>(), HasSubstr("within 2.00 s")) << cell.dump();
}

// On the real llama-server: server.binary is a wrapper script that runs
// llama-server without exec. kill -9 of kvsweep must take the grandchild too.
TEST(RunUnderFaults, KillNineOfKvsweepTakesAServerAWrapperScriptStarted) {
  kt::TempDir dir;
  const auto model = dir / "wrapped.gguf";  // a path only this test's processes carry
  std::filesystem::copy_file(kt::tiny_model(), model);
  const auto wrapper = dir / "llama-wrapper";
  std::ofstream(wrapper) << "#!/bin/sh\n\"" << kt::llama_bin_dir() << "/llama-server\" \"$@\"\necho wrapper done\n";
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  auto cfg = one_cell_config(model, {"alpha"});
  cfg["server"]["binary"] = wrapper.string();
  auto file = kt::write_config(dir, cfg);
  kt::Background sweep({"run", file.string(), "-o", (dir / "run").string()}, dir / "kvsweep.log");
  // The wrapper and its llama-server both carry the model path.
  const bool started = kt::wait_until([&] { return kt::pids_with_arg(model.string()).size() >= 2; }, 60);
  ::kill(sweep.pid(), SIGKILL);
  EXPECT_EQ(sweep.wait(30), 128 + SIGKILL);
  ASSERT_TRUE(started) << sweep.output();
  EXPECT_TRUE(kt::wait_until([&] { return kt::pids_with_arg(model.string()).empty(); }, 10))
      << "still running: " << kt::pids_with_arg(model.string()).size() << " process(es)";
  for (pid_t pid : kt::pids_with_arg(model.string())) ::kill(pid, SIGKILL);
}

// With fake-llama-server (the real one does not echo credentials): nothing kvsweep writes holds
// the api key given in server.args, a URL password its userinfo did not percent-encode, or an
// Authorization value a server echoed (the key, and a Basic credential kvsweep never knew).
TEST(RunUnderFaults, NoSecretReachesAFileOrTheTerminal) {
  kt::TempDir dir;
  const std::string key = "sk-SENTINEL-4f1c9a77";
  const std::string password = "se/cret-PW-8b2d";
  const std::string basic = "YWxpY2U6c2VjcmV0LXB3";  // the fake's own
  auto cfg = one_cell_config(kt::tiny_model(), {"alpha", "FAULT-ECHOAUTH beta"});
  cfg["server"]["binary"] = KVSWEEP_FAKE_LLAMA_SERVER;
  cfg["server"]["args"] = {"--api-key", key};
  cfg["server"]["url"] = "http://alice:" + password + "@127.0.0.1:9";
  auto file = kt::write_config(dir, cfg);
  auto run = dir / "run";
  ::setenv("KVSWEEP_HTTP_TRACE", (dir / "trace.jsonl").c_str(), 1);
  auto r = kt::run_kvsweep({"-v", "run", file.string(), "-o", run.string()});
  ::unsetenv("KVSWEEP_HTTP_TRACE");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]["status"], "http_status");
  EXPECT_THAT(records[1]["error"].get<std::string>(), HasSubstr("<redacted>")) << records[1].dump();
  auto report = kt::run_kvsweep({"report", run.string(), "--format", "all"});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  for (const std::string& secret : {key, password, basic}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(run)) {
      if (e.is_regular_file()) {
        EXPECT_THAT(slurp(e.path()), Not(HasSubstr(secret))) << secret << " in " << e.path();
      }
    }
    EXPECT_THAT(r.output, Not(HasSubstr(secret))) << r.output;
    EXPECT_THAT(report.output, Not(HasSubstr(secret))) << secret;
    EXPECT_THAT(slurp(dir / "trace.jsonl"), Not(HasSubstr(secret))) << secret;
  }
}

// With fake-llama-server (the real one's /props and timings are well formed): a /props of the
// wrong types is provenance "unknown", never an internal error; impossible timings fail the item.
TEST(RunUnderFaults, OddServerAnswersAreReadLenientlyAndImpossibleMetricsFailTheItem) {
  kt::TempDir dir;
  auto cfg = one_cell_config(kt::tiny_model(), {"alpha", "FAULT-TIMINGS beta", "omega"});
  cfg["server"]["binary"] = KVSWEEP_FAKE_LLAMA_SERVER;
  auto file = kt::write_config(dir, cfg);
  for (const char* props : {R"({"build_info": null, "model_path": 7, "total_slots": "one"})", "[]"}) {
    ::setenv("FAKE_PROPS", props, 1);
    const auto run = dir / (std::string("run-") + std::to_string(props[0] == '[' ? 2 : 1));
    auto r = kt::run_kvsweep({"run", file.string(), "-o", run.string()});
    ::unsetenv("FAKE_PROPS");
    ASSERT_EQ(r.exit_code, 0) << props << "\n" << r.output;
    std::vector<std::string> statuses;
    for (const auto& rec : kt::read_records(run)) statuses.push_back(rec["status"]);
    EXPECT_EQ(statuses, (std::vector<std::string>{"ok", "parse", "ok"})) << r.output;
    const auto records = kt::read_records(run);
    EXPECT_THAT(records[1]["error"].get<std::string>(), HasSubstr("impossible")) << records[1].dump();
    EXPECT_EQ(kt::read_manifest(run)["cells"][0]["outcome"], "ok");
  }
}

// An answer is recorded only from the server kvsweep started, and a run never mixes inputs.

// "A stranger's answers recorded as the cell's": the port kvsweep chose is taken before the cell's
// llama-server binds it, and the other process answers /health and every request. The cell fails
// (load_failed, naming the port's other holder), no item is recorded ok, and the sweep goes on.
TEST(RunUnderFaults, AStrangersAnswersOnTheCellsPortAreNeverRecordedAsTheCells) {
  kt::TempDir dir;
  const auto stranger_model = dir / "stranger.gguf";  // a path only the other server carries
  std::filesystem::copy_file(kt::tiny_model(), stranger_model);
  const auto pids = dir / "stranger.pids";
  auto cfg = one_cell_config(kt::tiny_model(), {"alpha", "beta"});
  cfg["server"]["binary"] = port_thief(dir, stranger_model, pids).string();
  const auto file = kt::write_config(dir, cfg);
  const auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", file.string(), "-o", run.string()});
  kill_listed(pids, stranger_model);

  EXPECT_NE(r.exit_code, 0) << r.output;
  ASSERT_TRUE(std::filesystem::exists(pids)) << "the wrapper never started the other server\n" << r.output;
  for (const auto& rec : kt::read_records(run)) EXPECT_NE(rec["status"], "ok") << rec.dump();
  const auto cells = kt::read_manifest(run)["cells"];
  ASSERT_EQ(cells.size(), 1u) << cells.dump(2);
  EXPECT_EQ(cells[0]["outcome"], "load_failed") << cells.dump(2);
  // Which comes first depends on the machine's speed (under ASan on a loaded host the child's exit is
  // seen before the stranger answers /health): either way the cell failed and recorded nothing.
  EXPECT_THAT(cells[0]["message"].get<std::string>(),
              ::testing::AnyOf(HasSubstr("another process holds the port"), HasSubstr("exited with code 1 before it was ready")))
      << cells.dump(2);
  EXPECT_THAT(slurp(run / "logs" / (cells[0]["id"].get<std::string>() + ".log")), HasSubstr("couldn't bind"));
}

// "A changed prompts file is not noticed": the prompts file is edited after a shard ran (same path,
// same number of prompts, so the config hash is the same). Its resume is refused, and so is a merge
// with a shard that read the new file; both name the file and its two sha256.
TEST(RunUnderFaults, AChangedPromptsFileIsRefusedByResumeAndByMergeNamingIt) {
  kt::TempDir dir;
  const auto prompts = dir / "prompts.txt";
  std::ofstream(prompts) << "alpha\nbeta\n";
  auto cfg = one_cell_config(kt::tiny_model(), {});
  cfg["grid"] = {{"k", {"f16", "q8_0"}}, {"v", {"f16"}}};
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 4}, {"prompts_file", "prompts.txt"}}};
  const auto file = kt::write_config(dir, cfg);
  const auto shard0 = dir / "shard0";
  auto first = kt::run_kvsweep({"run", file.string(), "-o", shard0.string(), "--shard", "0/2"});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string sha_then = kt::read_manifest(shard0)["probes"][0]["inputs"][0]["sha256"];
  const auto records_before = kt::count_lines(shard0 / "records.jsonl");

  std::ofstream(prompts) << "alpha\ngamma\n";
  auto resumed = kt::run_kvsweep({"run", "--resume", shard0.string()});
  EXPECT_EQ(resumed.exit_code, 2) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("probe 'complete' prompts_file " + prompts.string())) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("sha256 " + sha_then + " when the run started")) << resumed.output;
  EXPECT_EQ(kt::count_lines(shard0 / "records.jsonl"), records_before);

  const auto shard1 = dir / "shard1";
  auto second = kt::run_kvsweep({"run", file.string(), "-o", shard1.string(), "--shard", "1/2"});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  ASSERT_EQ(kt::read_manifest(shard1)["config_hash"], kt::read_manifest(shard0)["config_hash"]);
  auto merged = kt::run_kvsweep({"merge", shard0.string(), shard1.string(), "-o", (dir / "merged").string()});
  EXPECT_EQ(merged.exit_code, 2) << merged.output;
  EXPECT_THAT(merged.output, HasSubstr("refusing to merge runs that read different input files")) << merged.output;
  EXPECT_THAT(merged.output, HasSubstr("sha256 " + sha_then + " in " + shard0.string())) << merged.output;
}

// A run whose manifest is torn holds records nothing identifies any more (its config hash, models and
// inputs were in the manifest; max_tokens is in no record): a resume, even with the config, is refused
// with the way out, not an internal error and never records of two configs in one run.
TEST(RunUnderFaults, AResumeOfRecordsWhoseManifestIsTornIsRefusedNotGuessedFromTheConfig) {
  kt::TempDir dir;
  const auto file = kt::write_config(dir, one_cell_config(kt::tiny_model(), {"alpha", "beta"}));
  const auto run = dir / "run";
  auto first = kt::run_kvsweep({"run", file.string(), "-o", run.string()});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string manifest = slurp(run / "manifest.json");
  std::ofstream(run / "manifest.json", std::ios::trunc) << manifest.substr(0, manifest.size() / 2);

  const auto records_before = kt::count_lines(run / "records.jsonl");
  auto resumed = kt::run_kvsweep({"run", file.string(), "--resume", run.string()});
  EXPECT_EQ(resumed.exit_code, 2) << resumed.output;
  EXPECT_THAT(resumed.output, Not(HasSubstr("internal error"))) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("the run holds records but no readable manifest.json")) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("start a new run with: kvsweep run CONFIG -o NEW_DIR")) << resumed.output;
  EXPECT_EQ(kt::count_lines(run / "records.jsonl"), records_before);  // nothing added, nothing lost
  EXPECT_EQ(slurp(run / "manifest.json"), manifest.substr(0, manifest.size() / 2));
}
