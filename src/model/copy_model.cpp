#include "kvsweep/model/copy_model.hpp"

// How the copy model copies. Nothing is trained: every weight is written down from the plan below.
//
// Residual stream (n_embd = 1 + (j + 2)·c, rounded up to a multiple of 32), split into subspaces:
//   [0]            a constant c0 (4·√n_embd), so RMSNorm divides by a nearly fixed amount: each
//                  layer's weights are divided by the gain g its input is expected to get
//   E   (c dims)   code(token): a random unit vector per token id
//   P_m (c dims)   code of the token m positions back, m = 1…j (written by layer 1)
//   OUT (c dims)   code of the token to emit (written by layer 2)
// logits(x) = output_scale · ⟨code(x), OUT⟩: the copied token wins by 1 against cross-talk of
// about 1/√c between random codes. FFNs are zero. One KV head of head dim H = 2F + j·c serves every
// query head; n_head = j.
//
// RoPE as a position instrument. llama.rope.freq_base = 1 makes every pair's base angle the
// position itself, and the per-pair divisor tensor `rope_freqs` then sets each pair's frequency
// exactly: ω_i = 1 / rope_freqs[i]. The first F pairs are "fast", with seeded irregular
// frequencies in [0.2, π − 0.2] (evenly spaced ones alias: their kernel repeats); the other pairs
// get a divisor of 1e30, so they do not rotate at all ("static" pairs, H − 2F dims).
//
// Layer 1, previous-token heads: head h attends to offset d = h + 1. Its key is constant, (1, 0) in
// every fast pair; its query is (cos ω_i·d, −sin ω_i·d), so after RoPE the score of the key δ = Δ − d
// away from the wanted offset is B1 · Σ_i cos(ω_i·δ) (positional_kernel): F at δ = 0, and a sidelobe
// of about √(F·ln horizon) elsewhere (max_sidelobe; the unit test states the margin). The value is
// E; the output projection writes head h's value into P_d.
//
// Layer 2, the induction head (query head 0; the other heads have zero queries and zero output):
// key(s) = [P_1 … P_j](s) in the static dims (the codes of tokens s−1 … s−j), query(t) =
// [E, P_1 … P_(j−1)](t) (tokens t … t−j+1), so score = B2 × the number of the last j tokens that
// match, with cross-talk noise. The value E(s) — the token that followed the match — goes to OUT.
// The match length j decides whether the right place wins: a short j lets the common runs before
// each line start (the last character of a value, `"`, newline, indent) point at the wrong line.
//
// The outlier κ: a constant added to the first key dim of every 32-value block of the static
// (layer-2) region. Every key gets the same κ there, so q·k changes by the same amount for all
// positions and the softmax does not move (f16 is unaffected) — but a q4_0 block's step is its
// largest value / 8, so κ widens the rounding of every code value in the block. This is how real
// models' keys behave (outlier channels make K the sensitive side); llama.cpp's Hadamard rotation
// of Q/K before a quantized cache (attn_rot_k) spreads κ over the whole head and undoes it.
// Code values are about ±1/√c = ±0.125, so what counts is each type's step against them: q4_0's
// step is κ/8, q5_0's κ/16, q8_0's κ/127 (q4_1 and q5_1 scale by max − min and fare better). Measured
// with bench/copy-knobs (8 cued items of 20 lines, rotation off): at κ = 4 q4_0 K keeps 100/160
// lines, at κ = 5 none; at the default κ = 8, f16 = q8_0 = q5_1 = q4_1 = 160/160, q5_0 112,
// q4_0 0 — and with the rotation on q4_0 is back at 160.
//
// Scale bookkeeping: llama.cpp multiplies q·k by 1/√H, so queries carry √H. Weights are f16 and
// stay well inside its range for the default knobs (largest: the layer-2 query, B2·√H/g2 ≈ 1.5e3).

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include "kvsweep/model/gguf.hpp"
#include "kvsweep/model/vocab.hpp"
#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::model {

namespace {

using stats::SplitMix64;

constexpr std::uint32_t n_layer = 2;
constexpr std::uint32_t n_ff = 32;  // the FFNs are zero; llama.cpp still wants the tensors
constexpr float rms_eps = 1e-5f;
constexpr float static_divisor = 1e30f;
constexpr double omega_lo = 0.2;
constexpr double omega_hi = std::numbers::pi - 0.2;
constexpr std::uint32_t quant_block = 32;           // q4_0 / q8_0 block length

/// Where everything sits, derived from the options.
struct Layout {
  std::uint32_t c = 0;        // code dims
  std::uint32_t j = 0;        // match length = number of query heads
  std::uint32_t F = 0;        // fast pairs
  std::uint32_t H = 0;        // head dim
  std::uint32_t n_embd = 0;
  std::uint32_t n_head = 0;
  double c0 = 0;              // the constant component
  double g1 = 0, g2 = 0, g3 = 0;  // RMSNorm gains expected at layer 1, layer 2 and the output

