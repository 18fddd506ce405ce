#pragma once
/// A cell's K and V cache types as the user of the run's server sets them: the one wording every piece
/// of advice (recommend, report.md, index.html, the summary) names a cell with. llama-server (and a
/// server kvsweep attached to that speaks its API): "-ctk q8_0 -ctv f16". Ollama: its variable,
/// "OLLAMA_KV_CACHE_TYPE=q8_0", one type for K and V. A launch template (backend "command": a preset
/// such as vLLM's, or the user's own command): the flags and variables of its command that carry
/// {type_k}/{type_v}, with the types as the server is given them ("--kv-cache-dtype fp8", "--type_k 8
/// --type_v 1 (q8_0/f16)").

#include <string>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::report {

struct CacheSetting {
  std::string text;  // "-ctk q8_0 -ctv f16", "OLLAMA_KV_CACHE_TYPE=q8_0", "--kv-cache-dtype fp8"
  /// What the text alone does not say, as a sentence without its full stop: "Ollama ties K and V:
  /// OLLAMA_KV_CACHE_TYPE is one type for both"; "" for a server that sets K and V apart.
  std::string note;
};

/// How `cell`'s types are set on the server the run's manifest names: its resolved config's server
/// section (backend, api, a launch template's command, cache-type spelling and kv_tied), else the
/// manifest's `server` (a run whose config is missing). A template whose command cannot be read names
/// the types ("cache types q8_0/f16"); any other server reads as llama-server.
CacheSetting cache_setting(const sweep::Manifest& manifest, const core::CellKey& cell);

}  // namespace kvsweep::report
