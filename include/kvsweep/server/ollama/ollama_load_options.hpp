#pragma once
/// The load options every request to an Ollama model carries: options.num_ctx and, when set,
/// options.use_mmap; a request with other values would reload the model mid-cell.

#include <nlohmann/json.hpp>

#include "kvsweep/server/ollama/ollama.hpp"

namespace kvsweep::server {

nlohmann::json ollama_load_options(const OllamaModelOptions& model);

}  // namespace kvsweep::server