  std::uint32_t e(std::uint32_t i) const { return 1 + i; }
  std::uint32_t p(std::uint32_t m, std::uint32_t i) const { return 1 + m * c + i; }  // P_0 = E
  std::uint32_t out(std::uint32_t i) const { return 1 + (j + 1) * c + i; }
};

Layout layout_of(const CopyModelOptions& o) {
  Layout l;
  l.c = o.code_dims;
  l.j = o.match_length;
  l.F = o.fast_pairs;
  l.H = 2 * l.F + l.j * l.c;
  l.n_head = l.j;
  const std::uint32_t used = 1 + (l.j + 2) * l.c;
  l.n_embd = (used + quant_block - 1) / quant_block * quant_block;
  const double n = l.n_embd;
  l.c0 = 4.0 * std::sqrt(n);
  // rms(x) = |x| / √n; |x|² = c0² + the unit codes present at that point.
  l.g1 = std::sqrt(n / (l.c0 * l.c0 + 1));
  l.g2 = std::sqrt(n / (l.c0 * l.c0 + 1 + l.j));
  l.g3 = std::sqrt(n / (l.c0 * l.c0 + 2 + l.j));
  return l;
}

/// A dense f32 matrix in GGUF order: `rows` outputs of `cols` inputs, element (r, c) at r·cols + c.
struct Matrix {
  std::uint64_t cols = 0, rows = 0;
  std::vector<float> data;
  Matrix(std::uint64_t in, std::uint64_t out) : cols(in), rows(out), data(in * out, 0.0f) {}
  float& at(std::uint64_t r, std::uint64_t c) { return data[r * cols + c]; }
};

struct Tensor {
  std::string name;
  std::vector<std::uint64_t> shape;
  TensorType type;
  std::vector<float> values;
};

std::uint64_t token_stream(std::uint64_t seed, std::uint64_t token) {
  SplitMix64 mix(seed ^ (token * 0x9e3779b97f4a7c15ULL));
  return mix.next();
}

std::vector<Tensor> build_tensors(const CopyModelOptions& o, std::uint64_t n_vocab) {
  const Layout l = layout_of(o);
  const std::vector<double> omegas = copy_model_frequencies(o);
  const double sqrt_h = std::sqrt(static_cast<double>(l.H));
  const std::uint64_t q_out = std::uint64_t{l.n_head} * l.H;
  std::vector<Tensor> tensors;

  // Token embedding and output: one code per token.
  Matrix embd(l.n_embd, n_vocab);
  Matrix output(l.n_embd, n_vocab);
  for (std::uint64_t x = 0; x < n_vocab; ++x) {
    const std::vector<float> code = copy_model_code(o, x);
    embd.at(x, 0) = static_cast<float>(l.c0);
    for (std::uint32_t i = 0; i < l.c; ++i) {
      embd.at(x, l.e(i)) = code[i];
      output.at(x, l.out(i)) = static_cast<float>(o.output_scale * code[i] / l.g3);
    }
  }
  tensors.push_back({"token_embd.weight", {l.n_embd, n_vocab}, TensorType::f16, std::move(embd.data)});

  // The per-pair RoPE divisors: fast pairs 1/ω, static pairs 1e30 (shared by both layers).
  std::vector<float> rope(l.H / 2, static_divisor);
  for (std::uint32_t i = 0; i < l.F; ++i) rope[i] = static_cast<float>(1.0 / omegas[i]);
  tensors.push_back({"rope_freqs.weight", {l.H / 2}, TensorType::f32, std::move(rope)});

  for (std::uint32_t layer = 0; layer < n_layer; ++layer) {
    const std::string p = "blk." + std::to_string(layer) + ".";
    Matrix wq(l.n_embd, q_out), wk(l.n_embd, l.H), wv(l.n_embd, l.H), wo(q_out, l.n_embd);
    if (layer == 0) {
      const double a1 = o.offset_sharpness * sqrt_h / (l.c0 * l.g1);
      for (std::uint32_t h = 0; h < l.n_head; ++h) {
        const double d = h + 1;
        for (std::uint32_t i = 0; i < l.F; ++i) {
          wq.at(h * l.H + 2 * i, 0) = static_cast<float>(a1 * std::cos(omegas[i] * d));
          wq.at(h * l.H + 2 * i + 1, 0) = static_cast<float>(-a1 * std::sin(omegas[i] * d));
        }
        for (std::uint32_t i = 0; i < l.c; ++i) wo.at(l.p(h + 1, i), h * l.H + i) = 1.0f;
      }
      for (std::uint32_t i = 0; i < l.F; ++i) wk.at(2 * i, 0) = static_cast<float>(1.0 / (l.c0 * l.g1));
      for (std::uint32_t i = 0; i < l.c; ++i) wv.at(i, l.e(i)) = static_cast<float>(1.0 / l.g1);
    } else {
      const double a2 = o.match_sharpness * sqrt_h / l.g2;
      const std::uint32_t base = 2 * l.F;
      for (std::uint32_t m = 1; m <= l.j; ++m) {
        for (std::uint32_t i = 0; i < l.c; ++i) {
          const std::uint32_t dim = base + (m - 1) * l.c + i;
          wq.at(dim, l.p(m - 1, i)) = static_cast<float>(a2);  // [E, P_1 … P_(j−1)](t)
          wk.at(dim, l.p(m, i)) = static_cast<float>(1.0 / l.g2);  // [P_1 … P_j](s)
        }
      }
      for (std::uint32_t dim = base; dim < l.H; dim += quant_block) {
        wk.at(dim, 0) = static_cast<float>(o.outlier / (l.c0 * l.g2));
      }
      for (std::uint32_t i = 0; i < l.c; ++i) {
        wv.at(i, l.e(i)) = static_cast<float>(1.0 / l.g2);
        wo.at(l.out(i), i) = 1.0f;
      }
    }
    tensors.push_back({p + "attn_norm.weight", {l.n_embd}, TensorType::f32, std::vector<float>(l.n_embd, 1.0f)});
    tensors.push_back({p + "attn_q.weight", {l.n_embd, q_out}, TensorType::f16, std::move(wq.data)});
    tensors.push_back({p + "attn_k.weight", {l.n_embd, l.H}, TensorType::f16, std::move(wk.data)});
    tensors.push_back({p + "attn_v.weight", {l.n_embd, l.H}, TensorType::f16, std::move(wv.data)});
    tensors.push_back({p + "attn_output.weight", {q_out, l.n_embd}, TensorType::f16, std::move(wo.data)});
    tensors.push_back({p + "ffn_norm.weight", {l.n_embd}, TensorType::f32, std::vector<float>(l.n_embd, 1.0f)});
    for (const char* ffn : {"ffn_gate.weight", "ffn_up.weight"}) {
      tensors.push_back({p + ffn, {l.n_embd, n_ff}, TensorType::f16, std::vector<float>(l.n_embd * n_ff, 0.0f)});
    }
    tensors.push_back(
        {p + "ffn_down.weight", {n_ff, l.n_embd}, TensorType::f16, std::vector<float>(l.n_embd * n_ff, 0.0f)});
  }
  tensors.push_back({"output_norm.weight", {l.n_embd}, TensorType::f32, std::vector<float>(l.n_embd, 1.0f)});
  tensors.push_back({"output.weight", {l.n_embd, n_vocab}, TensorType::f16, std::move(output.data)});
  return tensors;
}

void encode(const Tensor& t, std::string& out) {
  if (t.type == TensorType::f32) {
    for (float v : t.values) {
      const auto bits = std::bit_cast<std::uint32_t>(v);
      for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((bits >> (8 * b)) & 0xffu));
    }
    return;
  }
  for (float v : t.values) {
    const std::uint16_t h = f16_bits(v);
    out.push_back(static_cast<char>(h & 0xffu));
    out.push_back(static_cast<char>(h >> 8));
  }
}


}  // namespace

