#pragma once
/// llama-server's and Ollama's per-token log-probabilities read leniently, one rule for both.

#include <nlohmann/json.hpp>
#include <vector>

#include "kvsweep/server/api.hpp"

namespace kvsweep::server {

/// An array of `{id?, token, logprob, top_logprobs?: [{id?, token, logprob}]}` (llama-server's
/// `completion_probabilities` and `logprobs.content`, Ollama's `logprobs`): a missing id is -1 (Ollama
/// gives none), a missing token or logprob is empty or 0, a `top_logprobs` that is not an array is
/// none. Not an array: no entries.
std::vector<TokenLogprob> read_token_logprobs(const nlohmann::json& entries);

}  // namespace kvsweep::server
