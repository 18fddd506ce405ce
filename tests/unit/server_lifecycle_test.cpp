// The one server lifecycle, every start-up path driven by a fake launcher and a fake ready probe
// (tests/unit/fake_launcher.hpp): died before ready, unsupported from the server's own message,
// ready timeout, cancel, a launch that fails, a flavour step that fails, config_mismatch, a log
// without the KV line, attach, stop, the version probe, and the error lines a failure shows.

#include <atomic>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_launcher.hpp"
#include "kvsweep/server/openai/launch_template.hpp"
#include "kvsweep/server/lifecycle/lifecycle.hpp"
#include "kvsweep/server/llama/llama_api.hpp"
#include "kvsweep/server/llama/llama_server.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {

using namespace kvsweep;
using kvsweep::server::CellOutcome;
namespace kt = kvsweep::testing;

constexpr const char* kKvLine =
    "0.01.000.000 I llama_kv_cache: size =   16.00 MiB (  4096 cells,   2 layers,  1/1 seqs), K (q4_0):    4.50 MiB, "
    "V (f16):   8.00 MiB\n";

constexpr const char* kMissingModelLog =
    "0.00.000.442 I srv  llama_server: initializing ...\n"
    "0.00.023.154 I cmn  common_param: common_params_print_info: build 1 (de3ff81)\n"
    "0.00.025.225 I srv    load_model: loading model '/nonexistent.gguf'\n"
    "0.00.025.900 E gguf_init_from_file: failed to open GGUF file '/nonexistent.gguf' (No such file or directory)\n"
    "0.00.026.687 E srv    load_model: failed to load model, '/nonexistent.gguf'\n"
    "0.00.026.689 I srv    operator(): operator(): cleaning up before exit...\n"
    "0.00.034.929 E srv  llama_server: exiting due to model loading error\n";

/// A flavour whose after_ready does what the test says; everything else is the default.
class TestFlavour final : public server::Flavour {
 public:
  std::optional<server::ReadyFailure> after_ready_failure;
  std::function<void()> during_after_ready;
  std::string marker;  // log_complete_marker

  std::string who() const override { return "test-server"; }
  process::LaunchSpec launch_spec(const server::CellSpec& spec, int port) const override {
    return {{"test-server", "--port", std::to_string(port), "-ctk", spec.type_k, "-ctv", spec.type_v}, spec.env, {}, {}};
  }
  std::string ready_path() const override { return "/health"; }
  std::string log_complete_marker() const override { return marker; }
  std::string listening_line(int port) const override { return "listening on http://127.0.0.1:" + std::to_string(port); }
  std::expected<void, server::ReadyFailure> after_ready(server::ReadyContext& context) const override {
    context.info["after_ready"] = true;
    if (during_after_ready) during_after_ready();
    if (after_ready_failure) return std::unexpected(*after_ready_failure);
    return {};
  }
  std::unique_ptr<server::Api> make_api(std::shared_ptr<http::Client> client, const server::CellSpec&) const override {
    return std::make_unique<server::LlamaApi>(std::move(client));
  }
};

class Lifecycle : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove(kt::temp_file(".log"));
    spec.model = "tiny";
    spec.model_path = "/models/tiny.gguf";
    spec.type_k = "q4_0";
    spec.type_v = "f16";
    spec.log_path = kt::temp_file(".log");
    // Far beyond the few 20 ms polls a test scripts (a log that lags behind ready is read again until
    // this deadline): a loaded machine must not turn a start into load_failed. The tests of the
    // timeout itself set a short one.
    spec.ready_timeout = std::chrono::seconds(30);
    spec.stop_grace = std::chrono::milliseconds(10);
  }
  auto launch() { return server::Lifecycle(launcher, probe).launch(flavour, spec, cancel); }

  kt::FakeLauncher launcher;
  kt::FakeReadyProbe probe;
  TestFlavour flavour;
  server::CellSpec spec;
  std::atomic<bool> cancel{false};
};

