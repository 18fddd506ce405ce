// The copy model's construction, piece by piece, without a server (the integration test
// CopyModel.* runs it on the real llama-server).
#include "kvsweep/model/copy_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "fake_vocab.hpp"
#include "kvsweep/model/gguf.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;

namespace kvsweep::model {
namespace {

using kvsweep::testing::fake_vocab;
using kvsweep::testing::fake_vocab_size;
using kvsweep::testing::slurp;
using kvsweep::testing::temp_file;

TEST(CopyModel, PositionalKernelPeaksAtItsOffsetAboveEverySidelobe) {
  const CopyModelOptions o;  // 64 fast pairs
  const std::vector<double> omegas = copy_model_frequencies(o);
  ASSERT_EQ(omegas.size(), 64u);
  for (double w : omegas) {
    EXPECT_GE(w, 0.2 - 1e-6);
    EXPECT_LE(w, std::numbers::pi - 0.2 + 1e-6);
  }
  EXPECT_DOUBLE_EQ(positional_kernel(omegas, 0), 64.0);
  // The stated margin: over 32768 positions no sidelobe reaches 28 (measured: see
  // src/model/copy_model.cpp), so with B1 = 0.8 the wanted offset leads every other position
  // by more than 0.8 × 36 ≈ 29 logits, enough to keep 32K competitors below 1e-8 of its weight.
  const double side = max_sidelobe(omegas, 32768);
  EXPECT_LT(side, 28.0);
  EXPECT_GT(side, 8.0);  // irregular frequencies: a random-like sidelobe, not a degenerate flat kernel
  // Near the peak, where the previous-token heads of neighbouring offsets compete, it is lower still.
  for (std::int64_t d = 1; d <= 8; ++d) EXPECT_LT(std::abs(positional_kernel(omegas, d)), 20.0) << d;
}

TEST(CopyModel, EvenlySpacedFrequenciesWouldAlias) {
  // Why the frequencies are irregular: evenly spaced ones make the kernel come back to its peak.
  std::vector<double> even;
  for (int i = 0; i < 64; ++i) even.push_back(2 * std::numbers::pi * (i + 1) / 128.0);
  EXPECT_NEAR(positional_kernel(even, 128), 64.0, 1e-6);
}

TEST(CopyModel, CodesAreUnitVectorsThatDifferPerTokenAndRepeatPerSeed) {
  CopyModelOptions o;
  const auto a = copy_model_code(o, 17);
  const auto b = copy_model_code(o, 18);
  ASSERT_EQ(a.size(), 64u);
  double na = 0, dot = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    na += double{a[i]} * a[i];
    dot += double{a[i]} * b[i];
  }
  EXPECT_NEAR(na, 1.0, 1e-6);
  EXPECT_LT(std::abs(dot), 0.6);  // cross-talk of random 64-dim codes is ~N(0, 1/64)
  EXPECT_EQ(copy_model_code(o, 17), a);
  o.seed = 2;
  EXPECT_NE(copy_model_code(o, 17), a);
}

TEST(CopyModel, ChecksItsKnobs) {
  CopyModelOptions o;
  EXPECT_EQ(check_copy_model(o), "");
  o.match_length = 0;
  EXPECT_THAT(check_copy_model(o), HasSubstr("--match-length"));
  o = {};
  o.code_dims = 48;
  EXPECT_THAT(check_copy_model(o), HasSubstr("--code-dims"));
  o = {};
  o.match_length = 5;
  o.code_dims = 32;  // 2·64 + 5·32 = 288: not a multiple of 64
  EXPECT_THAT(check_copy_model(o), HasSubstr("multiple of 64"));
  o = {};
  o.outlier = -1;
  EXPECT_THAT(check_copy_model(o), HasSubstr("--outlier"));
}

class CopyModelFile : public kvsweep::testing::VocabTest {
 protected:
  std::filesystem::path write(CopyModelOptions o) {
    const auto out = temp_file(".copy.gguf");
    m_outputs.push_back(out);
    o.vocab = m_vocab;
    auto written = write_copy_model(out, o);
    EXPECT_TRUE(written) << written.error().message;
    return out;
  }
};

TEST_F(CopyModelFile, SameArgumentsSameBytesOtherKnobsOtherBytes) {
  const std::string a = slurp(write({}));
  EXPECT_EQ(slurp(write({})), a);
  CopyModelOptions o;
  o.outlier = 4;
  EXPECT_NE(slurp(write(o)), a);
  o = {};
  o.seed = 2;
  EXPECT_NE(slurp(write(o)), a);
}

TEST_F(CopyModelFile, DeclaresTheShapeLlamaCppNeeds) {
  auto meta = read_gguf(write({}));
  ASSERT_TRUE(meta) << meta.error().message;
  const auto u32 = [&](const char* key) { return std::get<std::uint32_t>(meta->find(key)->data); };
  // 1 + (6 + 2)·64 = 513 residual dims, padded to 544; head 2·64 + 6·64 = 512; one KV head.
  EXPECT_EQ(u32("llama.embedding_length"), 544u);
  EXPECT_EQ(u32("llama.attention.key_length"), 512u);
  EXPECT_EQ(u32("llama.attention.value_length"), 512u);
  EXPECT_EQ(u32("llama.rope.dimension_count"), 512u);
  EXPECT_EQ(u32("llama.attention.head_count"), 6u);
  EXPECT_EQ(u32("llama.attention.head_count_kv"), 1u);
  EXPECT_EQ(u32("llama.vocab_size"), fake_vocab_size);
  EXPECT_EQ(std::get<float>(meta->find("llama.rope.freq_base")->data), 1.0f);
  bool rope_freqs = false;
  for (const auto& t : meta->tensors) {
    if (t.name == "rope_freqs.weight") {
      rope_freqs = true;
      EXPECT_EQ(t.shape, (std::vector<std::uint64_t>{256}));
      EXPECT_EQ(t.type, TensorType::f32);
    }
  }
  EXPECT_TRUE(rope_freqs);
}

TEST_F(CopyModelFile, BadKnobsAndAMissingVocabAreErrors) {
  CopyModelOptions o;
  o.code_dims = 40;
  o.vocab = m_vocab;
  auto r = write_copy_model(temp_file(".bad.gguf"), o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("--code-dims"));
  o = {};
  o.vocab = temp_file(".missing.gguf");
  r = write_copy_model(temp_file(".bad.gguf"), o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("vocab"));
}

}  // namespace
}  // namespace kvsweep::model
