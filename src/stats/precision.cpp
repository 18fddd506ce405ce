#include "kvsweep/stats/precision.hpp"

#include "kvsweep/core/cache_types.hpp"

namespace kvsweep::stats {

std::optional<double> bits_per_value(std::string_view type) {
  for (const auto& t : core::kCacheTypes) {
    if (t.name == type) return t.bits_per_value;
  }
  return std::nullopt;
}

}  // namespace kvsweep::stats
