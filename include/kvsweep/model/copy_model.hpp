#pragma once
/// The copy model: a 2-layer llama GGUF whose weights are constructed, not trained, so that it
/// continues a text by copying what followed the same tokens earlier in its context (an
/// induction circuit). A calibrated instrument for the recall probe, not a language model.

#include <cstdint>
#include <filesystem>
#include <vector>

#include "kvsweep/core/error.hpp"

namespace kvsweep::model {

/// The knobs of the construction (src/model/copy_model.cpp says what each one moves).
struct CopyModelOptions {
  std::uint64_t seed = 1;               // token codes and positional frequencies
  std::filesystem::path vocab;          // empty: default_vocab_path()
  std::uint32_t context_length = 131072;
  std::uint32_t match_length = 6;       // j: how many previous tokens must match before a copy
  std::uint32_t code_dims = 64;         // dimensions of each token's random code
  std::uint32_t fast_pairs = 64;        // RoPE pairs that measure offsets (layer 1)
  float outlier = 8.0f;                 // κ: constant added to one key dim per 32-value block (layer 2)
  float offset_sharpness = 0.8f;        // B1: layer-1 logit per unit of positional kernel
  float match_sharpness = 16.0f;        // B2: layer-2 logit per matching token
  float output_scale = 20.0f;           // logit of the copied token per unit of code overlap
};

/// Checks the knobs; an empty string when they are usable, else what is wrong.
std::string check_copy_model(const CopyModelOptions& options);

/// Writes the model. The same options (and vocab file) give a byte-identical file.
core::Expected<void> write_copy_model(const std::filesystem::path& out, const CopyModelOptions& options);

// The pieces of the construction, exposed so unit tests can check them without a server.

/// Angular frequencies (radians per position) of the fast RoPE pairs, as the server will use
/// them: each is 1 / f32(1 / ω) — the model stores llama.cpp's per-pair divisor `rope_freqs`.
std::vector<double> copy_model_frequencies(const CopyModelOptions& options);

/// The layer-1 positional kernel: Σ_i cos(ω_i · δ), the score (before B1) of a previous-token
/// head at offset d for a key δ positions away from d. Peaks at δ = 0 with the number of pairs.
double positional_kernel(const std::vector<double>& omegas, std::int64_t delta);

/// The largest |kernel| over 1 ≤ |δ| ≤ horizon: what the peak must stand above.
double max_sidelobe(const std::vector<double>& omegas, std::int64_t horizon);

/// Token `token`'s code: `code_dims` values of unit norm, from integer arithmetic only (the
/// same bytes on every platform).
std::vector<float> copy_model_code(const CopyModelOptions& options, std::uint64_t token);

}  // namespace kvsweep::model
