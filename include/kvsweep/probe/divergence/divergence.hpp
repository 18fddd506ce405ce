#pragma once
/// The `divergence` probe: greedy decoding with top-n log-probabilities, compared position by
/// position with the same positions recomputed without the KV cache (mode `cache`) or with the
/// reference cell's tokens and distributions (mode `reference`).
///
/// Config: {"kind": "divergence", "name": …, "prompts": […] | "prompts_file": "file" (one prompt
/// per line, or .jsonl lines {"prompt": …}), "tokens": 128, "top_n": 20, "mode": "cache"|"reference"}.
/// Items are the prompts, keys p0, p1, …
///
/// Conventions shared by both modes:
/// - Steps are 0-based: step t is the distribution of the (t+1)-th generated token.
/// - KL is KL(generated ‖ recomputed) in nats: KL(cache-ON ‖ cache-OFF) in mode cache,
///   KL(reference ‖ cell) in mode reference (as llama-perplexity's KLD(base ‖ Q)); JS is symmetric.
///   Both over the two top-n lists with the tail mass outside each list kept as one bucket
///   (score::bucket_top_n).
/// - flip_index is the first step whose token differs; when none differs it is `tokens` (the
///   config value: the first step outside the window, a right-censored value) and diverged is 0.
/// - The response keeps the raw per-step data, so a record can be rescored: `tokens` and `top`
///   (the generated path and its top-n lists as [[id, logprob], …]; in mode reference only on the
///   reference cell), `argmax` and `forced_top` (the recomputed greedy tokens and lists), `kl`,
///   `js`; mode cache adds `free_tokens` and `free_content` (the free-running cache-OFF path).

#include <memory>
#include <string>
#include <vector>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

std::unique_ptr<Probe> make_divergence_probe(const nlohmann::json& config, const ConfigSource& site);

}  // namespace kvsweep::probe
