// The crashes kvsweep recognises (process/known_crash): llama.cpp's AMX matrix-multiply path, read
// from a real crash log (tests/data/amx/, captured on an AMX host; its README says how), and the
// host and build facts the dry run and the messages rest on.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/process/known_crash.hpp"
#include "kvsweep/server/attention_path.hpp"

using ::testing::HasSubstr;
using ::testing::Not;
using kvsweep::process::LlamaProgram;
using kvsweep::process::known_crash;

namespace {

std::string data(const std::string& relative) {
  std::ifstream in(std::filesystem::path(KVSWEEP_TEST_DATA) / relative, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The real llama-server log of SmolLM2 on an AMX host, built with AMX: it dies while warming up (here by
// signal 4, SIGILL: this KVM guest reports AMX but faults on its tiles; ggml-org/llama.cpp#20824 reports signal 11).
std::string amx_crash_log() { return data("amx/llama-server-smollm2-amx-crash.log"); }

TEST(KnownCrash, TheRealAmxCrashLogNamesTheCauseAndNoRepackInOneLine) {
  const std::string log = amx_crash_log();
  ASSERT_FALSE(log.empty()) << "tests/data/amx/llama-server-smollm2-amx-crash.log is missing";
  EXPECT_TRUE(kvsweep::process::log_shows_amx_buffer(log));
  const auto known = known_crash(LlamaProgram::server, log, /*crashed=*/true, /*host_amx=*/true);
  ASSERT_TRUE(known);
  EXPECT_THAT(*known, HasSubstr("AMX matrix-multiply path"));
  EXPECT_THAT(*known, HasSubstr("ggml-org/llama.cpp#20824"));
  EXPECT_THAT(*known, HasSubstr("\"--no-repack\" to server.args"));
  EXPECT_THAT(*known, HasSubstr("-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"));
  EXPECT_EQ(known->find('\n'), std::string::npos) << "one line";
}

TEST(KnownCrash, EachProgramGetsItsOwnRemedy) {
  const std::string log = amx_crash_log();
  const auto ollama = known_crash(LlamaProgram::ollama, log, true, true);
  ASSERT_TRUE(ollama);
  EXPECT_THAT(*ollama, HasSubstr("\"LLAMA_ARG_REPACK\": \"0\" in server.env"));
  const auto perplexity = known_crash(LlamaProgram::perplexity, log, true, true);
  ASSERT_TRUE(perplexity);
  EXPECT_THAT(*perplexity, HasSubstr("kld passes it to llama-perplexity"));
  const auto bench = known_crash(LlamaProgram::bench, log, true, true);
  ASSERT_TRUE(bench);
  EXPECT_THAT(*bench, HasSubstr("llama-bench has no --no-repack"));
  EXPECT_THAT(*bench, Not(HasSubstr("server.args")));
}

TEST(KnownCrash, AnExitOfItsOwnOrALogWithoutTheAmxBufferIsNotTheAmxCrash) {
  EXPECT_FALSE(known_crash(LlamaProgram::server, amx_crash_log(), /*crashed=*/false, true));
  // A CUDA build compiles AMX in (system_info says AMX_INT8 = 1) but keeps the weights on the GPU.
  const std::string cuda = data("cuda/llama-server-tiny-f16-f16.log");
  ASSERT_FALSE(cuda.empty());
  EXPECT_TRUE(kvsweep::process::log_shows_amx_build(cuda));
  EXPECT_FALSE(kvsweep::process::log_shows_amx_buffer(cuda));
  EXPECT_FALSE(known_crash(LlamaProgram::server, cuda, true, true));
  // llama-bench logs nothing: only a host with AMX makes its signal the likely AMX crash.
  const auto likely = known_crash(LlamaProgram::bench, "", true, true);
  ASSERT_TRUE(likely);
  EXPECT_THAT(*likely, HasSubstr("likely"));
  EXPECT_FALSE(known_crash(LlamaProgram::bench, "", true, false));
}

TEST(KnownCrash, OllamasWordsForARunnerKilledByASignal) {
  EXPECT_TRUE(kvsweep::process::ollama_runner_crashed(
      "HTTP 500: llama-server process has terminated: signal: segmentation fault"));
  EXPECT_FALSE(kvsweep::process::ollama_runner_crashed("HTTP 404: model 'tiny' not found"));
}

TEST(HostAmx, CpuinfoFlagsAreMatchedWholeWords) {
  EXPECT_TRUE(kvsweep::process::cpu_has_amx("flags\t\t: fpu avx512f amx_bf16 avx512_fp16 amx_tile amx_int8 flush_l1d\n"));
  EXPECT_TRUE(kvsweep::process::cpu_has_amx("flags\t\t: fpu amx_int8\n"));
  EXPECT_FALSE(kvsweep::process::cpu_has_amx("flags\t\t: fpu avx2 avx512f avx512_vnni\n"));
  EXPECT_FALSE(kvsweep::process::cpu_has_amx("flags\t\t: fpu amx_int8x\n"));
}

TEST(HostAmx, TheDryRunNoteSaysWhetherTheBuildCanTakeThePath) {
  EXPECT_EQ(kvsweep::process::amx_host_note(false, "/b/llama-server", true), "");
  const std::string out = kvsweep::process::amx_host_note(true, "/b/llama-server", false);
  EXPECT_THAT(out, HasSubstr("this CPU has AMX"));
  EXPECT_THAT(out, HasSubstr("has no AMX code"));
  const std::string in = kvsweep::process::amx_host_note(true, "/b/llama-server", true);
  EXPECT_THAT(in, HasSubstr("compiles AMX in and may take that path"));
  EXPECT_THAT(in, HasSubstr("--no-repack"));
  EXPECT_THAT(kvsweep::process::amx_host_note(true, "/b/llama-server", std::nullopt), HasSubstr("could not be read"));
}

TEST(HostAmx, ABinaryHasAmxWhenItsBytesNameTheAmxBackend) {
  const auto dir = std::filesystem::temp_directory_path() / ("kvsweep-amx-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "with", std::ios::binary) << std::string("\x7f" "ELF\0\0", 6) << "ggml_backend_amx_buffer_type";
  std::ofstream(dir / "without", std::ios::binary) << std::string("\x7f" "ELF\0\0", 6) << "ggml_backend_cpu_init";
  EXPECT_EQ(kvsweep::process::binary_has_amx(dir / "with"), std::optional<bool>(true));
  EXPECT_EQ(kvsweep::process::binary_has_amx(dir / "without"), std::optional<bool>(false));
  EXPECT_EQ(kvsweep::process::binary_has_amx(dir / "absent"), std::nullopt);
  std::filesystem::remove_all(dir);
}

TEST(HostCompute, SystemInfoGivesTheCpuFeaturesTheKernelsAreBuiltWith) {
  const auto facts = kvsweep::server::parse_attention_facts(
      "0.00.1 I system_info: n_threads = 2 (n_threads_batch = 2) / 2 | CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | "
      "AVX512 = 1 | AMX_INT8 = 0 | LLAMAFILE = 1 | \n");
  EXPECT_EQ(facts.backends, (std::vector<std::string>{"CPU"}));
  EXPECT_EQ(facts.cpu_features, (std::vector<std::string>{"SSE3", "AVX", "AVX2", "AVX512", "LLAMAFILE"}));
  // A CUDA build: the CUDA section's fields are not CPU features.
  const auto cuda = kvsweep::server::parse_attention_facts(data("cuda/llama-server-tiny-f16-f16.log"));
  EXPECT_EQ(cuda.backends, (std::vector<std::string>{"CUDA", "CPU"}));
  EXPECT_THAT(cuda.cpu_features, ::testing::Contains("AVX512"));
  EXPECT_THAT(cuda.cpu_features, Not(::testing::Contains("USE_GRAPHS")));
}

}  // namespace
