// The kld probe: parsing llama-perplexity's output (literal captures from a real run on the tiny
// model: `llama-perplexity -m tiny.gguf -f corpus.txt -c 128 --chunks 4 --kl-divergence-base
// base.kld -ctk f16 -ctv f16 -fa on -t 2`, then `--kl-divergence -ctk q4_0 -ctv q4_0`), the args
// passed through from the server's, and the probe's two runs against a fake ToolRunner.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/corpus/english.hpp"
#include "kvsweep/probe/kld/kld.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/tool_args.hpp"
#include "kvsweep/server/api.hpp"
#include "fake_api.hpp"
#include "fake_tool_runner.hpp"
#include "metric_declarations.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {

using kvsweep::core::ErrorKind;
using kvsweep::core::Expected;
using kvsweep::core::FatalError;
using kvsweep::probe::CellInfo;
using kvsweep::probe::ConfigSource;
using kvsweep::probe::Context;
using kvsweep::probe::ToolRun;
using kvsweep::probe::parse_base_output;
using kvsweep::probe::parse_kld_output;
using kvsweep::probe::perplexity_args;
using nlohmann::json;

// Captured verbatim (stdout and stderr together).
constexpr std::string_view kQ4Output = R"~~(0.00.232.906 W llama_context: n_ctx is not divisible by n_seq_max - rounding down to 4096
0.00.237.002 I cmn          init: llama threadpool init, n_threads = 2
0.00.345.793 I 
0.00.345.897 I system_info: n_threads = 2 (n_threads_batch = 2) / 2 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | 
0.00.348.347 I kl_divergence: computing over 4 chunks, n_ctx=128, batch_size=2048, n_seq=16
0.01.098.959 I kl_divergence: 0.75 seconds per pass - ETA 0.00 minutes

chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS            Same top p
   1    38382527.7233 ± 18100185.8846       1.52798 ±    0.26086       0.24132 ±    0.02198     0.001 ±  0.000 %    69.841 ±  5.829 %
   2    59420143.4905 ± 20395804.8200       1.78243 ±    0.21014       0.22879 ±    0.01352     0.001 ±  0.000 %    63.492 ±  4.306 %
   3    54228572.4585 ± 15078059.9873       1.68783 ±    0.17134       0.25472 ±    0.01299     0.001 ±  0.000 %    63.492 ±  3.511 %
   4    55155058.2618 ± 13419343.8022       1.69852 ±    0.15260       0.24899 ±    0.01056     0.001 ±  0.000 %    61.111 ±  3.077 %

====== Perplexity statistics ======
Mean PPL(Q)                   : 55155058.261836 ± 13419343.802182
Mean PPL(base)                : 10090803.011415 ± 1374960.425059
Cor(ln(PPL(Q)), ln(PPL(base))):  82.16%
Mean ln(PPL(Q)/PPL(base))     :   1.698524 ±   0.152602
Mean PPL(Q)/PPL(base)         :   5.465874 ±   0.834104
Mean PPL(Q)-PPL(base)         : 45064255.250421 ± 12314656.914977

====== KL divergence statistics ======
Mean    KLD:   0.248995 ±   0.010565
Maximum KLD:   0.948005
99.9%   KLD:   0.947722
99.0%   KLD:   0.888811
95.0%   KLD:   0.583362
90.0%   KLD:   0.466607
Median  KLD:   0.209232
10.0%   KLD:   0.087047
 5.0%   KLD:   0.064481
 1.0%   KLD:   0.052097
 0.1%   KLD:   0.025719
Minimum KLD:   0.019036

====== Token probability statistics ======
Mean    Δp: -0.000 ± 0.000 %
Maximum Δp:  0.007%
99.9%   Δp:  0.006%
99.0%   Δp:  0.001%
95.0%   Δp:  0.000%
90.0%   Δp:  0.000%
75.0%   Δp:  0.000%
Median  Δp: -0.000%
25.0%   Δp: -0.000%
10.0%   Δp: -0.000%
 5.0%   Δp: -0.000%
 1.0%   Δp: -0.002%
 0.1%   Δp: -0.005%
Minimum Δp: -0.006%
RMS Δp    :  0.001 ± 0.000 %
Same top p: 61.111 ± 3.077 %

)~~";

