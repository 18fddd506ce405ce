#pragma once
/// The tokenizer the synthetic models carry: the `tokenizer.*` keys of one of llama.cpp's vocab GGUFs.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kvsweep/core/error.hpp"
#include "kvsweep/model/gguf.hpp"

namespace kvsweep::model {

/// The tokenizer.* metadata of a vocab file, copied verbatim into a model, and its token count.
struct Vocab {
  std::vector<KeyValue> tokenizer_kvs;
  std::uint64_t n_vocab = 0;
};

/// The metadata every synthetic llama model opens with: architecture, name, alignment, file type
/// (mostly f16), vocab size and trained context.
std::vector<KeyValue> llama_base_kvs(const std::string& name, std::uint64_t n_vocab, std::uint32_t context_length);

/// Reads `path` (a GGUF with tokenizer.ggml.tokens); errors say which file and what is missing.
core::Expected<Vocab> read_vocab(const std::filesystem::path& path);

/// Default vocab location: $KVSWEEP_LLAMA_SRC/models/ggml-vocab-llama-spm.gguf if set, else
/// ${XDG_CACHE_HOME:-$HOME/.cache}/kvsweep/llama.cpp-de3ff81/src/models/ggml-vocab-llama-spm.gguf
std::filesystem::path default_vocab_path();

}  // namespace kvsweep::model
