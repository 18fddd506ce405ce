#pragma once
/// The KV-cache types llama-server's -ctk/-ctv take, each with its storage bits per value: the one
/// list the config checks, "all" expands to, and the precision gradient reads.

#include <array>
#include <string_view>

namespace kvsweep::core {

struct CacheType {
  std::string_view name;  // as -ctk/-ctv spell it
  double bits_per_value;  // block scales included (ggml's block layouts, 32 values per block)
};

// Block of 32 values: q8_0 = fp16 scale + 32 int8 = 34 bytes; q5_1 = fp16 scale and min + 4 bytes
// of high bits + 16 bytes = 24 bytes; q5_0 = 22; q4_1 = 20; q4_0 = 18; iq4_nl = 18 (bytes * 8 / 32).
/// In the order a grid's "all" lists them.
inline constexpr std::array<CacheType, 9> kCacheTypes{{
    {"f32", 32.0},
    {"f16", 16.0},
    {"bf16", 16.0},
    {"q8_0", 8.5},
    {"q4_0", 4.5},
    {"q4_1", 5.0},
    {"iq4_nl", 4.5},
    {"q5_0", 5.5},
    {"q5_1", 6.0},
}};

}  // namespace kvsweep::core