// Captured verbatim (stdout and stderr together).
constexpr std::string_view kBaseOutput = R"~~(0.00.269.012 W llama_context: n_ctx is not divisible by n_seq_max - rounding down to 4096
0.00.275.216 I cmn          init: llama threadpool init, n_threads = 2
0.00.469.489 I 
0.00.469.602 I system_info: n_threads = 2 (n_threads_batch = 2) / 2 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | 
0.00.469.782 I perplexity: saving all logits to base.kld
0.00.469.788 I perplexity: tokenizing the input ..
0.00.502.524 I perplexity: tokenization took 32.723 ms
0.00.504.896 I perplexity: calculating perplexity over 4 chunks, n_ctx=128, batch_size=2048, n_seq=16
0.01.080.921 I perplexity: 0.57 seconds per pass - ETA 0.00 minutes
[1]38338846.9069,[2]56495121.4887,[3]54716540.3532,[4]55078521.2776,
0.01.223.632 I Final estimate: PPL = 55078521.2776 +/- 13377271.17955

)~~";

// Captured verbatim (stdout and stderr together).
constexpr std::string_view kTooShortOutput = R"~~(0.00.564.356 W llama_context: n_ctx is not divisible by n_seq_max - rounding down to 4096
0.00.573.769 I cmn          init: llama threadpool init, n_threads = 2
0.00.607.680 I 
0.00.607.807 I system_info: n_threads = 2 (n_threads_batch = 2) / 2 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | 
0.00.607.963 I perplexity: saving all logits to small.kld
0.00.607.980 I perplexity: tokenizing the input ..
0.00.608.452 I perplexity: tokenization took 0.465 ms
0.00.608.468 E perplexity: you need at least 256 tokens to evaluate perplexity with a context of 128
0.00.608.481 E perplexity: the data file you provided tokenizes to only 70 tokens

)~~";

// Captured verbatim (stdout and stderr together).
constexpr std::string_view kNoBaseFileOutput = R"~~(0.00.486.501 W llama_context: n_ctx is not divisible by n_seq_max - rounding down to 4096
0.00.496.135 I cmn          init: llama threadpool init, n_threads = 2
0.00.753.812 I 
0.00.755.035 I system_info: n_threads = 2 (n_threads_batch = 2) / 2 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | 
0.00.755.077 E kl_divergence: failed to open nonexist.kld

)~~";

/// `text` without the lines that contain `needle`.
std::string without(std::string_view text, std::string_view needle) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (line.find(needle) == std::string_view::npos) out += std::string(line) + "\n";
    pos = nl + 1;
  }
  return out;
}

// ---- parsing ---------------------------------------------------------------------------------

TEST(KldParse, CapturedQ4SummaryAgainstF16Base) {
  auto s = parse_kld_output(kQ4Output);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->source, "summary");
  EXPECT_DOUBLE_EQ(s->mean_kld, 0.248995);
  EXPECT_DOUBLE_EQ(s->mean_kld_se, 0.010565);
  EXPECT_DOUBLE_EQ(s->same_top_p, 61.111);
  EXPECT_DOUBLE_EQ(s->same_top_p_se, 3.077);
  EXPECT_DOUBLE_EQ(s->ppl_ratio, 5.465874);
  EXPECT_DOUBLE_EQ(s->ppl_ratio_se, 0.834104);
  EXPECT_DOUBLE_EQ(s->rms_dp, 0.001);
  EXPECT_DOUBLE_EQ(s->rms_dp_se, 0.0);
  EXPECT_DOUBLE_EQ(s->ppl_q, 55155058.261836);
  EXPECT_DOUBLE_EQ(s->ppl_q_se, 13419343.802182);
  EXPECT_DOUBLE_EQ(s->ppl_base, 10090803.011415);
  EXPECT_DOUBLE_EQ(s->ppl_base_se, 1374960.425059);
  // Labels that merely start alike (Mean PPL(Q)-PPL(base), Mean Δp, Maximum KLD) are not confused.
  EXPECT_THAT(s->text, HasSubstr("Mean    KLD:   0.248995")) << s->text;
  EXPECT_THAT(s->text, Not(HasSubstr("Maximum")));
}

