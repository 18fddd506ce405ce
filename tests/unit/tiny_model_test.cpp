#include "kvsweep/model/tiny_model.hpp"

#include "fake_vocab.hpp"
#include "temp_file.hpp"
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "kvsweep/model/gguf.hpp"

using ::testing::HasSubstr;

namespace kvsweep::model {
namespace {

using kvsweep::testing::fake_vocab;
using kvsweep::testing::fake_vocab_size;
using kvsweep::testing::slurp;
using kvsweep::testing::temp_file;

class TinyModelTest : public kvsweep::testing::VocabTest {
 protected:

  // Writes a tiny model with `seed` and returns its bytes.
  std::string build(std::uint64_t seed, const std::string& suffix, std::uint32_t context_length = 131072) {
    const auto out = temp_file(suffix);
    m_outputs.push_back(out);
    TinyModelOptions opts;
    opts.seed = seed;
    opts.vocab = m_vocab;
    opts.context_length = context_length;
    auto written = write_tiny_model(out, opts);
    EXPECT_TRUE(written) << written.error().message;
    return slurp(out);
  }

};

std::optional<std::uint32_t> u32_of(const GgufFile& file, std::string_view key) {
  const Value* v = file.find(key);
  if (v == nullptr || v->type() != ValueType::u32) {
    return std::nullopt;
  }
  return std::get<std::uint32_t>(v->data);
}

const TensorInfo* tensor_named(const GgufFile& file, std::string_view name) {
  for (const TensorInfo& t : file.tensors) {
    if (t.name == name) {
      return &t;
    }
  }
  return nullptr;
}

TEST_F(TinyModelTest, SameSeedSameBytes) {
  const std::string a = build(1, ".a.gguf");
  const std::string b = build(1, ".b.gguf");
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == b);
}

TEST_F(TinyModelTest, OtherSeedOtherWeights) {
  const std::string a = build(1, ".a.gguf");
  const std::string b = build(2, ".b.gguf");
  ASSERT_EQ(a.size(), b.size());
  auto meta = read_gguf(m_outputs[0]);
  ASSERT_TRUE(meta) << meta.error().message;
  // Not only the header: every random tensor's data differs between seeds.
  for (const TensorInfo& t : meta->tensors) {
    if (t.name.find("norm") != std::string::npos) {
      continue;
    }
    const auto bytes = tensor_bytes(t.type, t.shape).value();
    const auto at = meta->data_offset + t.offset;
    EXPECT_NE(a.compare(at, bytes, b, at, bytes), 0) << t.name;
  }
}

TEST_F(TinyModelTest, MetadataDescribesA2LayerGqaLlama) {
  build(7, ".gguf", 4096);
  auto meta = read_gguf(m_outputs[0]);
  ASSERT_TRUE(meta) << meta.error().message;
  EXPECT_EQ(meta->alignment, 32u);
  EXPECT_EQ(meta->find("general.architecture")->data, Value::of_string("llama").data);
  EXPECT_EQ(u32_of(*meta, "general.alignment"), 32u);
  EXPECT_EQ(u32_of(*meta, "llama.block_count"), 2u);
  EXPECT_EQ(u32_of(*meta, "llama.embedding_length"), 256u);
  EXPECT_EQ(u32_of(*meta, "llama.attention.head_count"), 4u);
  EXPECT_EQ(u32_of(*meta, "llama.attention.head_count_kv"), 2u);
  EXPECT_EQ(u32_of(*meta, "llama.rope.dimension_count"), 64u);
  EXPECT_EQ(u32_of(*meta, "llama.context_length"), 4096u);
  EXPECT_EQ(u32_of(*meta, "llama.vocab_size"), fake_vocab_size);
  EXPECT_EQ(meta->find("llama.attention.layer_norm_rms_epsilon")->data, Value::of_f32(1e-5f).data);
  EXPECT_EQ(meta->find("llama.rope.freq_base")->data, Value::of_f32(10000.0f).data);

  // Every tokenizer.* key is copied verbatim, in order; nothing else from the vocab file.
  const GgufFile vocab = fake_vocab();
  std::vector<KeyValue> copied;
  for (const KeyValue& kv : meta->kvs) {
    if (kv.key.starts_with("tokenizer.")) {
      copied.push_back(kv);
    }
  }
  EXPECT_EQ(copied, std::vector<KeyValue>(vocab.kvs.begin() + 2, vocab.kvs.end()));
}

TEST_F(TinyModelTest, TensorShapesFollowGgmlOrder) {
  build(1, ".gguf");
  auto meta = read_gguf(m_outputs[0]);
  ASSERT_TRUE(meta) << meta.error().message;
  EXPECT_EQ(meta->tensors.size(), 3u + 2u * 9u);
  const auto shape = [&](std::string_view name) {
    const TensorInfo* t = tensor_named(*meta, name);
    return t != nullptr ? t->shape : std::vector<std::uint64_t>{};
  };
  using Shape = std::vector<std::uint64_t>;
  EXPECT_EQ(shape("token_embd.weight"), (Shape{256, fake_vocab_size}));
  EXPECT_EQ(shape("output.weight"), (Shape{256, fake_vocab_size}));
  EXPECT_EQ(shape("output_norm.weight"), (Shape{256}));
  for (const std::string p : {"blk.0.", "blk.1."}) {
    EXPECT_EQ(shape(p + "attn_norm.weight"), (Shape{256}));
    EXPECT_EQ(shape(p + "attn_q.weight"), (Shape{256, 256}));
    EXPECT_EQ(shape(p + "attn_k.weight"), (Shape{256, 128}));  // 2 KV heads x 64
    EXPECT_EQ(shape(p + "attn_v.weight"), (Shape{256, 128}));
    EXPECT_EQ(shape(p + "attn_output.weight"), (Shape{256, 256}));
    EXPECT_EQ(shape(p + "ffn_norm.weight"), (Shape{256}));
    EXPECT_EQ(shape(p + "ffn_gate.weight"), (Shape{256, 512}));
    EXPECT_EQ(shape(p + "ffn_up.weight"), (Shape{256, 512}));
    EXPECT_EQ(shape(p + "ffn_down.weight"), (Shape{512, 256}));
  }
  // Norms are f32 ones.
  const TensorInfo* norm = tensor_named(*meta, "output_norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->type, TensorType::f32);
  const std::string content = slurp(m_outputs[0]);
  float first = 0.0f;
  std::memcpy(&first, content.data() + meta->data_offset + norm->offset, sizeof first);
  EXPECT_EQ(first, 1.0f);
}

TEST_F(TinyModelTest, WeightsArePortable) {
  // The generator is our own splitmix64 + exact float arithmetic, so these bytes hold on any
  // platform; if they change, every published demo number changes with them.
  const std::string content = build(1, ".gguf");
  auto meta = read_gguf(m_outputs[0]);
  ASSERT_TRUE(meta) << meta.error().message;
  const TensorInfo* embd = tensor_named(*meta, "token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->type, TensorType::f16);
  const std::string first = content.substr(meta->data_offset + embd->offset, 8);
  const unsigned char golden[] = {0xa0, 0xbe, 0x3c, 0xba, 0xec, 0x3c, 0x6b, 0x3c};  // seed 1
  EXPECT_EQ(first, std::string(reinterpret_cast<const char*>(golden), sizeof golden));
}

// binary16 to float, for checking the weight scale.
float from_f16(std::uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  const float magnitude = exp == 0 ? std::ldexp(static_cast<float>(mant), -24)
                                   : std::ldexp(static_cast<float>(mant + 1024), exp - 25);
  return (h & 0x8000) != 0 ? -magnitude : magnitude;
}

TEST_F(TinyModelTest, WeightsScaleWithFanIn) {
  const std::string content = build(1, ".gguf");
  auto meta = read_gguf(m_outputs[0]);
  ASSERT_TRUE(meta) << meta.error().message;
  // Uniform weights: mean ~0, and attn_q's spread shrinks as 1/sqrt(fan_in) relative to ffn_down's
  // (fan_in 256 vs 512, gains 1.4 vs 1.0).
  const auto stats = [&](std::string_view name) {
    const TensorInfo* t = tensor_named(*meta, name);
    EXPECT_NE(t, nullptr) << name;
    const std::uint64_t n = t == nullptr ? 0 : tensor_bytes(t->type, t->shape).value() / 2;
    const std::uint64_t at = meta->data_offset + (t != nullptr ? t->offset : 0);
    const auto* p = reinterpret_cast<const unsigned char*>(content.data() + at);
    double sum = 0.0;
    double sum_sq = 0.0;
    float max_abs = 0.0f;
    for (std::uint64_t i = 0; i < n; ++i) {
      const float v = from_f16(static_cast<std::uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
      sum += v;
      sum_sq += static_cast<double>(v) * v;
      max_abs = std::max(max_abs, std::fabs(v));
    }
    const double mean = sum / static_cast<double>(n);
    return std::array<double, 3>{mean, std::sqrt(sum_sq / static_cast<double>(n) - mean * mean), max_abs};
  };
  const auto q = stats("blk.0.attn_q.weight");
  EXPECT_NEAR(q[0], 0.0, 0.002);
  EXPECT_NEAR(q[1], 1.4 / 16.0, 0.002);
  EXPECT_LE(q[2], 1.4 / 16.0 * std::sqrt(3.0) + 1e-3);
  const auto down = stats("blk.1.ffn_down.weight");
  EXPECT_NEAR(down[1], 1.0 / std::sqrt(512.0), 0.002);
}

TEST_F(TinyModelTest, VocabWithoutTokensIsAnError) {
  GgufFile bad;
  bad.kvs = {{"tokenizer.ggml.model", Value::of_string("llama")}};
  ASSERT_TRUE(write_gguf(m_vocab, bad, nullptr));
  TinyModelOptions opts;
  opts.vocab = m_vocab;
  auto r = write_tiny_model(temp_file(".gguf"), opts);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, core::ErrorKind::parse);
  EXPECT_THAT(r.error().message, HasSubstr("tokenizer.ggml.tokens"));
}

TEST_F(TinyModelTest, MissingVocabNamesThePath) {
  TinyModelOptions opts;
  opts.vocab = temp_file(".missing.gguf");
  auto r = write_tiny_model(temp_file(".gguf"), opts);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, core::ErrorKind::io);
  EXPECT_THAT(r.error().message, HasSubstr(".missing.gguf"));
}

TEST(TinyModelVocabPath, FollowsEnvironment) {
  const char* saved = std::getenv("KVSWEEP_LLAMA_SRC");
  const std::string saved_value = saved != nullptr ? saved : "";
  ::setenv("KVSWEEP_LLAMA_SRC", "/opt/llama", 1);
  EXPECT_EQ(default_vocab_path(), std::filesystem::path("/opt/llama/models/ggml-vocab-llama-spm.gguf"));
  ::unsetenv("KVSWEEP_LLAMA_SRC");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string xdg_value = xdg != nullptr ? xdg : "";
  ::setenv("XDG_CACHE_HOME", "/var/cache", 1);
  EXPECT_EQ(default_vocab_path(),
            std::filesystem::path("/var/cache/kvsweep/llama.cpp-de3ff81/src/models") / "ggml-vocab-llama-spm.gguf");
  if (xdg != nullptr) {
    ::setenv("XDG_CACHE_HOME", xdg_value.c_str(), 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
  if (saved != nullptr) {
    ::setenv("KVSWEEP_LLAMA_SRC", saved_value.c_str(), 1);
  }
}

}  // namespace
}  // namespace kvsweep::model