std::string check_copy_model(const CopyModelOptions& o) {
  if (o.match_length < 1 || o.match_length > 16) return "--match-length must be 1..16";
  if (o.code_dims < 32 || o.code_dims % quant_block != 0) return "--code-dims must be a multiple of 32 (at least 32)";
  if (o.fast_pairs < 8 || o.fast_pairs % 32 != 0) return "--fast-pairs must be a multiple of 32";
  const Layout l = layout_of(o);
  // llama.cpp rotates a quantized K cache only when the head dim is a multiple of 64; keep that
  // switch meaningful (and q4_0's 32-blocks aligned with the subspaces).
  if (l.H % 64 != 0) {
    return "head dim 2·fast_pairs + match_length·code_dims = " + std::to_string(l.H) + " must be a multiple of 64";
  }
  if (!(o.outlier >= 0 && o.outlier <= 1000)) return "--outlier must be between 0 and 1000";
  if (!(o.offset_sharpness > 0 && o.match_sharpness > 0 && o.output_scale > 0)) {
    return "sharpness and output scale must be positive";
  }
  if (o.context_length == 0) return "--context-length must be positive";
  return {};
}

std::vector<double> copy_model_frequencies(const CopyModelOptions& o) {
  SplitMix64 rng(o.seed ^ 0x6f6d65676173ULL);  // "omegas"
  std::vector<double> omegas;
  omegas.reserve(o.fast_pairs);
  for (std::uint32_t i = 0; i < o.fast_pairs; ++i) {
    const double u = static_cast<double>(rng.next() >> 11) * 0x1p-53;  // exact: 53 random bits
    const double omega = omega_lo + u * (omega_hi - omega_lo);
    // What the server computes with: the stored f32 divisor, inverted.
    omegas.push_back(1.0 / static_cast<double>(static_cast<float>(1.0 / omega)));
  }
  return omegas;
}