TEST(KldParse, TheTailOfBothDistributionsIsRead) {
  auto s = parse_kld_output(kQ4Output);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_DOUBLE_EQ(s->tail.at("kld_max"), 0.948005);
  EXPECT_DOUBLE_EQ(s->tail.at("kld_p999"), 0.947722);
  EXPECT_DOUBLE_EQ(s->tail.at("kld_p99"), 0.888811);
  EXPECT_DOUBLE_EQ(s->tail.at("kld_p95"), 0.583362);
  EXPECT_DOUBLE_EQ(s->tail.at("kld_p90"), 0.466607);
  EXPECT_DOUBLE_EQ(s->tail.at("kld_median"), 0.209232);
  // " 0.1%   Δp" (a leading space) is the 0.1th percentile, not confused with "99.9%"'s.
  EXPECT_DOUBLE_EQ(s->tail.at("dp_p001"), -0.005);
  EXPECT_DOUBLE_EQ(s->tail.at("dp_p999"), 0.006);
  EXPECT_DOUBLE_EQ(s->tail.at("dp_min"), -0.006);
  EXPECT_DOUBLE_EQ(s->tail.at("dp_max"), 0.007);
  EXPECT_DOUBLE_EQ(s->tail.at("dp_p01"), -0.002);
  EXPECT_EQ(s->tail.size(), kvsweep::probe::kld_tail_names().size());
  // "10.0%   KLD" and " 5.0%   KLD" have no metric of their own and set none.
  EXPECT_FALSE(s->tail.contains("kld_p10"));
}

TEST(KldParse, WithoutTheSummaryThereIsNoTail) {
  constexpr std::string_view rows =
      "chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS            Same top p\n"
      "   1       4.5 ±  0.5       0.01 ±  0.001       0.02 ±  0.003     1.0 ±  0.1 %    95.0 ±  1.0 %\n";
  auto s = parse_kld_output(rows);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->source, "chunk_row");
  EXPECT_TRUE(s->tail.empty());
}

TEST(KldParse, WithoutTheSummaryTheLastCumulativeChunkRowIsUsed) {
  // llama-perplexity prints no summary when fewer than 100 tokens were scored.
  const std::string_view q4 = kQ4Output;
  const std::string rows(q4.substr(0, q4.find("====== Perplexity statistics")));
  auto s = parse_kld_output(rows);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->source, "chunk_row");
  EXPECT_DOUBLE_EQ(s->mean_kld, 0.24899);
  EXPECT_DOUBLE_EQ(s->mean_kld_se, 0.01056);
  EXPECT_DOUBLE_EQ(s->same_top_p, 61.111);
  EXPECT_DOUBLE_EQ(s->rms_dp, 0.001);
  EXPECT_DOUBLE_EQ(s->ppl_q, 55155058.2618);
  EXPECT_NEAR(s->ppl_ratio, std::exp(1.69852), 1e-12);  // the row prints ln(PPL(Q)/PPL(base))
  EXPECT_NEAR(s->ppl_ratio_se, std::exp(1.69852) * 0.15260, 1e-12);
  EXPECT_TRUE(std::isnan(s->ppl_base_se));
  EXPECT_EQ(s->text.rfind("   4 ", 0), 0u) << s->text;
}

TEST(KldParse, AMissingSummaryLineIsNamed) {
  auto s = parse_kld_output(without(kQ4Output, "RMS"));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, ErrorKind::parse);
  EXPECT_THAT(s.error().message, HasSubstr("'RMS Δp:'")) << s.error().message;
  EXPECT_THAT(s.error().message, HasSubstr("Same top p: 61.111"));  // quotes the tail
}

TEST(KldParse, NoStatisticsAtAllQuotesTheOutput) {
  auto s = parse_kld_output(kNoBaseFileOutput);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, ErrorKind::parse);
  EXPECT_THAT(s.error().message, HasSubstr("no 'Mean    KLD:' summary")) << s.error().message;
  EXPECT_THAT(s.error().message, HasSubstr("failed to open nonexist.kld")) << s.error().message;
  EXPECT_FALSE(parse_kld_output(""));
}

