// Nothing secret reaches the run directory: an API key given through server.api_key_env (a
// sentinel value) and the user:password of a URL are used to talk to the server and appear in
// no file of the run, nor in kvsweep's output. A real llama-server (--api-key) is attached to.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"
#include "kvsweep/server/llama/llama_server.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kt = kvsweep::testing;
using namespace kvsweep;

namespace {

constexpr const char* kKey = "KEY-SENTINEL-7d1e5";
constexpr const char* kPassword = "PW-SENTINEL-93a2";

/// Every file below `dir` that holds `needle`.
std::vector<std::string> files_holding(const std::filesystem::path& dir, const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(needle) != std::string::npos) out.push_back(e.path().string());
  }
  return out;
}

}  // namespace

TEST(Leaks, AnApiKeyAndUrlUserinfoReachTheServerButNoFileOfTheRun) {
  kt::TempDir dir;
  server::LlamaServerBackend backend({kt::llama_bin_dir() + "/llama-server"});
  server::CellSpec spec;
  spec.model_path = kt::tiny_model().string();
  spec.n_ctx = 2048;                   // the config's server.ctx: an attached server's context is checked
  spec.log_path = dir / "server.log";  // outside the run directory
  spec.extra_args = {"-t", "1", "--api-key", kKey};
  spec.ready_timeout = std::chrono::seconds(kt::scaled_s(60));
  spec.stop_grace = std::chrono::seconds(2);
  std::atomic<bool> cancel{false};
  auto server = backend.start(spec, cancel);
  ASSERT_TRUE(server) << server.error().message;
  const int port = (*server)->info()["port"];

  ::setenv("KVSWEEP_LEAK_TEST_KEY", kKey, 1);
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16"}}};
  cfg["server"] = {{"backend", "external"},
                   {"url", "http://kvuser:" + std::string(kPassword) + "@127.0.0.1:" + std::to_string(port)},
                   {"api_key_env", "KVSWEEP_LEAK_TEST_KEY"},
                   {"ctx", 2048},
                   {"ready_timeout_s", kt::scaled_s(60)},
                   {"request_timeout_s", kt::scaled_s(60)}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ::unsetenv("KVSWEEP_LEAK_TEST_KEY");
  ASSERT_EQ(r.exit_code, 0) << r.output;  // the key was sent: llama-server refuses requests without it
  auto manifest = kt::read_manifest(run);
  EXPECT_EQ(manifest["cells"][0]["outcome"], "kv_unverified") << manifest["cells"].dump();  // types declared
  EXPECT_EQ(manifest["server"]["url"], "http://127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(manifest["config"]["server"]["url"], "http://127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(kt::read_records(run).size(), 4u);

  auto report = kt::run_kvsweep({"report", run.string(), "--format", "all"});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  for (const std::string secret : {kKey, kPassword, "kvuser"}) {
    EXPECT_EQ(files_holding(run, secret), std::vector<std::string>{}) << secret;
    EXPECT_THAT(r.output, Not(HasSubstr(secret))) << r.output;
  }
}
