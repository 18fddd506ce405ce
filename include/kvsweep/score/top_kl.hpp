#pragma once
/// KL divergence of a cell's next-token distribution from the reference's, from the two top-n lists a
/// server returns (llama-server's n_probs, vLLM's prompt_logprobs), as a lower bound of the full KL.

#include <span>

#include "kvsweep/score/token_divergence.hpp"

namespace kvsweep::score {

/// What one position of a long document says about a cell against the reference.
struct TopKlBound {
  /// KL(P ‖ Q) in nats over a coarsening of the vocabulary: one bucket for each of the reference's
  /// top-K ids that the cell's list also holds, one bucket for everything else (the reference's
  /// other ids and the tail). Merging outcomes never raises a KL (the log-sum inequality; Cover &
  /// Thomas, Elements of Information Theory, 2nd ed., Thm 2.7.1), so this is a lower bound of the
  /// KL over the whole vocabulary, exact when both lists hold every id with mass.
  double kl = 0.0;
  /// Whether the cell's most probable id is the reference's.
  bool same_top1 = false;
  /// The reference's most probable id's probability under the cell minus under the reference
  /// (llama-perplexity's Δp); the cell's probability counts as 0 when its list lacks the id.
  double dp = 0.0;
  /// How many of the reference's top-K ids the cell's list lacks.
  int outside = 0;
};

/// The bound above for one position. Both lists are (id, natural-log probability) of the server's
/// softmax over the whole vocabulary, most probable first (a list's first entry is its top-1); an
/// id listed twice counts once. Both lists must be non-empty. An impossible logprob (NaN, infinite,
/// above 0) gives a NaN kl.
TopKlBound top_kl_bound(std::span<const IdLogprob> reference, std::span<const IdLogprob> cell);

}  // namespace kvsweep::score
