#pragma once
/// KL and Jensen-Shannon divergence between two top-n next-token distributions, and the flip index of two token sequences.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace kvsweep::score {

/// One entry of a top-n list: a token id and its natural-log probability (as llama-server reports);
/// server::TokenLogprob is a generated token with its text and its alternatives.
struct IdLogprob {
  std::int32_t id = 0;
  double logprob = 0.0;
};

/// Probability given to a bucket that one side leaves empty, so KL stays finite (e.g. one side's
/// top-n sums to 1 and leaves no tail). Both distributions are floored, then renormalised.
inline constexpr double kProbabilityFloor = 1e-10;

/// The two distributions over shared buckets: the union of both top-n ids (ascending), then
/// one last bucket for the tail, the mass outside a side's own top-n.
struct BucketedPair {
  std::vector<std::int32_t> ids;  // one per bucket except the last (tail) one
  std::vector<double> p;          // ids.size() + 1 probabilities summing to 1
  std::vector<double> q;          // same layout as p
};

/// How the buckets are filled for one side: its tail mass T = max(0, 1 - sum of its top-n
/// probabilities) is shared between the m union ids it did not list and its tail bucket: each
/// missing id gets min(T / (m + 1), smallest listed probability) — it is known only to lie
/// in that tail, below every listed token — and the tail bucket keeps the rest.
/// A duplicated id is summed. Then every bucket is floored at `floor` and each side renormalised.
BucketedPair bucket_top_n(std::span<const IdLogprob> p, std::span<const IdLogprob> q,
                          double floor = kProbabilityFloor);

/// KL(P || Q) = sum_i p_i ln(p_i / q_i) in nats (Kullback & Leibler 1951) over bucket_top_n's buckets.
/// An impossible logprob (NaN, infinite, above 0) gives NaN, never 0.
double kl_divergence(std::span<const IdLogprob> p, std::span<const IdLogprob> q,
                     double floor = kProbabilityFloor);

/// JS(P, Q) = KL(P || M) / 2 + KL(Q || M) / 2 with M = (P + Q) / 2, in nats, within [0, ln 2]
/// (Lin 1991), over bucket_top_n's buckets. An impossible logprob gives NaN.
double js_divergence(std::span<const IdLogprob> p, std::span<const IdLogprob> q,
                     double floor = kProbabilityFloor);

/// The first position where two token sequences differ; if one is a strict prefix of the other,
/// the length of the shorter one (the shorter run stopped, the longer one went on); nullopt when
/// both are identical (same length, same tokens).
std::optional<std::size_t> flip_index(std::span<const std::int32_t> a, std::span<const std::int32_t> b);

}  // namespace kvsweep::score
