// The speed probe: parsing llama-bench's JSON output (a capture of the real `llama-bench -m tiny.gguf
// -ctk q8_0 -ctv q4_0 -p 32 -n 8 -d 64 -r 2 -o jsonl -fa on -t 2`, tests/data/llama-bench/), the args
// taken over from the server's, and the probe's run against a fake ToolRunner.

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/speed/speed.hpp"
#include "kvsweep/probe/tool_args.hpp"
#include "kvsweep/server/api.hpp"
#include "fake_api.hpp"
#include "fake_tool_runner.hpp"
#include "metric_declarations.hpp"

using ::testing::HasSubstr;

namespace {

using kvsweep::core::ErrorKind;
using kvsweep::core::Expected;
using kvsweep::core::FatalError;
using kvsweep::probe::bench_args;
using kvsweep::probe::CellInfo;
using kvsweep::probe::ConfigSource;
using kvsweep::probe::Context;
using kvsweep::probe::parse_bench_output;
using kvsweep::process::ToolRun;
using nlohmann::json;

// llama-bench's `-o jsonl` output, captured from the real tool (tests/data/llama-bench/README.md says
// how): one line per test, every get_fields() field, then samples_ns and samples_ts.
std::string capture() {
  const auto path = std::filesystem::path(KVSWEEP_TEST_DATA) / "llama-bench" / "tiny-q8_0-q4_0-d64.jsonl";
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
// The capture's figures (avg_ts and stddev_ts of its pp32 and tg8 tests).
constexpr double kPpAvg = 58.637999, kPpSd = 1.517810, kTgAvg = 272.735027;

TEST(BenchOutput, ReadsThePromptAndGenerationTestsOfTheRealTool) {
  const std::string output = capture();
  ASSERT_FALSE(output.empty());
  auto tests = parse_bench_output(output);
  ASSERT_TRUE(tests) << tests.error().message;
  ASSERT_EQ(tests->size(), 2u);
  const auto& pp = (*tests)[0];
  const auto& tg = (*tests)[1];
  EXPECT_EQ(pp.n_prompt, 32);
  EXPECT_EQ(pp.n_gen, 0);
  EXPECT_EQ(pp.n_depth, 64);
  EXPECT_EQ(pp.type_k, "q8_0");
  EXPECT_EQ(pp.type_v, "q4_0");
  EXPECT_DOUBLE_EQ(pp.avg_ts, kPpAvg);
  EXPECT_DOUBLE_EQ(pp.stddev_ts, kPpSd);
  EXPECT_EQ(tg.n_prompt, 0);
  EXPECT_EQ(tg.n_gen, 8);
  EXPECT_DOUBLE_EQ(tg.avg_ts, kTgAvg);
  EXPECT_EQ(tg.n_depth, 64);
  // The whole object is kept, samples included.
  EXPECT_EQ(pp.raw["samples_ts"].size(), 2u);
  EXPECT_EQ(pp.raw["build_commit"], "de3ff81");
}

TEST(BenchOutput, LinesOnStderrBetweenTheTestsAreSkipped) {
  // The tool's log lines (a verbose or a failing backend) land in the same output as its JSONL.
  std::string output = capture();
  output.insert(output.find('\n') + 1, "llama_context: a line written to stderr between the tests\n");
  output = "load_backend: loaded CPU backend\n" + output;
  auto tests = parse_bench_output(output);
  ASSERT_TRUE(tests) << tests.error().message;
  ASSERT_EQ(tests->size(), 2u);
  EXPECT_DOUBLE_EQ((*tests)[0].avg_ts, kPpAvg);
  EXPECT_DOUBLE_EQ((*tests)[1].avg_ts, kTgAvg);
}

TEST(BenchOutput, ReadsTheJsonArrayForm) {
  const std::string array = R"([
  {"n_prompt": 512, "n_gen": 0, "n_depth": 0, "type_k": "f16", "type_v": "f16", "avg_ts": 100.5, "stddev_ts": 1.5},
  {"n_prompt": 0, "n_gen": 128, "n_depth": 0, "type_k": "f16", "type_v": "f16", "avg_ts": 20.25, "stddev_ts": 0.5}
])";
  auto tests = parse_bench_output(array);
  ASSERT_TRUE(tests) << tests.error().message;
  ASSERT_EQ(tests->size(), 2u);
  EXPECT_DOUBLE_EQ((*tests)[1].avg_ts, 20.25);
}

TEST(BenchOutput, NoTestIsAParseErrorQuotingTheOutput) {
  auto tests = parse_bench_output("main: error: failed to load model 'x.gguf'\n");
  ASSERT_FALSE(tests);
  EXPECT_EQ(tests.error().kind, ErrorKind::parse);
  EXPECT_THAT(tests.error().message, HasSubstr("failed to load model"));
}