TEST(KldParse, TooShortACorpusSaysHowShort) {
  auto s = parse_base_output(kTooShortOutput);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, ErrorKind::invalid);
  EXPECT_THAT(s.error().message, HasSubstr("you need at least 256 tokens to evaluate perplexity with a context of 128"))
      << s.error().message;
  EXPECT_THAT(s.error().message, HasSubstr("tokenizes to only 70 tokens")) << s.error().message;
  EXPECT_EQ(parse_kld_output(kTooShortOutput).error().kind, ErrorKind::invalid);
}

TEST(KldParse, BaseRunPerplexity) {
  auto p = parse_base_output(kBaseOutput);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_DOUBLE_EQ(p->ppl, 55078521.2776);
  EXPECT_DOUBLE_EQ(p->ppl_se, 13377271.17955);
  auto none = parse_base_output(without(kBaseOutput, "Final estimate"));
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("Final estimate"));
}

TEST(KldParse, NanUncertaintiesAreKept) {
  auto s = parse_kld_output(
      "Mean PPL(Q)                   :   6.4 ±   0.03\nMean PPL(base)                :   6.2 ±   0.03\n"
      "Mean PPL(Q)/PPL(base)         :   1.02 ±   -nan\nMean    KLD:   0.03 ±   nan\n"
      "RMS Δp    :  0.000 ± nan %\nSame top p: 100.000 ± 0.000 %\n");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(std::isnan(s->mean_kld_se));
  EXPECT_TRUE(std::isnan(s->rms_dp_se));
  EXPECT_DOUBLE_EQ(s->same_top_p, 100.0);
}

TEST(KldArgs, OnlyWhatLlamaPerplexityUnderstandsPassesThrough) {
  const std::vector<std::string> server = {"-fa", "on", "-t", "2", "--jinja", "-np", "1", "-c", "4096",
                                           "--port", "8080", "--no-kv-offload", "-ngl=99", "--metrics",
                                           "-ctk", "q8_0", "--alias", "x", "-ub", "512"};
  EXPECT_EQ(perplexity_args(server),
            (std::vector<std::string>{"-fa", "on", "-t", "2", "--no-kv-offload", "-ngl=99", "-ub", "512"}));
}

// ---- the probe -------------------------------------------------------------------------------

/// Answers from a queue of canned outputs; a base run (--kl-divergence-base without
/// --kl-divergence) writes the file it was given, as the real tool does.
class FakeRunner final : public kvsweep::testing::FakeToolRunner {
 public:
  bool write_base = true;

 private:
  void act(const std::vector<std::string>& argv) override {
    const bool base_run = std::find(argv.begin(), argv.end(), "--kl-divergence") == argv.end();
    if (base_run && write_base) {
      auto it = std::find(argv.begin(), argv.end(), "--kl-divergence-base");
      std::ofstream(*(it + 1)) << "_logits_";
    }
  }
};

class KldProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("kvsweep-kld-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "run");
    std::ofstream(dir / "corpus.txt") << "some text\n";
    ::setenv("KVSWEEP_LLAMA_BIN", dir.c_str(), 1);
    std::ofstream(dir / "llama-perplexity") << "#!/bin/sh\n";
    std::filesystem::permissions(dir / "llama-perplexity", std::filesystem::perms::owner_all);
  }
  void TearDown() override {
    ::unsetenv("KVSWEEP_LLAMA_BIN");
    std::filesystem::remove_all(dir);
  }

  std::unique_ptr<kvsweep::probe::Probe> make(json cfg) {
    cfg["kind"] = "kld";
    return kvsweep::probe::make_kld_probe_with(cfg, ConfigSource{{"t.json", "probes[2]"}, dir}, runner);
  }

  Expected<kvsweep::probe::ItemResult> run(kvsweep::probe::Probe& probe, const std::string& type, bool reference,
                                           kvsweep::probe::ToolRunner::Env env = {}) {
    CellInfo cell;
    cell.env = std::move(env);
    cell.model = "tiny";
    cell.model_path = "/models/tiny.gguf";
    cell.type_k = type;
    cell.type_v = type;
    cell.is_reference = reference;
    cell.server_args = {"-fa", "on", "--jinja", "-t", "2"};
    cell.run_dir = dir / "run";
    kvsweep::testing::FakeApi api = kvsweep::testing::no_api("kld");
    Context ctx{api, cell, nullptr, nullptr};
    return probe.run(probe.items().at(0), ctx);
  }

  std::filesystem::path dir;
  std::shared_ptr<FakeRunner> runner = std::make_shared<FakeRunner>();
};