TEST_F(Lifecycle, ReadyServerWithTheKvLineIsVerifiedAndStopsOnce) {
  launcher.log = kKvLine;
  probe.not_ready = 2;
  auto started = launch();
  ASSERT_TRUE(started) << started.error().message;
  auto& instance = **started;
  EXPECT_EQ(probe.calls, 3);
  EXPECT_EQ(probe.paths.back(), "/health");
  EXPECT_EQ(server::check_kv(instance.effective(), "q4_0", "f16"), server::KvCheck::verified);
  EXPECT_EQ(instance.info()["argv"][0], "test-server");
  EXPECT_EQ(instance.info()["after_ready"], true);
  ASSERT_EQ(launcher.launched.size(), 1u);
  EXPECT_EQ(launcher.launched[0].log_path, spec.log_path);
  // The launch line goes to the log before the server's own output.
  EXPECT_EQ(kt::slurp(spec.log_path).rfind("# kvsweep: launching: test-server --port ", 0), 0u);
  EXPECT_TRUE(instance.alive());
  instance.stop();
  instance.stop();
  EXPECT_FALSE(instance.alive());
  EXPECT_EQ(launcher.processes[0]->stops, 1);
  EXPECT_THAT(instance.exit_description(), HasSubstr("signal 15"));
}

TEST_F(Lifecycle, DiedBeforeReadyIsLoadFailedWithTheServersErrorLinesOnly) {
  launcher.log = kMissingModelLog;
  launcher.exit_at_launch = process::ExitStatus{1, 0, false};
  auto started = launch();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().outcome, CellOutcome::load_failed);
  EXPECT_EQ(started.error().message, "test-server exited with code 1 before it was ready");
  const std::string& lines = started.error().log_tail;
  EXPECT_THAT(lines, HasSubstr("failed to open GGUF file '/nonexistent.gguf'")) << lines;
  EXPECT_THAT(lines, HasSubstr("exiting due to model loading error")) << lines;
  // Start-up chatter is left out; the last lines before exit are kept.
  EXPECT_THAT(lines, Not(HasSubstr("common_params_print_info"))) << lines;
  EXPECT_THAT(lines, Not(HasSubstr("initializing"))) << lines;
  EXPECT_THAT(lines, HasSubstr("cleaning up before exit")) << lines;
  EXPECT_EQ(probe.calls, 0);
}

TEST_F(Lifecycle, TheServersOwnRefusalIsUnsupported) {
  launcher.log = "0.00.1 E llama_init_from_model: V cache quantization requires flash_attn\n"
                 "0.00.2 E quantized V cache requires flash_attn\n";
  launcher.exit_at_launch = process::ExitStatus{1, 0, false};
  auto started = launch();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().outcome, CellOutcome::unsupported);
}

TEST_F(Lifecycle, NotReadyBeforeTheDeadlineIsLoadFailedAndTheServerIsStopped) {
  probe.ready = false;
  spec.ready_timeout = std::chrono::milliseconds(100);
  auto started = launch();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().outcome, CellOutcome::load_failed);
  EXPECT_THAT(started.error().message, HasSubstr("GET /health not ready within the ready timeout"))
      << started.error().message;
  EXPECT_THAT(started.error().message, HasSubstr("connection refused"));
  // At least one poll; how many fit in 100 ms depends on the machine's load (retrying is shown by
  // ReadyServerWithTheKvLineIsVerifiedAndStopsOnce).
  EXPECT_GE(probe.calls, 1);
  EXPECT_EQ(launcher.processes.at(0)->stops, 1);
}

TEST_F(Lifecycle, CancelWhileWaitingStopsTheServer) {
  probe.ready = false;
  cancel = true;
  auto started = launch();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().outcome, CellOutcome::cancelled);
  EXPECT_EQ(launcher.processes.at(0)->stops, 1);
}

TEST_F(Lifecycle, ALaunchThatFailsIsLoadFailedNamingWhy) {
  launcher.refuse = true;
  auto started = launch();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().outcome, CellOutcome::load_failed);
  EXPECT_EQ(started.error().message, "cannot start test-server: cannot execute test-server");
}

TEST_F(Lifecycle, KvTypesOtherThanRequestedAreConfigMismatch) {
  launcher.log = "0.01 I llama_kv_cache: size =   16.00 MiB (  4096 cells,   2 layers,  1/1 seqs), K (f16):    8.00 MiB, "
                 "V (f16):   8.00 MiB\n";
  auto started = launch();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().outcome, CellOutcome::config_mismatch);
  EXPECT_EQ(started.error().message, "requested K=q4_0 V=f16, the server allocated K=f16 V=f16");
  EXPECT_EQ(started.error().effective.type_k, "f16");
  EXPECT_EQ(launcher.processes.at(0)->stops, 1);
}