TEST(BenchArgs, TakesOverOffloadThreadsAndFlashAttentionInLlamaBenchSpelling) {
  EXPECT_EQ(bench_args({"-fa", "on", "-ngl", "all", "--jinja", "-t", "4", "--threads-batch", "8", "-c", "4096",
                        "-ts", "3,1", "-dev", "CUDA0,CUDA1", "-nkvo", "--ubatch-size=256", "--alias", "x"}),
            (std::vector<std::string>{"-fa", "on", "-ngl", "-2", "-t", "4", "-ts", "3/1", "-dev", "CUDA0/CUDA1", "-nkvo",
                                      "1", "-ub", "256"}));
  EXPECT_EQ(bench_args({"--n-gpu-layers", "auto", "--no-op-offload"}),
            (std::vector<std::string>{"-ngl", "-1", "-nopo", "1"}));
  EXPECT_EQ(bench_args({"-ngl", "40"}), (std::vector<std::string>{"-ngl", "40"}));
}

using FakeRunner = kvsweep::testing::FakeToolRunner;

class SpeedProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("kvsweep-speed-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "run");
    std::filesystem::create_directories(dir / "build");
    for (const char* tool : {"llama-server", "llama-bench"}) {
      std::ofstream(dir / "build" / tool) << "#!/bin/sh\n";
      std::filesystem::permissions(dir / "build" / tool, std::filesystem::perms::owner_all);
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::unique_ptr<kvsweep::probe::Probe> make(json cfg, bool host_amx = false) {
    cfg["kind"] = "speed";
    return kvsweep::probe::make_speed_probe_with(cfg, ConfigSource{{"t.json", "probes[1]"}, dir}, runner, host_amx);
  }

  Expected<kvsweep::probe::ItemResult> run(kvsweep::probe::Probe& probe, std::size_t item, const std::string& k,
                                           const std::string& v) {
    CellInfo cell;
    cell.env = {{"CUDA_VISIBLE_DEVICES", "1"}};
    cell.model = "tiny";
    cell.model_path = "/models/tiny.gguf";
    cell.type_k = k;
    cell.type_v = v;
    cell.server_args = {"-fa", "on", "--jinja", "-t", "2"};
    cell.run_dir = dir / "run";
    cell.server_binary = (dir / "build" / "llama-server").string();
    kvsweep::testing::FakeApi api = kvsweep::testing::no_api("speed");
    Context ctx{api, cell, nullptr, nullptr};
    return probe.run(probe.items().at(item), ctx);
  }

  std::filesystem::path dir;
  std::shared_ptr<FakeRunner> runner = std::make_shared<FakeRunner>();
};

TEST_F(SpeedProbeTest, OneItemPerDepthRunsLlamaBenchBesideTheServerWithTheCellsSettings) {
  runner->output = capture();
  auto probe = make({{"depths", {0, 64}}, {"pp", 32}, {"tg", 8}, {"repetitions", 2}});
  EXPECT_TRUE(probe->runs_tool());
  ASSERT_EQ(probe->items().size(), 2u);
  EXPECT_EQ(probe->items()[0].key, "d0");
  EXPECT_EQ(probe->items()[1].key, "d64");
  auto res = run(*probe, 1, "q8_0", "q4_0");
  ASSERT_TRUE(res) << res.error().message;
  ASSERT_EQ(runner->calls.size(), 1u);
  EXPECT_EQ(runner->calls[0],
            (std::vector<std::string>{(dir / "build" / "llama-bench").string(), "-m", "/models/tiny.gguf", "-ctk", "q8_0",
                                      "-ctv", "q4_0", "-p", "32", "-n", "8", "-d", "64", "-r", "2", "-o", "jsonl", "-fa",
                                      "on", "-t", "2"}));
  EXPECT_EQ(runner->envs[0], (kvsweep::process::ToolRunner::Env{{"CUDA_VISIBLE_DEVICES", "1"}}));
  EXPECT_EQ(runner->logs[0], dir / "run" / "speed" / "tiny-q8_0-q4_0-d64.log");
  EXPECT_EQ(runner->timeouts[0], std::chrono::seconds(3600));
  EXPECT_DOUBLE_EQ(res->metrics["pp_tok_s"].get<double>(), kPpAvg);
  EXPECT_DOUBLE_EQ(res->metrics["pp_tok_s_sd"].get<double>(), kPpSd);
  EXPECT_DOUBLE_EQ(res->metrics["tg_tok_s"].get<double>(), kTgAvg);
  EXPECT_EQ(res->response["tests"].size(), 2u);
  EXPECT_THAT(res->response["command"].get<std::string>(), HasSubstr("-ctk q8_0 -ctv q4_0"));
  kvsweep::probe::testing::expect_declarations_match(*probe, res->metrics);
}

// The item's spec is the probe's SpeedSpec, and what the report reads back is what the probe planned.
TEST_F(SpeedProbeTest, AnItemsSpecReadsBackAsTheSpeedSpecItWasPlannedFrom) {
  auto probe = make({{"depths", {0, 64}}, {"pp", 32}, {"tg", 8}, {"repetitions", 2}});
  const auto spec = kvsweep::probe::SpeedSpec::from_json(probe->items()[1].spec);
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->depth, 64);
  EXPECT_EQ(spec->pp, 32);
  EXPECT_EQ(spec->tg, 8);
  EXPECT_EQ(spec->repetitions, 2);
  EXPECT_EQ(to_json(*spec), probe->items()[1].spec);
  // Not a speed item's spec: no integer depth.
  EXPECT_FALSE(kvsweep::probe::SpeedSpec::from_json(json{{"pp", 32}}));
  EXPECT_FALSE(kvsweep::probe::SpeedSpec::from_json(json{{"depth", "64"}}));
  EXPECT_FALSE(kvsweep::probe::SpeedSpec::from_json(json::array()));
  // A size of another type reads as 0, never as a throw.
  EXPECT_EQ(kvsweep::probe::SpeedSpec::from_json(json{{"depth", 0}, {"pp", "x"}})->pp, 0);
}

