#pragma once
/// A probe config's list of token counts (speed's `depths`, toolcall's `lengths`), read one way.

#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/keys.hpp"

namespace kvsweep::probe {

/// What a list of token counts may hold: its default, its bounds, and how a message names it.
struct TokenList {
  const char* key;      // e.g. "depths"
  const char* what;     // "depths", "context lengths"
  const char* example;  // "[0, 32768]"
  std::vector<int> fallback;
  long long min = 0;
  long long max = 4'194'304;
};

/// cfg[list.key]: a non-empty list of distinct integers in [min, max], or list.fallback when absent;
/// anything else fails at `site` ("…depths[1]: expected 0 … 4194304 tokens, got -5").
std::vector<int> get_token_list(const nlohmann::json& cfg, const config::Site& site, const TokenList& list);

}  // namespace kvsweep::probe
