// The KV cache's shape read from a GGUF header, and its bytes per token at each K/V pair.

#include <gtest/gtest.h>

#include "kvsweep/model/gguf.hpp"
#include "kvsweep/model/kv_shape.hpp"

namespace {

using namespace kvsweep::model;

GgufFile smollm2_like(bool with_lengths) {
  GgufFile f;
  f.kvs.push_back({"general.architecture", Value::of_string("llama")});
  f.kvs.push_back(u32_kv("llama.block_count", 30));
  f.kvs.push_back(u32_kv("llama.attention.head_count", 9));
  f.kvs.push_back(u32_kv("llama.attention.head_count_kv", 3));
  f.kvs.push_back(u32_kv("llama.embedding_length", 576));
  if (with_lengths) {
    f.kvs.push_back(u32_kv("llama.attention.key_length", 64));
    f.kvs.push_back(u32_kv("llama.attention.value_length", 64));
  }
  return f;
}

TEST(KvShape, FromTheHeadersKeysOrTheEmbeddingPerHead) {
  for (bool lengths : {true, false}) {
    const auto s = kv_shape(smollm2_like(lengths));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->layers, 30u);
    EXPECT_EQ(s->heads_kv, 3u);
    EXPECT_EQ(s->key_length, 64u);
    EXPECT_EQ(s->value_length, 64u);
  }
}

TEST(KvShape, BytesPerTokenMatchLlamaServersBuffer) {
  const auto s = kv_shape(smollm2_like(true));
  ASSERT_TRUE(s);
  // llama-server's log for SmolLM2 at -c 8192, f16/f16: "size = 180.00 MiB (8192 cells, 30 layers)".
  const auto f16 = kv_bytes_per_token(*s, "f16", "f16");
  ASSERT_TRUE(f16);
  EXPECT_DOUBLE_EQ(*f16 * 8192 / (1024.0 * 1024.0), 180.0);
  // q8_0 K: 34 bytes per 32 values; V f16.
  EXPECT_DOUBLE_EQ(*kv_bytes_per_token(*s, "q8_0", "f16"), 30 * 3 * (64 * 8.5 + 64 * 16.0) / 8.0);
  EXPECT_FALSE(kv_bytes_per_token(*s, "q3_k", "f16"));
}

TEST(KvShape, TheTrainingContextIsTheArchitecturesContextLength) {
  GgufFile f = smollm2_like(true);
  EXPECT_FALSE(training_context(f)) << "no llama.context_length yet";
  f.kvs.push_back(u32_kv("llama.context_length", 8192));
  const auto c = training_context(f);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->architecture, "llama");
  EXPECT_EQ(c->tokens, 8192u);
  EXPECT_FALSE(training_context(GgufFile{})) << "no architecture";
}

TEST(KvShape, AHeaderWithoutTheKeysHasNone) {
  GgufFile f;
  EXPECT_FALSE(kv_shape(f));
  f.kvs.push_back({"general.architecture", Value::of_string("llama")});
  f.kvs.push_back(u32_kv("llama.block_count", 2));
  EXPECT_FALSE(kv_shape(f));
}

}  // namespace
