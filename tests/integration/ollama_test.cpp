// The Ollama backend against tests/fakes/fake_ollama.cpp, a fake `ollama` kept for the faults and
// contracts the real Ollama will not show on demand (see the fake's header): exits, slow and
// never-ready starts, an older Ollama ignoring the KV type, attach mode, the environment contract,
// chat with thinking fields. The working paths run on the real Ollama: ollama_real_test.cpp.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"
#include "kvsweep/http/client.hpp"
#include "kvsweep/server/backend.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kt = kvsweep::testing;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t pos = 0; (pos = text.find(needle, pos)) != std::string::npos; pos += needle.size()) ++n;
  return n;
}

// A sweep of the complete probe under backend ollama, launched as the fake.
nlohmann::json ollama_config(const std::vector<std::string>& types) {
  return {
      {"name", "ollama-it"},
      {"server",
       {{"backend", "ollama"},
        {"binary", KVSWEEP_FAKE_OLLAMA},
        {"ctx", 2048},
        {"ready_timeout_s", kt::scaled_s(30)},
        {"request_timeout_s", kt::scaled_s(30)},
        {"stop_grace_s", 2}}},
      {"models", {{{"name", "tiny"}, {"path", "tiny:latest"}}}},
      {"grid", {{"k", types}, {"v", "tied"}, {"reference", types.front() + "/" + types.front()}, {"order", "as-listed"}}},
      {"probes", {{{"kind", "complete"}, {"max_tokens", 16}}}},
  };
}

std::string cell_of(const nlohmann::json& r) {
  return r["cell"]["model"].get<std::string>() + ":" + r["cell"]["type_k"].get<std::string>() + "/" +
         r["cell"]["type_v"].get<std::string>();
}

std::map<std::string, nlohmann::json> cells_by_label(const nlohmann::json& manifest) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& c : manifest["cells"]) out[cell_of({{"cell", c}})] = c;
  return out;
}

// Runs the fake directly with `env` added (and the Ollama variables of this process removed).
struct FakeProcess {
  pid_t pid = -1;
  std::filesystem::path log;

