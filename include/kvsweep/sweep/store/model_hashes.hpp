#pragma once
/// The models a run uses, each with its size and sha256, and its embedder's model file: the content
/// identity of the weights a record depends on (checked by `check_identity`, sweep/store/run_identity).

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
  bool is_file = false;     // a file kvsweep hashed (llama-server, a launch template, a GGUF Ollama imports); else a tag
  std::uintmax_t size = 0;  // when is_file
  std::string sha256;       // when is_file
};

/// Hashes every model file of `config`: each model of backend llama-server or a launch template that
/// is a file, and each GGUF file backend ollama imports (Ollama's tags and external models are names,
/// not files). An unreadable file is an io error naming it.
core::Expected<std::vector<ModelHash>> hash_models(const config::Config& config);

/// The sha256 of the embedder's model file (backend llama-server, or a GGUF file Ollama imports); ""
/// when the config has no embedder or it names a model, not a file. An unreadable file is an io error.
core::Expected<std::string> hash_embedder(const config::Config& config);

/// The manifest's "models" entries for `models`.
nlohmann::json models_json(const std::vector<ModelHash>& models);

}  // namespace kvsweep::sweep
