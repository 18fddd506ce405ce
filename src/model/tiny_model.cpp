#include "kvsweep/model/tiny_model.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvsweep/core/fnv1a.hpp"
#include "kvsweep/model/gguf.hpp"
#include "kvsweep/model/vocab.hpp"
#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::model {

namespace {

// Shape of the model: small enough to load in a blink, big enough to be a real llama with GQA.
constexpr std::uint32_t n_layer = 2;
constexpr std::uint32_t n_embd = 256;
constexpr std::uint32_t n_head = 4;
constexpr std::uint32_t n_head_kv = 2;
constexpr std::uint32_t head_dim = n_embd / n_head;  // 64
constexpr std::uint32_t n_ff = 512;
constexpr float rms_eps = 1e-5f;
constexpr float rope_freq_base = 10000.0f;

// Standard deviation of each weight, as a multiple of 1/sqrt(fan_in) (the embedding: absolute).
// Tuned by hand against llama-server de3ff81 with seed 1: greedy text for "Once upon a time"
// (32 tokens) is the same for f32/f16/bf16/q8_0 KV caches and changes with a q4_0 K cache.
// q·k sets how sharp attention is (how much K errors move it); attn_out sets attention's share of
// the residual stream. The output gain only scales the logits (margins and errors alike), so it
// sets how peaked the distribution is, not whether the argmax flips. Flip rates are linear in the
// cache error, so the gradient is a property of this seed and prompt, not a guarantee for others.
struct Gains {
  float embedding, q, k, v, attn_out, ffn, output;
};

constexpr Gains gains{.embedding = 1.0f, .q = 1.4f, .k = 1.4f, .v = 1.0f, .attn_out = 0.5f, .ffn = 1.0f, .output = 4.0f};

using stats::SplitMix64;

/// One tensor of the model and how to fill it.
struct TensorSpec {
  std::string name;
  std::vector<std::uint64_t> shape;  // ggml order: shape[0] is the input dimension
  TensorType type;
  float stddev;  // 0 for norms (all ones)
};

std::vector<TensorSpec> tensor_specs(std::uint64_t n_vocab) {
  const auto fan = [](float gain, std::uint32_t fan_in) {
    return gain / std::sqrt(static_cast<float>(fan_in));
  };
  const std::uint64_t n_embd_kv = std::uint64_t{head_dim} * n_head_kv;
  std::vector<TensorSpec> specs;
  specs.push_back({"token_embd.weight", {n_embd, n_vocab}, TensorType::f16, gains.embedding});
  for (std::uint32_t i = 0; i < n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    specs.push_back({p + "attn_norm.weight", {n_embd}, TensorType::f32, 0.0f});
    specs.push_back({p + "attn_q.weight", {n_embd, n_embd}, TensorType::f16, fan(gains.q, n_embd)});
    specs.push_back({p + "attn_k.weight", {n_embd, n_embd_kv}, TensorType::f16, fan(gains.k, n_embd)});
    specs.push_back({p + "attn_v.weight", {n_embd, n_embd_kv}, TensorType::f16, fan(gains.v, n_embd)});
    specs.push_back(
        {p + "attn_output.weight", {n_embd, n_embd}, TensorType::f16, fan(gains.attn_out, n_embd)});
    specs.push_back({p + "ffn_norm.weight", {n_embd}, TensorType::f32, 0.0f});
    specs.push_back({p + "ffn_gate.weight", {n_embd, n_ff}, TensorType::f16, fan(gains.ffn, n_embd)});
    specs.push_back({p + "ffn_up.weight", {n_embd, n_ff}, TensorType::f16, fan(gains.ffn, n_embd)});
    specs.push_back({p + "ffn_down.weight", {n_ff, n_embd}, TensorType::f16, fan(gains.ffn, n_ff)});
  }
  specs.push_back({"output_norm.weight", {n_embd}, TensorType::f32, 0.0f});
  specs.push_back({"output.weight", {n_embd, n_vocab}, TensorType::f16, fan(gains.output, n_embd)});
  return specs;
}

// Uniform on [-a, a) with a = sqrt(3)·stddev, in 4096 levels (about f16's precision): each
// splitmix64 draw gives five 12-bit level indices, and a per-tensor table maps a level to its f16
// bits. Level values are exact float arithmetic, so the bytes are the same on every platform;
// the table keeps the write fast even in an unoptimised build.
void fill_tensor(const TensorSpec& spec, std::uint64_t seed, std::string& out) {
  std::uint64_t n = 1;
  for (std::uint64_t d : spec.shape) {
    n *= d;
  }
  if (spec.stddev == 0.0f) {
    const std::uint32_t one = std::bit_cast<std::uint32_t>(1.0f);
    for (std::uint64_t i = 0; i < n; ++i) {
      for (int b = 0; b < 4; ++b) {
        out.push_back(static_cast<char>((one >> (8 * b)) & 0xffu));
      }
    }
    return;
  }
  constexpr std::uint32_t level_bits = 12;
  constexpr std::uint32_t levels = 1u << level_bits;
  constexpr int draws_per_word = 64 / level_bits;
  const float a = std::sqrt(3.0f) * spec.stddev;
  const float step = 2.0f * a / static_cast<float>(levels);
  std::array<std::uint16_t, levels> table{};
  for (std::uint32_t k = 0; k < levels; ++k) {
    table[k] = f16_bits((static_cast<float>(k) + 0.5f) * step - a);
  }

  // FNV-1a of the name gives every tensor its own stream derived from (seed, name).
  SplitMix64 rng(seed ^ core::fnv1a64(spec.name));
  const std::size_t start = out.size();
  out.resize(start + static_cast<std::size_t>(n * 2));
  auto* dst = reinterpret_cast<unsigned char*>(out.data() + start);
  std::uint64_t word = 0;
  int left = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (left == 0) {
      word = rng.next();
      left = draws_per_word;
    }
    const std::uint16_t h = table[word & (levels - 1)];
    word >>= level_bits;
    --left;
    dst[2 * i] = static_cast<unsigned char>(h & 0xffu);
    dst[2 * i + 1] = static_cast<unsigned char>(h >> 8);
  }
}


}  // namespace