TEST_F(KldProbeTest, ReferenceCellSavesTheBaseThenScoresItself) {
  runner->outputs = {std::string(kBaseOutput), std::string(kQ4Output), std::string(kQ4Output)};
  auto probe = make({{"corpus", "corpus.txt"}, {"ctx", 128}, {"chunks", 4}});
  ASSERT_EQ(probe->items().size(), 1u);
  EXPECT_EQ(probe->items()[0].key, "kld");
  auto res = run(*probe, "f16", true);
  ASSERT_TRUE(res) << res.error().message;
  const std::string bin = (dir / "llama-perplexity").string();
  const std::string base = (dir / "run" / "kld" / "tiny-base.kld").string();
  ASSERT_EQ(runner->calls.size(), 3u);
  EXPECT_EQ(runner->calls[0],
            (std::vector<std::string>{bin, "-m", "/models/tiny.gguf", "-f", (dir / "corpus.txt").string(), "-c", "128",
                                      "--chunks", "4", "--kl-divergence-base", base, "-ctk", "f16", "-ctv", "f16",
                                      "-fa", "on", "-t", "2"}));
  EXPECT_EQ(runner->calls[1],
            (std::vector<std::string>{bin, "-m", "/models/tiny.gguf", "-c", "128", "--kl-divergence-base", base,
                                      "--kl-divergence", "-ctk", "f16", "-ctv", "f16", "-fa", "on", "-t", "2"}));
  EXPECT_EQ(runner->logs[0], dir / "run" / "kld" / "tiny-f16-f16.log");
  EXPECT_EQ(runner->timeouts[0], std::chrono::seconds(7200));
  EXPECT_DOUBLE_EQ(res->response["base"]["ppl"].get<double>(), 55078521.2776);
  EXPECT_EQ(res->response["base"]["file"], base);
  EXPECT_DOUBLE_EQ(res->metrics["mean_kld"].get<double>(), 0.248995);
  EXPECT_DOUBLE_EQ(res->metrics["same_top_p"].get<double>(), 61.111);
  EXPECT_DOUBLE_EQ(res->metrics["ppl_ratio"].get<double>(), 5.465874);
  EXPECT_DOUBLE_EQ(res->metrics["rms_dp"].get<double>(), 0.001);
  EXPECT_DOUBLE_EQ(res->metrics["mean_kld_se"].get<double>(), 0.010565);
  EXPECT_EQ(res->response["source"], "summary");
  // The noise floor: the same scoring with a micro-batch 8× smaller than the chunk.
  std::vector<std::string> noise = runner->calls[1];
  noise.insert(noise.end(), {"-ub", "16"});
  EXPECT_EQ(runner->calls[2], noise);
  EXPECT_EQ(runner->logs[2], dir / "run" / "kld" / "tiny-f16-f16-noise.log");
  EXPECT_DOUBLE_EQ(res->metrics["noise_mean_kld"].get<double>(), 0.248995);
  EXPECT_TRUE(res->response["noise"]["command"].is_string());
}

TEST_F(KldProbeTest, OtherCellsScoreAgainstTheSavedBase) {
  std::filesystem::create_directories(dir / "run" / "kld");
  std::ofstream(dir / "run" / "kld" / "tiny-base.kld") << "_logits_";
  runner->outputs = {std::string(kQ4Output)};
  auto probe = make({{"corpus", "corpus.txt"}, {"ctx", 128}, {"args", {"-b", "512"}}, {"timeout_s", 60}});
  auto res = run(*probe, "q4_0", false);
  ASSERT_TRUE(res) << res.error().message;
  ASSERT_EQ(runner->calls.size(), 1u);
  const auto& argv = runner->calls[0];
  EXPECT_EQ(std::vector<std::string>(argv.begin() + 1, argv.end()),
            (std::vector<std::string>{"-m", "/models/tiny.gguf", "-c", "128", "--kl-divergence-base",
                                      (dir / "run" / "kld" / "tiny-base.kld").string(), "--kl-divergence", "-ctk",
                                      "q4_0", "-ctv", "q4_0", "-fa", "on", "-t", "2", "-b", "512"}));
  EXPECT_EQ(runner->timeouts[0], std::chrono::seconds(60));
  EXPECT_FALSE(res->response.contains("base"));
  EXPECT_DOUBLE_EQ(res->metrics["mean_kld"].get<double>(), 0.248995);
}

