#include "kvsweep/score/cosine.hpp"

#include <cmath>
#include <cstddef>
#include <limits>

namespace kvsweep::score {

double cosine_similarity(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::quiet_NaN();
  double dot = 0.0;
  double norm_a = 0.0;
  double norm_b = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = a[i];
    const double y = b[i];
    dot += x * y;
    norm_a += x * x;
    norm_b += y * y;
  }
  if (std::isnan(dot) || std::isnan(norm_a) || std::isnan(norm_b) || std::isinf(norm_a) || std::isinf(norm_b)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (norm_a == 0.0 || norm_b == 0.0) return 0.0;
  // Rounding can push |cos| a hair past 1 for parallel vectors; clamp to the true range.
  const double cos = dot / (std::sqrt(norm_a) * std::sqrt(norm_b));
  return cos > 1.0 ? 1.0 : (cos < -1.0 ? -1.0 : cos);
}

}  // namespace kvsweep::score