TEST_F(Lifecycle, ALogWithoutTheKvLineStartsButIsUnverified) {
  launcher.log = "0.01 I srv  load_model: loaded\n";
  auto started = launch();
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_EQ(server::check_kv((*started)->effective(), "q4_0", "f16"), server::KvCheck::unverified);
}

TEST_F(Lifecycle, ALogThatLagsBehindReadyIsReadAgainUntilTheFlavoursMarker) {
  // llama.cpp writes its log from a worker thread: the KV line can reach the file after /health answered.
  const std::string late = std::string(kKvLine) + "0.02 I srv  llama_server: model loaded\n";
  launcher.late_log = late;
  launcher.late_log_polls = 3;
  flavour.marker = "model loaded";
  auto waited = launch();
  ASSERT_TRUE(waited) << waited.error().message;
  EXPECT_EQ(server::check_kv((*waited)->effective(), "q4_0", "f16"), server::KvCheck::verified);
  // Without a marker the log is read once, before the late lines: unverified.
  std::filesystem::remove(spec.log_path);
  flavour.marker.clear();
  auto once = launch();
  ASSERT_TRUE(once) << once.error().message;
  EXPECT_EQ(server::check_kv((*once)->effective(), "q4_0", "f16"), server::KvCheck::unverified);
}

// A stranger's answers are never recorded as the cell's: another process took the port kvsweep
// chose; it answers the ready wait while the child, unable to bind, exits. Even with the K/V line in
// the child's log, the start fails and nothing is handed out to run items against.
TEST_F(Lifecycle, AStrangersAnswersOnThePortAreNeverTheCells) {
  launcher.log = kKvLine;
  launcher.listens = false;
  probe.on_answer = [&] {
    std::ofstream(spec.log_path, std::ios::app) << "0.00.5 E srv  llama_server: couldn't bind HTTP server socket\n";
    launcher.processes.back()->exit = process::ExitStatus{1, 0, false};
  };
  auto started = launch();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().outcome, CellOutcome::load_failed);
  const std::string& message = started.error().message;
  EXPECT_THAT(message, HasSubstr("test-server exited with code 1 and never logged that it listens on port ")) << message;
  EXPECT_THAT(message, HasSubstr("/health answered there: another process holds the port")) << message;
  EXPECT_THAT(started.error().log_tail, HasSubstr("couldn't bind")) << started.error().log_tail;

  // A child that runs but never says it holds the port cannot be confirmed either.
  probe.on_answer = nullptr;
  spec.ready_timeout = std::chrono::milliseconds(100);
  started = launch();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().outcome, CellOutcome::load_failed);
  EXPECT_THAT(started.error().message, HasSubstr("test-server did not log within the ready timeout")) << started.error().message;
  EXPECT_EQ(launcher.processes.back()->stops, 1);
}

TEST(SaysListening, ThePortIsMatchedWhole) {
  const std::string line = "listening on http://127.0.0.1:808";
  EXPECT_FALSE(server::says_listening("srv  llama_server: listening on http://127.0.0.1:8080\n", line));
  EXPECT_TRUE(server::says_listening("a\nsrv  llama_server: listening on http://127.0.0.1:808\n", line));
  EXPECT_TRUE(server::says_listening("main: server is listening on http://127.0.0.1:808 - starting the main loop", line));
  EXPECT_TRUE(server::says_listening("x listening on http://127.0.0.1:8080 y listening on http://127.0.0.1:808", line));
  EXPECT_FALSE(server::says_listening("", line));
}

TEST_F(Lifecycle, AFlavourStepThatFailsUsesItsOutcomeOrTheLog) {
  flavour.after_ready_failure = server::ReadyFailure{"while answering /api/show", "model 'x': HTTP 404", CellOutcome::load_failed};
  auto started = launch();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().outcome, CellOutcome::load_failed);
  EXPECT_EQ(started.error().message, "model 'x': HTTP 404");
  EXPECT_EQ(launcher.processes.at(0)->stops, 1);

  // The server dies during the step: judged from its log, named with the step.
  flavour.after_ready_failure = server::ReadyFailure{"while loading x", "loading x failed", std::nullopt};
  launcher.log = "E Unsupported cache type\n";
  flavour.during_after_ready = [&] { launcher.processes.back()->exit = process::ExitStatus{0, 6, true}; };
  started = launch();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().outcome, CellOutcome::unsupported);
  EXPECT_THAT(started.error().message, HasSubstr("test-server killed by signal 6")) << started.error().message;
  EXPECT_THAT(started.error().message, HasSubstr("while loading x"));
}

