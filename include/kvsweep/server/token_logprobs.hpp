#pragma once
/// llama-server's and Ollama's per-token log-probabilities read leniently, one rule for both.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kvsweep/server/api.hpp"

namespace kvsweep::server {

/// An array of `{id?, token, logprob, top_logprobs?: [{id?, token, logprob}]}` (llama-server's
/// `completion_probabilities` and `logprobs.content`, Ollama's `logprobs`): a missing id is -1 (Ollama
/// gives none), a missing token or logprob is empty or 0, a `top_logprobs` that is not an array is
/// none. Not an array: no entries.
std::vector<TokenLogprob> read_token_logprobs(const nlohmann::json& entries);

/// Why `logprob` cannot be a log-probability ("" when it can): NaN or infinite, or above 0 by more
/// than rounding (1e-4). Such a value scored would read as no divergence at all.
std::string impossible_logprob(double logprob);

}  // namespace kvsweep::server
