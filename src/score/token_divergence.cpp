#include "kvsweep/score/token_divergence.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace kvsweep::score {
namespace {

// Sum of probabilities per id for one side (duplicates summed).
std::map<std::int32_t, double> probabilities(std::span<const IdLogprob> side) {
  std::map<std::int32_t, double> out;
  for (const IdLogprob& t : side) out[t.id] += std::exp(t.logprob);
  return out;
}

std::vector<double> fill(const std::vector<std::int32_t>& ids, const std::map<std::int32_t, double>& side,
                         double floor) {
  double listed = 0.0;
  for (const auto& [id, prob] : side) listed += prob;
  // Rounding (or a server reporting slightly unnormalised logprobs) can make the top-n sum
  // exceed 1: the tail is then empty, not negative.
  const double tail = std::max(0.0, 1.0 - listed);
  const auto missing = static_cast<double>(ids.size() - side.size());
  // An id this side did not list is below its top-n, so its probability is at most the
  // smallest listed one: capping the even share there keeps a token that merely slipped out
  // of the top-n from receiving a large slice of a wide tail (which inflates KL on flat
  // distributions). What the cap frees stays in the tail bucket.
  double smallest = 1.0;
  for (const auto& [id, prob] : side) smallest = std::min(smallest, prob);
  const double share = missing > 0 ? std::min(tail / (missing + 1.0), smallest) : 0.0;
  const double rest = std::max(0.0, tail - share * missing);

  std::vector<double> out;
  out.reserve(ids.size() + 1);
  for (std::int32_t id : ids) {
    const auto it = side.find(id);
    out.push_back(it == side.end() ? share : it->second);
  }
  out.push_back(rest);
  double total = 0.0;
  for (double& v : out) {
    v = std::max(v, floor);
    total += v;
  }
  for (double& v : out) v /= total;
  return out;
}

double kl(const std::vector<double>& p, const std::vector<double>& q) {
  double sum = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] > 0.0) sum += p[i] * std::log(p[i] / q[i]);
  }
  return sum;
}

/// A value no log-probability can take: NaN, infinite, or above 0 by more than a server's rounding.
/// exp(1e308) is inf, and the buckets of inf are NaN: never scored.
bool any_impossible(std::span<const IdLogprob> side) {
  return std::any_of(side.begin(), side.end(),
                     [](const IdLogprob& t) { return !std::isfinite(t.logprob) || t.logprob > 1e-4; });
}

/// Rounding can leave a value a hair below 0 for identical distributions; a divergence is never
/// negative. A NaN stays NaN (std::max(0.0, NaN) is 0.0: "identical").
double not_negative(double d) { return std::isnan(d) ? d : std::max(0.0, d); }

}  // namespace

BucketedPair bucket_top_n(std::span<const IdLogprob> p, std::span<const IdLogprob> q, double floor) {
  const auto pp = probabilities(p);
  const auto qq = probabilities(q);
  BucketedPair out;
  for (const auto& [id, prob] : pp) out.ids.push_back(id);
  for (const auto& [id, prob] : qq) {
    if (!pp.contains(id)) out.ids.push_back(id);
  }
  std::sort(out.ids.begin(), out.ids.end());
  out.p = fill(out.ids, pp, floor);
  out.q = fill(out.ids, qq, floor);
  return out;
}

double kl_divergence(std::span<const IdLogprob> p, std::span<const IdLogprob> q, double floor) {
  if (any_impossible(p) || any_impossible(q)) return std::nan("");
  const BucketedPair b = bucket_top_n(p, q, floor);
  return not_negative(kl(b.p, b.q));
}

double js_divergence(std::span<const IdLogprob> p, std::span<const IdLogprob> q, double floor) {
  if (any_impossible(p) || any_impossible(q)) return std::nan("");
  const BucketedPair b = bucket_top_n(p, q, floor);
  std::vector<double> m(b.p.size());
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = 0.5 * (b.p[i] + b.q[i]);
  return not_negative(0.5 * kl(b.p, m) + 0.5 * kl(b.q, m));
}

std::optional<std::size_t> flip_index(std::span<const std::int32_t> a, std::span<const std::int32_t> b) {
  const std::size_t common = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (a[i] != b[i]) return i;
  }
  if (a.size() != b.size()) return common;
  return std::nullopt;
}

}  // namespace kvsweep::score
