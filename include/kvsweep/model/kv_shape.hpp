#pragma once
/// The KV cache's shape from a GGUF header (layers, KV heads, key and value lengths), and its bytes
/// per token at a K/V type pair: what a context of n tokens needs beside the weights.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kvsweep/model/gguf.hpp"

namespace kvsweep::model {

struct KvShape {
  std::uint64_t layers = 0;
  std::uint64_t heads_kv = 0;
  std::uint64_t key_length = 0;    // per head
  std::uint64_t value_length = 0;  // per head
};

/// From `<general.architecture>.block_count`, `.attention.head_count_kv` (else `.attention.head_count`),
/// `.attention.key_length` / `.value_length` (else `.embedding_length` / head_count); nullopt when a
/// key is missing or not an integer.
std::optional<KvShape> kv_shape(const GgufFile& file);

/// Bytes of one token's K and V over every layer at the two cache types (core::kCacheTypes' bits);
/// nullopt for a type that table does not know.
std::optional<double> kv_bytes_per_token(const KvShape& shape, std::string_view type_k, std::string_view type_v);

/// The context the model was trained to (`<general.architecture>.context_length`), with the
/// architecture that names the key: llama-server gives a slot at most this many tokens unless the key
/// is overridden (`--override-kv <architecture>.context_length=int:N`). nullopt when not in the header.
struct TrainingContext {
  std::string architecture;
  std::uint64_t tokens = 0;
};
std::optional<TrainingContext> training_context(const GgufFile& file);

}  // namespace kvsweep::model