core::Expected<void> write_tiny_model(const std::filesystem::path& out, const TinyModelOptions& opts) {
  const std::filesystem::path vocab_path = opts.vocab.empty() ? default_vocab_path() : opts.vocab;
  auto vocab = read_vocab(vocab_path);
  if (!vocab) return core::fail(vocab.error().kind, "tiny model " + vocab.error().message);
  const std::uint64_t n_vocab = vocab->n_vocab;
  if (opts.context_length == 0) {
    return core::fail(core::ErrorKind::invalid, "tiny model: context_length must be positive");
  }

  GgufFile file;
  file.alignment = gguf_default_alignment;
  file.kvs = llama_base_kvs("kvsweep-tiny", n_vocab, opts.context_length);
  const std::vector<KeyValue> more = {
      u32_kv("llama.embedding_length", n_embd),
      u32_kv("llama.block_count", n_layer),
      u32_kv("llama.feed_forward_length", n_ff),
      u32_kv("llama.attention.head_count", n_head),
      u32_kv("llama.attention.head_count_kv", n_head_kv),
      u32_kv("llama.rope.dimension_count", head_dim),
      f32_kv("llama.attention.layer_norm_rms_epsilon", rms_eps),
      f32_kv("llama.rope.freq_base", rope_freq_base),
      {"kvsweep.tiny_model.seed", Value::of_u64(opts.seed)},  // provenance; llama.cpp ignores it
  };
  file.kvs.insert(file.kvs.end(), more.begin(), more.end());
  for (KeyValue& kv : vocab->tokenizer_kvs) file.kvs.push_back(std::move(kv));

  const std::vector<TensorSpec> specs = tensor_specs(n_vocab);
  for (const TensorSpec& spec : specs) {
    file.tensors.push_back({spec.name, spec.shape, spec.type, 0});
  }
  auto written = write_gguf(out, std::move(file), [&specs, &opts](std::size_t index, std::string& data) {
    fill_tensor(specs[index], opts.seed, data);
  });
  if (!written) {
    return core::fail(written.error().kind, "tiny model: " + written.error().message);
  }
  return {};
}

}  // namespace kvsweep::model