double positional_kernel(const std::vector<double>& omegas, std::int64_t delta) {
  double sum = 0;
  for (double w : omegas) sum += std::cos(w * static_cast<double>(delta));
  return sum;
}

double max_sidelobe(const std::vector<double>& omegas, std::int64_t horizon) {
  double worst = 0;
  // cos is even: δ and −δ give the same value.
  for (std::int64_t d = 1; d <= horizon; ++d) worst = std::max(worst, std::abs(positional_kernel(omegas, d)));
  return worst;
}

std::vector<float> copy_model_code(const CopyModelOptions& o, std::uint64_t token) {
  // Each value is the sum of four uniform 16-bit integers, centred (Irwin–Hall, close to a normal),
  // then the vector is scaled to unit norm; only integer sums, one correctly rounded sqrt and
  // divisions are involved, so the floats are the same everywhere.
  SplitMix64 rng(token_stream(o.seed, token));
  std::vector<double> raw(o.code_dims);
  double norm2 = 0;
  for (double& v : raw) {
    const std::uint64_t w = rng.next();
    const std::int64_t s = static_cast<std::int64_t>(w & 0xffff) + static_cast<std::int64_t>((w >> 16) & 0xffff) +
                           static_cast<std::int64_t>((w >> 32) & 0xffff) + static_cast<std::int64_t>(w >> 48) -
                           2 * 65535;
    v = static_cast<double>(s);
    norm2 += v * v;
  }
  const double norm = std::sqrt(norm2);
  std::vector<float> code(o.code_dims);
  for (std::size_t i = 0; i < raw.size(); ++i) code[i] = static_cast<float>(raw[i] / norm);
  return code;
}

core::Expected<void> write_copy_model(const std::filesystem::path& out, const CopyModelOptions& o) {
  if (const std::string problem = check_copy_model(o); !problem.empty()) {
    return core::fail(core::ErrorKind::invalid, "copy model: " + problem);
  }
  auto vocab = read_vocab(o.vocab.empty() ? default_vocab_path() : o.vocab);
  if (!vocab) return core::fail(vocab.error().kind, "copy model " + vocab.error().message);
  const Layout l = layout_of(o);

  GgufFile file;
  file.alignment = gguf_default_alignment;
  file.kvs = llama_base_kvs("kvsweep-copy", vocab->n_vocab, o.context_length);
  const std::vector<KeyValue> more = {
      u32_kv("llama.embedding_length", l.n_embd),
      u32_kv("llama.block_count", n_layer),
      u32_kv("llama.feed_forward_length", n_ff),
      u32_kv("llama.attention.head_count", l.n_head),
      u32_kv("llama.attention.head_count_kv", 1),
      u32_kv("llama.attention.key_length", l.H),
      u32_kv("llama.attention.value_length", l.H),
      u32_kv("llama.rope.dimension_count", l.H),
      f32_kv("llama.attention.layer_norm_rms_epsilon", rms_eps),
      f32_kv("llama.rope.freq_base", 1.0f),
      // Provenance; llama.cpp ignores these.
      {"kvsweep.copy_model.seed", Value::of_u64(o.seed)},
      u32_kv("kvsweep.copy_model.match_length", o.match_length),
      u32_kv("kvsweep.copy_model.code_dims", o.code_dims),
      u32_kv("kvsweep.copy_model.fast_pairs", o.fast_pairs),
      f32_kv("kvsweep.copy_model.outlier", o.outlier),
      f32_kv("kvsweep.copy_model.offset_sharpness", o.offset_sharpness),
      f32_kv("kvsweep.copy_model.match_sharpness", o.match_sharpness),
      f32_kv("kvsweep.copy_model.output_scale", o.output_scale),
  };
  file.kvs.insert(file.kvs.end(), more.begin(), more.end());
  for (KeyValue& kv : vocab->tokenizer_kvs) file.kvs.push_back(std::move(kv));

  const std::vector<Tensor> tensors = build_tensors(o, vocab->n_vocab);
  for (const Tensor& t : tensors) file.tensors.push_back({t.name, t.shape, t.type, 0});
  auto written = write_gguf(out, std::move(file), [&tensors](std::size_t index, std::string& data) {
    encode(tensors[index], data);
  });
  if (!written) return core::fail(written.error().kind, "copy model: " + written.error().message);
  return {};
}

}  // namespace kvsweep::model
