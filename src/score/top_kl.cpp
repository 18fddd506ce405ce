#include "kvsweep/score/top_kl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace kvsweep::score {

namespace {

bool possible(double logprob) { return std::isfinite(logprob) && logprob <= 1e-4; }

/// p · ln(p / q) with 0 · ln(0 / q) = 0 and q floored (a rounding-negative tail).
double term(double p, double q) {
  if (p <= 0.0) return 0.0;
  return p * std::log(p / std::max(q, kProbabilityFloor));
}

}  // namespace

TopKlBound top_kl_bound(std::span<const IdLogprob> reference, std::span<const IdLogprob> cell) {
  TopKlBound out;
  if (reference.empty() || cell.empty()) {
    out.kl = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  std::unordered_map<std::int32_t, double> q;
  for (const auto& e : cell) {
    if (!possible(e.logprob)) {
      out.kl = std::numeric_limits<double>::quiet_NaN();
      return out;
    }
    q.emplace(e.id, std::exp(e.logprob));  // the first of a twice-listed id counts
  }
  std::unordered_set<std::int32_t> seen;
  double p_in = 0.0, q_in = 0.0, kl = 0.0;
  for (const auto& e : reference) {
    if (!possible(e.logprob)) {
      out.kl = std::numeric_limits<double>::quiet_NaN();
      return out;
    }
    if (!seen.insert(e.id).second) continue;
    const auto it = q.find(e.id);
    if (it == q.end()) {
      ++out.outside;
      continue;
    }
    const double p = std::exp(e.logprob);
    p_in += p;
    q_in += it->second;
    kl += term(p, it->second);
  }
  kl += term(std::max(0.0, 1.0 - p_in), std::max(0.0, 1.0 - q_in));
  out.kl = std::max(0.0, kl);  // the bound is >= 0; rounding may leave -1e-17
  out.same_top1 = reference.front().id == cell.front().id;
  const auto top = q.find(reference.front().id);
  out.dp = (top == q.end() ? 0.0 : top->second) - std::exp(reference.front().logprob);
  return out;
}

}  // namespace kvsweep::score
