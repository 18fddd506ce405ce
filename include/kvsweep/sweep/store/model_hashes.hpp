#pragma once
/// The models a run uses, each with its size and sha256, and the check that a resumed run
/// still has the very files it started with (a changed model is a new run, never a resume).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/core/error.hpp"

namespace kvsweep::sweep {

struct ModelHash {
  std::string name;
  std::string path;
  bool is_file = false;     // backend llama-server: a GGUF file; else a tag the server resolves
  std::uintmax_t size = 0;  // when is_file
  std::string sha256;       // when is_file
};

/// Hashes every model file of `config` (backend llama-server; Ollama and external models are
/// names, not files). An unreadable file is an io error naming it.
core::Expected<std::vector<ModelHash>> hash_models(const config::Config& config);

/// The manifest's "models" entries for `models`.
nlohmann::json models_json(const std::vector<ModelHash>& models);

/// Empty when every hashed model has the sha256 the manifest recorded for its name (or the
/// manifest recorded none); else one line per changed model naming both hashes.
std::string changed_models(const nlohmann::json& manifest, const std::vector<ModelHash>& models);

}  // namespace kvsweep::sweep
