#pragma once
/// A generated token's top-n list as the probes that score distributions read it (divergence,
/// longkl): token ids with their log-probabilities, each checked to be possible.

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/score/token_divergence.hpp"
#include "kvsweep/server/api.hpp"

namespace kvsweep::probe {

using TopList = std::vector<score::IdLogprob>;

/// The token's top-n (most probable first, as the server listed them). Fails when the list is
/// empty (n_probs ignored), lacks token ids (`probe` names who needs them) or holds an impossible
/// log-probability (NaN, infinite, above 0: scored, +50 would read as KL 0).
core::Expected<TopList> top_list_of(const server::TokenLogprob& token, std::string_view probe);

/// Per step, the top-n list as [[id, logprob], …]: the raw data, so a record can be rescored.
nlohmann::json tops_to_json(const std::vector<TopList>& tops);

/// The lists written by tops_to_json; throws nlohmann::json's exceptions on another shape.
std::vector<TopList> tops_from_json(const nlohmann::json& tops);

}  // namespace kvsweep::probe