TEST_F(Lifecycle, AttachLaunchesNothingAndDeclaresTheTypes) {
  auto started = server::Lifecycle(launcher, probe).attach(flavour, {"http://10.0.0.5:8080/", {"sekret", "", ""}, ""}, spec, cancel);
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_TRUE(launcher.launched.empty());
  EXPECT_EQ(probe.credentials.at(0).token, "sekret");
  EXPECT_EQ(server::check_kv((*started)->effective(), "q4_0", "f16"), server::KvCheck::declared);
  EXPECT_EQ((*started)->info()["url"], "http://10.0.0.5:8080");
  EXPECT_THAT((*started)->info().dump(), Not(HasSubstr("sekret")));
  EXPECT_TRUE((*started)->alive());
}

TEST_F(Lifecycle, ALaunchTemplatesOwnApiKeyIsSentAsABearerToken) {
  // vLLM/SGLang's --api-key and llama-cpp-python's --api_key in server.command, not server.args.
  for (const std::vector<std::string>& key : {std::vector<std::string>{"--api-key", "sk-template-key-1"},
                                              std::vector<std::string>{"--api_key=sk-template-key-1"}}) {
    server::TemplateOptions o;
    o.binary = "srv";
    o.command = {"{binary}", "--port", "{port}"};
    o.command.insert(o.command.end(), key.begin(), key.end());
    const server::TemplateFlavour template_flavour(o);
    probe.credentials.clear();
    auto started = server::Lifecycle(launcher, probe).launch(template_flavour, spec, cancel);
    ASSERT_TRUE(started) << started.error().message;
    ASSERT_FALSE(probe.credentials.empty());
    EXPECT_EQ(probe.credentials.at(0).token, "sk-template-key-1");
    (*started)->stop();
  }
}

TEST_F(Lifecycle, TheVersionProbeReadsWhatTheBinaryPrints) {
  launcher.log = "version: 1 (de3ff81)\nbuilt with GNU 12.2.0 for Linux x86_64\n";
  launcher.exit_at_launch = process::ExitStatus{0, 0, false};
  server::LlamaServerBackend backend({"/opt/llama/llama-server"}, launcher, probe);
  auto d = backend.describe();
  EXPECT_EQ(d["version"], "1 (de3ff81)");
  EXPECT_EQ(d["built_with"], "built with GNU 12.2.0 for Linux x86_64");
  ASSERT_EQ(launcher.launched.size(), 1u);
  EXPECT_EQ(launcher.launched[0].argv, (std::vector<std::string>{"/opt/llama/llama-server", "--version"}));
  EXPECT_FALSE(std::filesystem::exists(launcher.launched[0].log_path));
}

TEST_F(Lifecycle, AVersionAnswerThatLostItsVersionLineIsAskedAgain) {
  // Seen under load in a fresh clone: a resume refused as "another build" because one `--version`
  // answer held only its "built with" line.
  launcher.logs = {"built with GNU 12.2.0 for Linux x86_64\n", ""};
  launcher.log = "version: 1 (de3ff81)\nbuilt with GNU 12.2.0 for Linux x86_64\n";
  launcher.listens = false;
  launcher.exit_at_launch = process::ExitStatus{0, 0, false};
  server::LlamaServerBackend backend({"/opt/llama/llama-server"}, launcher, probe);
  auto d = backend.describe();
  EXPECT_EQ(d["version"], "1 (de3ff81)");
  EXPECT_EQ(launcher.launched.size(), 3u);
  // A binary that never says its version is asked three times, then described without one.
  kt::FakeLauncher silent;
  silent.listens = false;
  silent.log = "built with GNU 12.2.0 for Linux x86_64\n";
  silent.exit_at_launch = process::ExitStatus{0, 0, false};
  server::LlamaServerBackend quiet({"/opt/llama/llama-server"}, silent, probe);
  EXPECT_FALSE(quiet.describe().contains("version"));
  EXPECT_EQ(silent.launched.size(), 3u);
}

TEST(ServerErrorLines, ErrorLinesAndTheLastLinesInLogOrder) {
  const std::string log = "I one\nE two\nI three\nI four\nlevel=ERROR five\nI six\nI seven\n";
  EXPECT_EQ(server::server_error_lines(log, 2), "E two\nlevel=ERROR five\nI six\nI seven\n");
  EXPECT_EQ(server::server_error_lines("", 3), "");
}

}  // namespace
