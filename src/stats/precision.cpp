#include "kvsweep/stats/precision.hpp"

#include <array>
#include <utility>

namespace kvsweep::stats {

std::optional<double> bits_per_value(std::string_view type) {
  // Block of 32 values: q8_0 = fp16 scale + 32 int8 = 34 bytes; q5_1 = fp16 scale and min + 4 bytes
  // of high bits + 16 bytes = 24 bytes; q5_0 = 22; q4_1 = 20; q4_0 = 18; iq4_nl = 18 (bytes * 8 / 32).
  static constexpr std::array<std::pair<std::string_view, double>, 9> kTable{{
      {"f32", 32.0},
      {"f16", 16.0},
      {"bf16", 16.0},
      {"q8_0", 8.5},
      {"q5_1", 6.0},
      {"q5_0", 5.5},
      {"q4_1", 5.0},
      {"q4_0", 4.5},
      {"iq4_nl", 4.5},
  }};
  for (const auto& [name, bits] : kTable) {
    if (name == type) return bits;
  }
  return std::nullopt;
}

}  // namespace kvsweep::stats
