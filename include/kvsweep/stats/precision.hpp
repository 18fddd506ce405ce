#pragma once
/// Storage bits per value of llama.cpp KV-cache types, the x axis of the precision-gradient test.

#include <optional>
#include <string_view>

namespace kvsweep::stats {

/// Bits per stored value, block scales included (ggml's block layouts, 32 values per block):
/// f32 32, f16 16, bf16 16, q8_0 8.5, q5_1 6, q5_0 5.5, q4_1 5, q4_0 4.5, iq4_nl 4.5.
/// Names are matched exactly as llama-server's -ctk/-ctv spell them; anything else → nullopt.
std::optional<double> bits_per_value(std::string_view type);

}  // namespace kvsweep::stats