  FakeProcess(const std::vector<std::pair<std::string, std::string>>& env, std::filesystem::path log_path)
      : log(std::move(log_path)) {
    pid = ::fork();
    if (pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      for (const char* v : {"OLLAMA_HOST", "OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_NUM_PARALLEL",
                            "OLLAMA_CONTEXT_LENGTH"})
        ::unsetenv(v);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      ::execl(KVSWEEP_FAKE_OLLAMA, KVSWEEP_FAKE_OLLAMA, "serve", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~FakeProcess() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  // Exit code once it ended by itself within the timeout, else -1.
  int wait_exit(double timeout_s) {
    int status = 0;
    bool ended = kt::wait_until([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, timeout_s);
    if (!ended) return -1;
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

std::vector<std::pair<std::string, std::string>> good_env(int port, const std::string& kv) {
  return {{"OLLAMA_HOST", "127.0.0.1:" + std::to_string(port)},
          {"OLLAMA_KV_CACHE_TYPE", kv},
          {"OLLAMA_FLASH_ATTENTION", "1"},
          {"OLLAMA_NUM_PARALLEL", "1"},
          {"OLLAMA_CONTEXT_LENGTH", "2048"}};
}

// Sets environment variables for the duration of a test (kvsweep inherits them).
struct ScopedEnv {
  std::vector<std::string> names;
  explicit ScopedEnv(const std::vector<std::pair<std::string, std::string>>& vars) {
    for (const auto& [k, v] : vars) {
      ::setenv(k.c_str(), v.c_str(), 1);
      names.push_back(k);
    }
  }
  ~ScopedEnv() {
    for (const auto& n : names) ::unsetenv(n.c_str());
  }
};

}  // namespace

TEST(Ollama, ChatModeAndFourBitKvChangesTheAnswers) {
  kt::TempDir dir;
  auto cfg = ollama_config({"f16", "q4_0"});
  cfg["probes"][0]["mode"] = "chat";
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 8u);
  std::map<std::string, std::string> p0;
  for (const auto& rec : records) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    if (rec["item"] == "p0") p0[cell_of(rec)] = rec["response"]["content"];
  }
  EXPECT_NE(p0["tiny:q4_0/q4_0"], p0["tiny:f16/f16"]);
  const auto manifest_cells = kt::read_manifest(run)["cells"];
  for (const auto& c : manifest_cells) EXPECT_EQ(c["effective"]["type_k"], c["type_k"]);
}

TEST(Ollama, AttachModeLaunchesNothingAndRecordsTheKvTypeAsDeclared) {
  kt::TempDir dir;
  // A port free when picked can be taken by another test's server before the fake binds it: then
  // the fake exits ("address already in use") and another port is tried.
  std::unique_ptr<FakeProcess> fake;
  std::string url;
  for (int attempt = 0; attempt < 3 && url.empty(); ++attempt) {
    const int port = kvsweep::server::free_port();
    fake = std::make_unique<FakeProcess>(good_env(port, "q8_0"), dir / "fake.log");
    const std::string candidate = "http://127.0.0.1:" + std::to_string(port);
    kvsweep::http::Client client(candidate, {std::chrono::milliseconds(200), std::chrono::milliseconds(1000)});
    bool exited = false;
    const bool up = kt::wait_until(
        [&] {
          if (fake->wait_exit(0) != -1) return exited = true;
          auto v = client.get("/api/version");
          return v && v->status == 200;
        },
        60);
    if (up && !exited) url = candidate;
  }
  ASSERT_FALSE(url.empty()) << slurp(dir / "fake.log");

  auto cfg = ollama_config({"q8_0"});
  cfg["server"] = {{"backend", "external"},
                   {"api", "ollama"},
                   {"url", url},
                   {"ready_timeout_s", kt::scaled_s(30)},
                   {"request_timeout_s", kt::scaled_s(30)}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto manifest = kt::read_manifest(run);
  EXPECT_EQ(manifest["server"]["backend"], "external");
  EXPECT_EQ(manifest["server"]["api"], "ollama");
  EXPECT_EQ(manifest["server"]["version"], "0.33.0-fake");
  ASSERT_EQ(manifest["cells"].size(), 1u);
  const auto& c = manifest["cells"][0];
  // Attached: the types are the config's declaration, which the server never confirmed.
  EXPECT_EQ(c["outcome"], "kv_unverified") << c.dump();
  EXPECT_TRUE(c["effective"]["declared"].get<bool>());
  EXPECT_EQ(c["effective"]["type_k"], "q8_0");
  auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 4u);
  for (const auto& rec : records) {
    EXPECT_EQ(rec["status"], "ok") << rec.dump();
    EXPECT_GT(rec["timings"]["predicted_n"].get<int>(), 0);
  }
  // Nothing launched: the fake we started served the requests (one load for the whole cell).
  EXPECT_EQ(fake->wait_exit(0), -1) << "the attached server must be left running";
  std::string log = slurp(dir / "fake.log");
  EXPECT_EQ(count(log, "llama_kv_cache: size"), 1u) << log;
  EXPECT_EQ(count(log, "POST \"/api/generate\""), 5u) << log;  // warm-up + 4 prompts
  if (std::filesystem::exists(run / "logs")) {
    for (const auto& entry : std::filesystem::directory_iterator(run / "logs")) {
      EXPECT_THAT(slurp(entry.path()), Not(HasSubstr("# kvsweep: launching"))) << entry.path();
    }
  }
}

TEST(Ollama, InheritedOllamaAndLlamaArgVariablesDoNotReachTheServer) {
  // The fake exits 1 when any of these reaches it, or when a cell variable is not kvsweep's.
  ScopedEnv leak({{"OLLAMA_KEEP_ALIVE", "0"}, {"LLAMA_ARG_CACHE_TYPE_K", "q4_0"}, {"OLLAMA_KV_CACHE_TYPE", "q4_0"},
                  {"OLLAMA_HOST", "0.0.0.0:11434"}});
  kt::TempDir dir;
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, ollama_config({"q8_0"})).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto manifest = kt::read_manifest(run);
  const auto& c = manifest["cells"][0];
  EXPECT_EQ(c["outcome"], "ok") << c.dump();
  EXPECT_EQ(c["effective"]["type_k"], "q8_0");
  std::string log = slurp(run / "logs" / (c["id"].get<std::string>() + ".log"));
  EXPECT_THAT(log, HasSubstr("removed from the environment:")) << log;
  EXPECT_THAT(log, HasSubstr("LLAMA_ARG_CACHE_TYPE_K")) << log;
}

TEST(Ollama, FakeRefusesABrokenEnvironmentContract) {
  // The contract checks above can fail: the fake rejects each violation on its own.
  kt::TempDir dir;
  int port = kvsweep::server::free_port();
  struct Case {
    std::string name, value, message;
  };
  for (const auto& c : std::vector<Case>{{"OLLAMA_FLASH_ATTENTION", "0", "OLLAMA_FLASH_ATTENTION must be 1"},
                                         {"OLLAMA_KV_CACHE_TYPE", "q3_k", "OLLAMA_KV_CACHE_TYPE must be"},
                                         {"OLLAMA_HOST", "0.0.0.0:" + std::to_string(port), "OLLAMA_HOST must be 127.0.0.1"},
                                         {"OLLAMA_NUM_PARALLEL", "4", "OLLAMA_NUM_PARALLEL must be 1"},
                                         {"OLLAMA_KEEP_ALIVE", "5m", "OLLAMA_KEEP_ALIVE is set"}}) {
    auto env = good_env(port, "f16");
    env.emplace_back(c.name, c.value);  // setenv in order: the later value wins
    FakeProcess fake(env, dir / "fake.log");
    EXPECT_EQ(fake.wait_exit(60), 1) << c.name;
    EXPECT_THAT(slurp(dir / "fake.log"), HasSubstr(c.message)) << slurp(dir / "fake.log");
  }
}

TEST(Ollama, ServerExitAtStartIsLoadFailedWithTheLogTail) {
  kt::TempDir dir;
  auto cfg = ollama_config({"f16", "q8_0"});
  cfg["server"]["env"] = {{"FAKE_OLLAMA_EXIT_AT_START", "3"}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 1) << r.output;  // no cell produced an ok record
  auto manifest = kt::read_manifest(run);
  ASSERT_EQ(manifest["cells"].size(), 2u);
  for (const auto& c : manifest["cells"]) {
    EXPECT_EQ(c["outcome"], "load_failed") << c.dump();
    std::string msg = c["message"];
    EXPECT_THAT(msg, HasSubstr("exited with code 3")) << msg;
    EXPECT_THAT(msg, HasSubstr("told to fail at start")) << msg;
  }
  EXPECT_TRUE(kt::read_records(run).empty());
}

TEST(Ollama, SlowStartAndLoadAreOutsideTheItemTimings) {
  kt::TempDir dir;
  auto cfg = ollama_config({"f16"});
  cfg["server"]["env"] = {{"FAKE_OLLAMA_STARTUP_DELAY_MS", "300"}, {"FAKE_OLLAMA_LOAD_DELAY_MS", "1200"}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto manifest = kt::read_manifest(run);
  const auto& c = manifest["cells"][0];
  EXPECT_EQ(c["outcome"], "ok") << c.dump();
  EXPECT_GE(c["ready_s"].get<double>(), 1.5);  // the load is counted as getting ready
  for (const auto& rec : kt::read_records(run)) {
    ASSERT_EQ(rec["status"], "ok");
    EXPECT_DOUBLE_EQ(rec["timings"]["prompt_ms"].get<double>(), 1.0 * rec["timings"]["prompt_n"].get<int>());
  }
}

TEST(Ollama, NotReadyWithinTheReadyTimeoutIsLoadFailed) {
  kt::TempDir dir;
  auto cfg = ollama_config({"f16"});
  cfg["server"]["env"] = {{"FAKE_OLLAMA_STARTUP_DELAY_MS", "20000"}};
  cfg["server"]["ready_timeout_s"] = 1;
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 1) << r.output;  // no cell produced an ok record
  auto manifest = kt::read_manifest(run);
  const auto& c = manifest["cells"][0];
  EXPECT_EQ(c["outcome"], "load_failed") << c.dump();
  EXPECT_THAT(c["message"].get<std::string>(), HasSubstr("not ready within the ready timeout")) << c.dump();
}

TEST(Ollama, OlderOllamaThatIgnoresTheKvTypeIsAConfigMismatch) {
  kt::TempDir dir;
  auto cfg = ollama_config({"f16", "q5_1"});
  cfg["server"]["env"] = {{"FAKE_OLLAMA_LEGACY", "1"}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto cells = cells_by_label(kt::read_manifest(run));
  // f16: no KV line in an old Ollama's log, so the type is only declared: kv_unverified, never ok.
  EXPECT_EQ(cells["tiny:f16/f16"]["outcome"], "kv_unverified");
  EXPECT_TRUE(cells["tiny:f16/f16"]["effective"]["declared"].get<bool>());
  // q5_1: the old Ollama said it ran f16 instead.
  EXPECT_EQ(cells["tiny:q5_1/q5_1"]["outcome"], "config_mismatch") << cells["tiny:q5_1/q5_1"].dump();
}

TEST(Ollama, AsymmetricGridIsRejectedBeforeAnythingStarts) {
  kt::TempDir dir;
  auto cfg = ollama_config({"f16", "q8_0"});
  cfg["grid"]["v"] = "same-as-k";
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("grid.v")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("OLLAMA_KV_CACHE_TYPE is one setting for both")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(run));
}