TEST_F(SpeedProbeTest, SpeedsAreCostMetricsNeverQuality) {
  auto probe = make({});
  for (const auto& m : probe->metrics()) EXPECT_FALSE(m.is_judged()) << m.name;
  EXPECT_EQ(kvsweep::probe::find_metric(probe->metrics(), "pp_tok_s")->role, kvsweep::probe::MetricRole::cost);
  EXPECT_EQ(kvsweep::probe::find_metric(probe->metrics(), "tg_tok_s")->role, kvsweep::probe::MetricRole::cost);
  EXPECT_FALSE(probe->deterministic());
  // Defaults: one item at depth 0.
  ASSERT_EQ(probe->items().size(), 1u);
  EXPECT_EQ(probe->items()[0].key, "d0");
  // tg 0 declares (and emits) no tg metric.
  EXPECT_EQ(kvsweep::probe::find_metric(make({{"tg", 0}})->metrics(), "tg_tok_s"), nullptr);
}

TEST_F(SpeedProbeTest, TypesOtherThanTheCellsAreAnError) {
  runner->output = capture();
  auto probe = make({{"depths", {64}}, {"pp", 32}, {"tg", 8}});
  auto res = run(*probe, 0, "f16", "f16");
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::invalid);
  EXPECT_THAT(res.error().message, HasSubstr("not the cell's f16/f16"));
}

TEST_F(SpeedProbeTest, AFailedRunIsAProcessErrorWithTheToolsLastLines) {
  runner->output = "main: error: failed to load model '/models/tiny.gguf'\n";
  runner->exit_code = 1;
  auto probe = make({});
  auto res = run(*probe, 0, "f16", "f16");
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::process);
  EXPECT_THAT(res.error().message, HasSubstr("failed to load model"));
}

TEST_F(SpeedProbeTest, ASegfaultOnAnAmxHostNamesLlamaCppsAmxPathAndABuildWithoutIt) {
  // llama-bench logs nothing of its buffers: on a host with AMX its death by a signal is named as the
  // likely AMX crash (ggml-org/llama.cpp#20824), with the one remedy llama-bench has.
  runner->kill_signal = 11;
  auto res = run(*make({}, /*host_amx=*/true), 0, "f16", "f16");
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::process);
  EXPECT_THAT(res.error().message, HasSubstr("killed by signal 11"));
  EXPECT_THAT(res.error().message, HasSubstr("AMX matrix-multiply path"));
  EXPECT_THAT(res.error().message, HasSubstr("ggml-org/llama.cpp#20824"));
  EXPECT_THAT(res.error().message, HasSubstr("-mno-amx-int8"));
  // The same death on a host without AMX is only a signal.
  auto plain = run(*make({}, /*host_amx=*/false), 0, "f16", "f16");
  ASSERT_FALSE(plain);
  EXPECT_THAT(plain.error().message, HasSubstr("killed by signal 11"));
  EXPECT_THAT(plain.error().message, ::testing::Not(HasSubstr("AMX")));
}

TEST_F(SpeedProbeTest, BadConfigsNameTheKey) {
  EXPECT_THROW(make({{"depths", json::array()}}), FatalError);
  EXPECT_THROW(make({{"depths", {0, 0}}}), FatalError);
  EXPECT_THROW(make({{"pp", 0}, {"tg", 0}}), FatalError);
  EXPECT_THROW(make({{"repetitions", 0}}), FatalError);
  try {
    make({{"depth", {0}}});
    FAIL() << "an unknown key must be refused";
  } catch (const FatalError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("depths")) << e.what();
  }
}

}  // namespace
