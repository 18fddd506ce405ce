#pragma once
/// A vocab GGUF for the synthetic-model tests: shaped like ggml-vocab-llama-spm.gguf (metadata
/// only), with a 64-token vocabulary and one non-tokenizer key that must not leak into a model.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <vector>
#include <string>
#include <utility>

#include "kvsweep/model/gguf.hpp"
#include "temp_file.hpp"

namespace kvsweep::testing {

inline constexpr std::uint32_t fake_vocab_size = 64;

inline model::GgufFile fake_vocab() {
  using namespace kvsweep::model;
  Array tokens{ValueType::string, {}};
  Array scores{ValueType::f32, {}};
  Array types{ValueType::i32, {}};
  for (std::uint32_t i = 0; i < fake_vocab_size; ++i) {
    tokens.items.push_back(Value::of_string(i == 0 ? "<unk>" : "tok" + std::to_string(i)));
    scores.items.push_back(Value::of_f32(-static_cast<float>(i)));
    types.items.push_back(Value::of_i32(i < 3 ? 3 : 1));
  }
  GgufFile file;
  file.kvs = {
      {"general.architecture", Value::of_string("llama")},
      {"llama.embedding_length", Value::of_u32(4096)},  // must not leak into the tiny model
      {"tokenizer.ggml.model", Value::of_string("llama")},
      {"tokenizer.ggml.tokens", Value::of_array(std::move(tokens))},
      {"tokenizer.ggml.scores", Value::of_array(std::move(scores))},
      {"tokenizer.ggml.token_type", Value::of_array(std::move(types))},
      {"tokenizer.ggml.bos_token_id", Value::of_u32(1)},
      {"tokenizer.ggml.add_bos_token", Value::of_bool(true)},
  };
  return file;
}

/// A test that writes fake_vocab() to a temp file first and removes it, and every file it lists in
/// m_outputs, afterwards.
class VocabTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_vocab = temp_file(".vocab.gguf");
    auto written = model::write_gguf(m_vocab, fake_vocab(), nullptr);
    ASSERT_TRUE(written) << written.error().message;
  }
  void TearDown() override {
    std::filesystem::remove(m_vocab);
    for (const auto& p : m_outputs) std::filesystem::remove(p);
  }
  std::filesystem::path m_vocab;
  std::vector<std::filesystem::path> m_outputs;
};

}  // namespace kvsweep::testing
