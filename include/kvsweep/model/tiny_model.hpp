#pragma once
/// The tiny synthetic llama model (2 layers, GQA 4/2 heads, seeded weights) that tests and the demo run on.

#include <cstdint>
#include <filesystem>

#include "kvsweep/core/error.hpp"
#include "kvsweep/model/vocab.hpp"  // default_vocab_path

namespace kvsweep::model {

/// What to build: the seed for the weights, and the GGUF whose tokenizer.* keys are copied verbatim.
struct TinyModelOptions {
  std::uint64_t seed = 1;
  std::filesystem::path vocab;  // ggml-vocab-llama-spm.gguf; empty means default_vocab_path()
  std::uint32_t context_length = 131072;
};

/// Writes the model to `out`. The same options (and vocab file) give a byte-identical file.
core::Expected<void> write_tiny_model(const std::filesystem::path& out, const TinyModelOptions& opts);

}  // namespace kvsweep::model
