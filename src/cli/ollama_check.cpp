#include "kvsweep/cli/ollama_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/server/ollama/ollama.hpp"

namespace kvsweep::cli {

void check_ollama_grid(const config::Config& cfg, const std::string& version) {
  const auto accepted = server::ollama_accepted_kv_types(version);
  if (accepted.empty()) return;
  std::vector<std::string> asked = cfg.grid.k;
  asked.push_back(cfg.grid.reference.type_k);
  for (const auto& pair : cfg.grid.include) asked.push_back(pair.type_k);
  std::string refused;
  for (const auto& t : asked)
    if (std::find(accepted.begin(), accepted.end(), t) == accepted.end() && refused.find(" " + t + ",") == std::string::npos)
      refused += " " + t + ",";
  if (refused.empty()) return;
  refused.pop_back();
  throw core::FatalError(cfg.file.string() + ": grid:" + refused + ": Ollama " + version +
                         " accepts only f16, q8_0 and q4_0 for OLLAMA_KV_CACHE_TYPE (it runs anything else as f16); "
                         "remove those types from grid.k, or use Ollama 0.30 or newer (scripts/ollama installs "
                         "it), which passes every llama.cpp type to llama-server");
}

int print_ollama_models(const config::Config& cfg, server::Backend& backend) {
  auto* ollama = dynamic_cast<server::OllamaBackend*>(&backend);
  if (!ollama || cfg.server.backend != "ollama") return 0;
  std::vector<std::string> tags;
  for (const auto& m : cfg.models)
    if (!config::is_gguf_path(m.path)) tags.push_back(m.path);
  const bool embedder_here = cfg.embedder && cfg.embedder->backend == "ollama" && cfg.embedder->url.empty();
  if (embedder_here && std::find(tags.begin(), tags.end(), cfg.embedder->model) == tags.end())
    tags.push_back(cfg.embedder->model);
  server::CellSpec spec;
  spec.model = "plan";
  spec.n_ctx = 512;
  spec.env = cfg.server.env;
  spec.log_path = std::filesystem::temp_directory_path() / ("kvsweep-plan-ollama-" + std::to_string(::getpid()) + ".log");
  spec.ready_timeout = std::chrono::milliseconds(static_cast<long long>(cfg.server.ready_timeout_s * 1000));
  spec.request_timeout = std::chrono::milliseconds(static_cast<long long>(cfg.server.request_timeout_s * 1000));
  auto inventory = ollama->check_models(spec, tags, cancel_flag());
  std::error_code ec;
  std::filesystem::remove(spec.log_path, ec);
  if (!inventory) {
    std::printf("ollama: could not ask it for the models: %s\n", inventory.error().message.c_str());
    return 0;
  }
  std::printf("ollama: %s, version %s\n", backend.describe().value("binary", "ollama").c_str(),
              inventory->version.c_str());
  int missing = 0;
  for (const auto& m : cfg.models) {
    if (config::is_gguf_path(m.path)) {
      std::printf("  model %s: GGUF file, imported into %s at the first cell (ollama create)\n", m.name.c_str(),
                  server::ollama_import_store().c_str());
      continue;
    }
    const auto it = std::find_if(inventory->tags.begin(), inventory->tags.end(),
                                 [&](const auto& t) { return t.first == m.path; });
    const bool present = it != inventory->tags.end() && it->second;
    missing += present ? 0 : 1;
    std::printf("  model %s: tag %s %s\n", m.name.c_str(), m.path.c_str(),
                present ? "is in the model store" : ("is missing: ollama pull " + m.path).c_str());
  }
  if (embedder_here) {
    const auto it = std::find_if(inventory->tags.begin(), inventory->tags.end(),
                                 [&](const auto& t) { return t.first == cfg.embedder->model; });
    const bool present = it != inventory->tags.end() && it->second;
    missing += present ? 0 : 1;
    std::printf("  embedder: tag %s %s\n", cfg.embedder->model.c_str(),
                present ? "is in the model store" : ("is missing: ollama pull " + cfg.embedder->model).c_str());
  }
  if (missing > 0) {
    const auto store = std::find_if(cfg.server.env.begin(), cfg.server.env.end(),
                                    [](const auto& kv) { return kv.first == "OLLAMA_MODELS"; });
    std::printf("  %d tag(s) to pull before the run (into %s, the store the cells use)\n", missing,
                store != cfg.server.env.end() ? store->second.c_str() : "~/.ollama/models, Ollama's default");
  }
  return missing;
}

}  // namespace kvsweep::cli