TEST_F(KldProbeTest, ToolsRunWithTheCellsSlotEnvironment) {
  // --parallel-cells: llama-perplexity must land on the cell's device, like its server.
  runner->outputs = {std::string(kBaseOutput), std::string(kQ4Output), std::string(kQ4Output)};
  auto probe = make({{"corpus", "corpus.txt"}});
  const kvsweep::probe::ToolRunner::Env env = {{"CUDA_VISIBLE_DEVICES", "1"}};
  ASSERT_TRUE(run(*probe, "f16", true, env));
  ASSERT_EQ(runner->envs.size(), 3u);
  for (const auto& e : runner->envs) EXPECT_EQ(e, env);
}

TEST_F(KldProbeTest, WithoutABaseFileACellFailsClearly) {
  auto probe = make({{"corpus", "corpus.txt"}});
  auto res = run(*probe, "q8_0", false);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::invalid);
  EXPECT_THAT(res.error().message, HasSubstr("tiny-base.kld")) << res.error().message;
  EXPECT_TRUE(runner->calls.empty());
}

TEST_F(KldProbeTest, AFailedBaseRunRemovesItsPartialFile) {
  runner->outputs = {std::string(kTooShortOutput)};
  auto probe = make({{"corpus", "corpus.txt"}, {"ctx", 128}});
  auto res = run(*probe, "f16", true);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::invalid);
  EXPECT_THAT(res.error().message, HasSubstr("you need at least 256 tokens"));
  EXPECT_FALSE(std::filesystem::exists(dir / "run" / "kld" / "tiny-base.kld"));
  EXPECT_EQ(runner->calls.size(), 1u);
}

TEST_F(KldProbeTest, AnExitZeroThatLostItsLastLinesIsRunAgain) {
  // llama.cpp's logger is never flushed at exit: under load the tool can finish (exit 0) without the
  // lines the probe parses. Such a run is repeated, up to three runs in all.
  const std::string base(kBaseOutput);
  const std::string cut = base.substr(0, base.find("Final estimate"));
  ASSERT_NE(cut.size(), base.size());
  runner->outputs = {cut, base, std::string(kQ4Output), std::string(kQ4Output)};
  auto probe = make({{"corpus", "corpus.txt"}, {"ctx", 128}});
  auto res = run(*probe, "f16", true);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(runner->calls.size(), 4u);
  EXPECT_EQ(runner->calls[0], runner->calls[1]);

  // Three cut runs in a row are a parse error that says how many runs it took.
  runner->calls.clear();
  runner->outputs = {cut, cut, cut};
  auto failed = run(*probe, "f16", true);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().kind, ErrorKind::parse);
  EXPECT_THAT(failed.error().message, HasSubstr("3 runs, each exit 0"));
  EXPECT_EQ(runner->calls.size(), 3u);
}

TEST_F(KldProbeTest, AnOutputCutInsideTheChunkTableIsRunAgainNotATruncatedBase) {
  // The logger can lose the lines after any row (a self-gate run saw "computed 2 of the 4 chunks" on a
  // whole base file, recorded as a process failure): rows short of the announced count, with neither a
  // failure line nor a summary after them, are a lost tail, run again like any other.
  const std::string q4(kQ4Output);
  const std::string cut = q4.substr(0, q4.find("   3 "));
  ASSERT_NE(cut.size(), q4.size());
  runner->outputs = {std::string(kBaseOutput), cut, q4, q4};
  auto probe = make({{"corpus", "corpus.txt"}, {"ctx", 128}});
  auto res = run(*probe, "f16", true);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(runner->calls.size(), 4u);
  EXPECT_EQ(runner->calls[1], runner->calls[2]);
  const auto lost = parse_kld_output(cut);
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().kind, ErrorKind::parse);
  EXPECT_THAT(lost.error().message, HasSubstr("computed 2 of the 4 chunks it announced"));
  // A summary over part of the chunks, or a failure line, is the tool's own early stop: not retried.
  const auto partial = parse_kld_output(cut + "\nMean    KLD:   0.235 ±   0.012\n");
  ASSERT_FALSE(partial);
  EXPECT_EQ(partial.error().kind, ErrorKind::process);
  const auto stopped = parse_kld_output(cut + "failed reading log-probs for chunk 3\n");
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().kind, ErrorKind::process);
}

