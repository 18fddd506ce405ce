#include "kvsweep/stats/gradient.hpp"

#include <cmath>
#include <limits>

namespace kvsweep::stats {

std::string_view to_string(Gradient gradient) {
  switch (gradient) {
    case Gradient::yes: return "yes";
    case Gradient::no: return "no";
    case Gradient::reversed: return "reversed";
  }
  return "no";
}

GradientResult precision_gradient(std::span<const double> bits, std::span<const double> metric, bool higher_is_better,
                                  double alpha) {
  GradientResult out;
  if (bits.size() != metric.size()) {
    out.rho = out.p = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  const SpearmanResult s = spearman(bits, metric);
  out.n = bits.size();
  out.rho = s.rho;
  out.p = s.p;
  // NaN compares false: a flat grid or too few cells is never a gradient.
  if (s.p < alpha) {
    const bool more_bits_better = higher_is_better ? s.rho > 0 : s.rho < 0;
    out.verdict = more_bits_better ? Gradient::yes : Gradient::reversed;
  }
  return out;
}

}  // namespace kvsweep::stats
