// The attention path and buffers read from real llama-server logs (tests/data/cuda/README.md says
// which are real and which were constructed from a real log), and the path decided across cells.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kvsweep/server/attention_path.hpp"
#include "kvsweep/server/backend.hpp"
#include "kvsweep/sweep/run/attention_paths.hpp"

using ::testing::HasSubstr;

namespace kvsweep::server {
namespace {

std::string fixture(const std::string& name) {
  const auto path = std::filesystem::path(KVSWEEP_TEST_DATA) / "cuda" / name;
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const DeviceMemory* device(const AttentionFacts& f, const std::string& name) {
  for (const auto& m : f.memory)
    if (m.device == name) return &m;
  return nullptr;
}

TEST(AttentionPath, MixedPairOnTheDefaultCudaBuildIsConvertedWithItsRemedy) {
  const EffectiveKv e = parse_effective_kv(fixture("llama-server-tiny-q8_0-q4_0.log"));
  EXPECT_EQ(e.attention.converted, "q8_0-q4_0");
  EXPECT_EQ(e.path.path, AttentionPath::converted);
  EXPECT_THAT(e.path.reason, HasSubstr("add q8_0-q4_0 to GGML_CUDA_FA_QUANTS")) << e.path.reason;
  EXPECT_THAT(e.path.reason, HasSubstr("or use q8_0/q8_0")) << e.path.reason;
}

TEST(AttentionPath, ReadsTheBuildAndTheBuffersPerDevice) {
  const AttentionFacts f = parse_attention_facts(fixture("llama-server-tiny-q8_0-q4_0.log"));
  EXPECT_EQ(f.devices, (std::vector<std::string>{"CUDA0", "CPU"}));
  EXPECT_EQ(f.backends, (std::vector<std::string>{"CUDA", "CPU"}));
  EXPECT_EQ(f.fa_quants, "q4_0-q4_0,q8_0-q8_0,f16-f16,bf16-bf16");
  EXPECT_TRUE(f.gpu_build());
  EXPECT_EQ(f.head_dim_k, 64);
  EXPECT_EQ(f.head_dim_v, 64);
  EXPECT_EQ(f.splits.pp, 2);
  EXPECT_EQ(f.splits.tg, 2);
  const DeviceMemory* gpu = device(f, "CUDA0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_TRUE(gpu->gpu);
  EXPECT_DOUBLE_EQ(gpu->model_mib, 17.88);
  EXPECT_DOUBLE_EQ(gpu->kv_mib, 1.63);
  EXPECT_DOUBLE_EQ(gpu->compute_mib, 8.54);
  const DeviceMemory* mapped = device(f, "CPU_Mapped");
  ASSERT_NE(mapped, nullptr);
  EXPECT_FALSE(mapped->gpu);
  EXPECT_DOUBLE_EQ(mapped->model_mib, 15.62);
  const DeviceMemory* pinned = device(f, "CUDA_Host");
  ASSERT_NE(pinned, nullptr);
  EXPECT_FALSE(pinned->gpu) << "pinned host memory is not the GPU's";
  EXPECT_DOUBLE_EQ(pinned->compute_mib, 5.04);
  EXPECT_EQ(f.memory.size(), 3u);
}

TEST(AttentionPath, SymmetricF16HasItsVectorKernel) {
  const EffectiveKv e = parse_effective_kv(fixture("llama-server-tiny-f16-f16.log"));
  EXPECT_EQ(e.path.path, AttentionPath::vec) << e.path.reason;
  EXPECT_TRUE(e.attention.converted.empty());
  const auto j = to_json(e);
  EXPECT_EQ(j.at("path"), "vec");
  EXPECT_EQ(j.at("attention").at("fa_quants"), "q4_0-q4_0,q8_0-q8_0,f16-f16,bf16-bf16");
  EXPECT_EQ(j.at("memory").size(), 3u);
}

// Head size 512 never takes the vector kernel (fattn.cu); the MMA kernel converts for every quantized
// pair and logs nothing, and FA_QUANTS cannot change that: unknown, with the reason.
TEST(AttentionPath, CopyModelHeadSize512IsUnknownNotConverted) {
  const EffectiveKv e = parse_effective_kv(fixture("llama-server-copy-rot-off-q4_0-q4_0.log"));
  EXPECT_EQ(e.attention.head_dim_k, 512);
  EXPECT_EQ(e.path.path, AttentionPath::unknown);
  EXPECT_THAT(e.path.reason, HasSubstr("head size 512")) << e.path.reason;
  const DeviceMemory* gpu = device(e.attention, "CUDA0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_DOUBLE_EQ(gpu->model_mib, 48.29);
  EXPECT_DOUBLE_EQ(gpu->kv_mib, 144.00);
  EXPECT_DOUBLE_EQ(gpu->compute_mib, 405.20);
}

TEST(AttentionPath, MoreSplitsThanTheReferenceWithoutAWarningIsFallback) {
  // Constructed from the real q8_0-q4_0 log: an older build (no FA_QUANTS), no warning, 6 splits.
  const EffectiveKv cell = parse_effective_kv(fixture("llama-server-tiny-q8_0-q4_0-fallback.log"));
  const EffectiveKv ref = parse_effective_kv(fixture("llama-server-tiny-f16-f16-older-build.log"));
  EXPECT_EQ(cell.path.path, AttentionPath::unknown) << "alone, the log cannot tell";
  const PathVerdict v = against_reference(cell.path, cell.attention.splits, ref.attention.splits, "q8_0", "q4_0", "");
  EXPECT_EQ(v.path, AttentionPath::fallback);
  EXPECT_EQ(to_string(v.path), "fallback?");
  EXPECT_THAT(v.reason, HasSubstr("6 splits against the reference's 2")) << v.reason;
  EXPECT_THAT(v.reason, HasSubstr("add q8_0-q4_0 to GGML_CUDA_FA_QUANTS")) << v.reason;
  // The same splits as the reference's: nothing moved.
  EXPECT_EQ(against_reference(ref.path, ref.attention.splits, ref.attention.splits, "f16", "f16", "").path,
            AttentionPath::unknown);
  // A converted cell stays converted: the warning is the better evidence.
  const EffectiveKv converted = parse_effective_kv(fixture("llama-server-tiny-q8_0-q4_0.log"));
  EXPECT_EQ(against_reference(converted.path, {6, 6}, {2, 2}, "q8_0", "q4_0", "").path, AttentionPath::converted);
}

TEST(AttentionPath, CpuBuildRunsTheAttentionOnTheCpu) {
  const EffectiveKv e = parse_effective_kv(fixture("llama-server-cpu-tiny-q8_0-q4_0.log"));
  EXPECT_FALSE(e.attention.gpu_build());
  EXPECT_EQ(e.path.path, AttentionPath::cpu) << e.path.reason;
  ASSERT_FALSE(e.attention.memory.empty());
  for (const auto& m : e.attention.memory) EXPECT_FALSE(m.gpu) << m.device;
  const DeviceMemory* cpu = device(e.attention, "CPU");
  ASSERT_NE(cpu, nullptr);
  EXPECT_GT(cpu->kv_mib, 0.0);
}

TEST(AttentionPath, FaQuantsListAllAndAMissingWarning) {
  AttentionFacts f;
  f.devices = {"CUDA0", "CPU"};
  f.backends = {"CUDA", "CPU"};
  f.head_dim_k = f.head_dim_v = 128;
  f.fa_quants = "all";
  EXPECT_EQ(attention_path(f, "q8_0", "q4_0", "enabled").path, AttentionPath::vec);
  f.fa_quants = "q8_0-q4_0, q4_0-q4_0";
  EXPECT_EQ(attention_path(f, "q8_0", "q4_0", "enabled").path, AttentionPath::vec);
  EXPECT_EQ(attention_path(f, "f16", "f16", "enabled").path, AttentionPath::vec) << "f16-f16 is always compiled";
  // Not compiled and no warning (--no-warmup: it comes at the first decode step): still converted.
  EXPECT_EQ(attention_path(f, "q5_0", "q5_0", "enabled").path, AttentionPath::converted);
  // No CUDA kernel at all for iq4_nl: the remedy cannot be a compile option.
  const PathVerdict iq = attention_path(f, "iq4_nl", "iq4_nl", "enabled");
  EXPECT_EQ(iq.path, AttentionPath::unknown);
  EXPECT_EQ(path_remedy("iq4_nl", "iq4_nl", "q4_0-q4_0,q8_0-q8_0"),
            "no CUDA FlashAttention kernel exists for iq4_nl-iq4_nl; use q8_0/q8_0");
  EXPECT_THAT(path_remedy("q5_0", "q4_0", "q4_0-q4_0"), HasSubstr("or use q4_0/q4_0"))
      << "K's own pair is not compiled, V's is";
  EXPECT_EQ(attention_path(f, "q8_0", "q4_0", "disabled").path, AttentionPath::unknown);
  EXPECT_EQ(attention_path(AttentionFacts{}, "q8_0", "q4_0", "enabled").path, AttentionPath::unknown);
}

TEST(AttentionPath, ManifestDecidesFallbackAgainstTheReferenceInAnyOrder) {
  const auto entry = [](const std::string& log, const std::string& k, const std::string& v, bool ref) {
    return *sweep::ManifestCell::from_json(nlohmann::json{{"model", "tiny"}, {"type_k", k}, {"type_v", v},
                                                          {"is_reference", ref},
                                                          {"effective", to_json(parse_effective_kv(fixture(log)))}});
  };
  std::vector<sweep::ManifestCell> cells = {entry("llama-server-tiny-q8_0-q4_0-fallback.log", "q8_0", "q4_0", false),
                                            entry("llama-server-tiny-f16-f16-older-build.log", "f16", "f16", true)};
  sweep::resolve_attention_paths(cells);
  EXPECT_EQ(cells[0].effective->path, "fallback?");
  EXPECT_EQ(cells[1].effective->path, "unknown");
  const nlohmann::json once = {to_json(cells[0]), to_json(cells[1])};
  sweep::resolve_attention_paths(cells);
  EXPECT_EQ(nlohmann::json({to_json(cells[0]), to_json(cells[1])}), once) << "resolving again changes nothing";
  // Without the reference cell (not run yet) the cell keeps its own verdict.
  std::vector<sweep::ManifestCell> alone = {entry("llama-server-tiny-q8_0-q4_0-fallback.log", "q8_0", "q4_0", false)};
  sweep::resolve_attention_paths(alone);
  EXPECT_EQ(alone[0].effective->path, "unknown");
}

}  // namespace
}  // namespace kvsweep::server