TEST_F(KldProbeTest, ANonZeroExitIsAProcessErrorWithTheTail) {
  std::filesystem::create_directories(dir / "run" / "kld");
  std::ofstream(dir / "run" / "kld" / "tiny-base.kld") << "_logits_";
  runner->outputs = {"error: invalid argument: --bogus\n"};
  runner->exit_code = 1;
  auto probe = make({{"corpus", "corpus.txt"}});
  auto res = run(*probe, "q4_0", false);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::process);
  EXPECT_THAT(res.error().message, HasSubstr("invalid argument: --bogus")) << res.error().message;
}

TEST_F(KldProbeTest, AGeneratedCorpusIsWrittenIntoTheRunDirectory) {
  runner->outputs = {std::string(kBaseOutput), std::string(kQ4Output), std::string(kQ4Output)};
  auto probe = make({{"name", "kld-rb"}, {"corpus", {{"random_bodies", {{"functions", 2}, {"seed", 3}}}}}});
  auto res = run(*probe, "f16", true);
  ASSERT_TRUE(res) << res.error().message;
  const auto corpus = dir / "run" / "kld" / "kld-rb-corpus.txt";
  ASSERT_TRUE(std::filesystem::exists(corpus));
  EXPECT_GT(std::filesystem::file_size(corpus), 100u);
  EXPECT_EQ(runner->calls[0][4], corpus.string());
  // A probe not named "kld" keeps its own base file.
  EXPECT_EQ(runner->calls[0][10], (dir / "run" / "kld" / "tiny-kld-rb-base.kld").string());
}

TEST_F(KldProbeTest, WithoutACorpusTheBuiltInEnglishTextIsWrittenAndNamedByItsHash) {
  runner->outputs = {std::string(kBaseOutput), std::string(kQ4Output), std::string(kQ4Output)};
  auto probe = make(json::object());
  EXPECT_TRUE(probe->inputs().empty());  // no file of the user's: the text is part of kvsweep
  const json corpus = probe->items().at(0).spec["corpus"];
  EXPECT_EQ(corpus["builtin"], "english");
  EXPECT_EQ(corpus["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(make({{"corpus", {{"builtin", "english"}}}})->items().at(0).spec, probe->items().at(0).spec);
  auto res = run(*probe, "f16", true);
  ASSERT_TRUE(res) << res.error().message;
  const auto written = dir / "run" / "kld" / "kld-corpus.txt";
  EXPECT_EQ(runner->calls[0][4], written.string());
  std::ifstream in(written);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GT(text.size(), 10000u);
  EXPECT_THAT(text, HasSubstr("The lighthouse stood at the end of a narrow spit of rock"));
}

TEST_F(KldProbeTest, DocumentsCutTheCorpusIntoItemsEachWithItsOwnBase) {
  runner->outputs = {std::string(kBaseOutput), std::string(kQ4Output), std::string(kQ4Output)};
  auto probe = make({{"documents", 3}, {"ctx", 128}});
  const auto items = probe->items();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[2].key, "d2");
  EXPECT_EQ(items[2].spec["document"], 2);
  EXPECT_EQ(items[2].spec["documents"], 3);
  CellInfo cell;
  cell.model = "tiny";
  cell.model_path = "/models/tiny.gguf";
  cell.type_k = cell.type_v = "f16";
  cell.is_reference = true;
  cell.run_dir = dir / "run";
  kvsweep::testing::FakeApi api = kvsweep::testing::no_api("kld");
  Context ctx{api, cell, nullptr, nullptr};
  auto res = probe->run(items[1], ctx);
  ASSERT_TRUE(res) << res.error().message;
  const auto written = dir / "run" / "kld" / "kld-d1.txt";
  EXPECT_EQ(runner->calls[0][4], written.string());
  EXPECT_EQ(runner->calls[0][10], (dir / "run" / "kld" / "tiny-d1-base.kld").string());
  EXPECT_EQ(runner->logs[1], dir / "run" / "kld" / "tiny-f16-f16-d1.log");
  // The three documents are the text, cut at line ends into about equal thirds.
  const auto parts = kvsweep::corpus::split_documents(kvsweep::corpus::english_text(), 3);
  ASSERT_EQ(parts.size(), 3u);
  std::string joined;
  for (const auto& p : parts) {
    EXPECT_TRUE(p.ends_with("\n")) << p.substr(0, 40);
    EXPECT_GT(p.size(), kvsweep::corpus::english_text().size() / 5);
    joined += p;
  }
  EXPECT_EQ(joined, kvsweep::corpus::english_text());
  std::ifstream in(written);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), parts[1]);
  // A text with fewer lines than documents cannot be cut so: the item says to use fewer.
  EXPECT_EQ(kvsweep::corpus::split_documents("one line\n", 2).size(), 1u);
  std::ofstream(dir / "short.txt") << "one line\n";
  auto too_many = make({{"corpus", "short.txt"}, {"documents", 2}});
  auto failed = too_many->run(too_many->items()[0], ctx);
  ASSERT_FALSE(failed);
  EXPECT_THAT(failed.error().message, HasSubstr("too few lines to cut into 2 documents"));
}

