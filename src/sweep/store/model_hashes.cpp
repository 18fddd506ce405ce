#include "kvsweep/sweep/store/model_hashes.hpp"

#include <filesystem>

#include "kvsweep/core/host.hpp"

namespace kvsweep::sweep {

core::Expected<std::vector<ModelHash>> hash_models(const config::Config& config) {
  std::vector<ModelHash> out;
  for (const auto& m : config.models) {
    ModelHash h{m.name, m.path, false, 0, ""};
    std::error_code ec;
    // A launch template's model may be a local file (a GGUF) or a hub id: hashed when it is a file.
    const bool launched = config.server.backend == "llama-server" || config.server.backend == "command";
    if (launched && std::filesystem::is_regular_file(m.path, ec)) {
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

std::string changed_models(const nlohmann::json& manifest, const std::vector<ModelHash>& models) {
  const nlohmann::json recorded = manifest.is_object() ? manifest.value("models", nlohmann::json::array())
                                                       : nlohmann::json::array();
  std::string out;
  for (const auto& m : models) {
    if (!m.is_file || !recorded.is_array()) continue;
    for (const auto& old : recorded) {
      if (!old.is_object() || old.value("name", "") != m.name) continue;
      const auto sha = old.find("sha256");
      if (sha == old.end() || !sha->is_string() || *sha == m.sha256) continue;
      out += (out.empty() ? "" : "\n") + std::string("model '") + m.name + "' (" + m.path + ") changed since the run "
             "started: sha256 " + sha->get<std::string>() + " then, " + m.sha256 + " now";
    }
  }
  return out;
}

}  // namespace kvsweep::sweep
