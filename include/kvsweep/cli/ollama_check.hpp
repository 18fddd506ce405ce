#pragma once
/// Before the grid, for cells on a launched Ollama (backend "ollama"): what the installed Ollama
/// can run, and, for a dry run, which tags its model store lacks.

#include "kvsweep/config/config.hpp"
#include "kvsweep/server/backend.hpp"

namespace kvsweep::cli {

/// Throws core::FatalError naming what to change when the grid asks for a KV type the installed
/// Ollama does not pass on (before 0.30: f16, q8_0 and q4_0 only; anything else ran as f16).
/// `version` is the one `ollama --version` gave (backend.describe()).
void check_ollama_grid(const config::Config& cfg, const std::string& version);

/// The dry run's part: starts `ollama serve` once (the config's model store), prints its version
/// and, per model and the embedder, whether the store holds the tag ("ollama pull TAG" when not)
/// or that the GGUF file is imported at the first cell. Returns the number of tags missing.
int print_ollama_models(const config::Config& cfg, server::Backend& backend);

}  // namespace kvsweep::cli