TEST_F(KldProbeTest, AMissingBinaryIsAnItemError) {
  ::setenv("KVSWEEP_LLAMA_BIN", (dir / "nowhere").c_str(), 1);
  auto probe = make({{"corpus", "corpus.txt"}, {"binary", "llama-perplexity-that-does-not-exist"}});
  auto res = run(*probe, "f16", true);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::process);
  EXPECT_THAT(res.error().message, HasSubstr("KVSWEEP_LLAMA_BIN"));
}

TEST_F(KldProbeTest, ConfigErrorsNameTheKey) {
  auto error = [&](json cfg) {
    try {
      make(std::move(cfg));
    } catch (const FatalError& e) {
      return e.message;
    }
    return std::string();
  };
  EXPECT_THAT(error({{"corpus", {{"builtin", "french"}}}}), HasSubstr("probes[2].corpus: expected {\"builtin\": \"english\"}"));
  EXPECT_THAT(error({{"corpus", "absent.txt"}}), HasSubstr("probes[2].corpus: "));
  EXPECT_THAT(error({{"corpus", "absent.txt"}}), HasSubstr("absent.txt: no such file"));
  const std::string typo = error({{"corpus", "corpus.txt"}, {"chunk", 3}});
  EXPECT_THAT(typo, HasSubstr("chunks")) << typo;
  EXPECT_THAT(error({{"corpus", "corpus.txt"}, {"chunks", 0}}), HasSubstr("probes[2].chunks"));
  EXPECT_THAT(error({{"corpus", {{"random_bodies", {{"functons", 2}}}}}}), HasSubstr("probes[2].corpus.random_bodies"));
}

}  // namespace

TEST_F(KldProbeTest, DeclaresExactlyTheMetricsItEmitsWithDiagnosticsApart) {
  runner->outputs = {std::string(kBaseOutput), std::string(kQ4Output), std::string(kQ4Output)};
  auto probe = make({{"corpus", "corpus.txt"}, {"ctx", 128}, {"chunks", 4}});
  auto res = run(*probe, "f16", true);
  ASSERT_TRUE(res) << res.error().message;
  kvsweep::probe::testing::expect_declarations_match(*probe, res->metrics);
  EXPECT_TRUE(probe->deterministic());
  // Standard errors and the perplexities themselves are reported, never gated as quality.
  const auto specs = probe->metrics();
  for (const char* diagnostic : {"mean_kld_se", "same_top_p_se", "ppl_ratio_se", "rms_dp_se", "ppl_q", "ppl_base"}) {
    EXPECT_EQ(kvsweep::probe::find_metric(specs, diagnostic)->role, kvsweep::probe::MetricRole::diagnostic) << diagnostic;
  }
  // rms_dp is continuous (0 on the reference is not a pass/fail value) and lower is better.
  EXPECT_EQ(kvsweep::probe::find_metric(specs, "rms_dp")->kind, kvsweep::probe::MetricKind::continuous);
  EXPECT_EQ(kvsweep::probe::find_metric(specs, "rms_dp")->direction, kvsweep::probe::Direction::lower_better);
}
