#include "kvsweep/sweep/store/model_hashes.hpp"

#include <filesystem>

#include "kvsweep/core/host.hpp"

namespace kvsweep::sweep {

namespace {

/// Whether a model named `path` under `backend` is a file kvsweep hashes: llama-server's and a launch
/// template's (a GGUF, or a hub id that is no file), and a GGUF Ollama imports (else an Ollama tag).
bool hashed_file(const std::string& backend, const std::string& path) {
  std::error_code ec;
  const bool file = backend == "llama-server" || backend == "command" ||
                    (backend == "ollama" && config::is_gguf_path(path));
  return file && std::filesystem::is_regular_file(path, ec);
}

}  // namespace

core::Expected<std::vector<ModelHash>> hash_models(const config::Config& config) {
  std::vector<ModelHash> out;
  for (const auto& m : config.models) {
    ModelHash h{m.name, m.path, false, 0, ""};
    if (hashed_file(config.server.backend, m.path)) {
      std::error_code ec;
      h.is_file = true;
      h.size = std::filesystem::file_size(m.path, ec);
      auto sha = core::sha256_file(m.path);
      if (!sha) return std::unexpected(sha.error());
      h.sha256 = *sha;
    }
    out.push_back(std::move(h));
  }
  return out;
}

core::Expected<std::string> hash_embedder(const config::Config& config) {
  if (!config.embedder || !hashed_file(config.embedder->backend, config.embedder->model)) return std::string();
  return core::sha256_file(config.embedder->model);
}

nlohmann::json models_json(const std::vector<ModelHash>& models) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : models) {
    nlohmann::json j = {{"name", m.name}, {"path", m.path}};
    if (m.is_file) {
      j["size"] = m.size;
      j["sha256"] = m.sha256;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace kvsweep::sweep
