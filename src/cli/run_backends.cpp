#include "kvsweep/cli/run_backends.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/cli/template_options.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/process/child.hpp"
#include "kvsweep/server/lifecycle/external.hpp"
#include "kvsweep/server/openai/launch_template.hpp"
#include "kvsweep/server/llama/llama_server.hpp"
#include "kvsweep/server/ollama/ollama.hpp"
#include "kvsweep/sweep/store/model_hashes.hpp"

namespace kvsweep::cli {

namespace {

/// `found` when it is an executable regular file; else a setup error naming `what` (a directory or a
/// file without the execute bit would only fail when the first cell launches it).
std::string executable_file(const std::string& found, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(found, ec))
    throw core::FatalError(what + " '" + found + "' is a directory; give the executable inside it");
  if (!std::filesystem::is_regular_file(found, ec))
    throw core::FatalError(what + " '" + found + "' is not a file");
  if (::access(found.c_str(), X_OK) != 0)
    throw core::FatalError(what + " '" + found + "' is not executable (chmod +x it, or give another)");
  return found;
}

/// The llama-server binary: an absolute/relative path as given, else $KVSWEEP_LLAMA_BIN/<name>, else PATH.
std::string resolve_binary(const std::string& name) {
  std::string found = process::find_llama_tool(name);
  if (found.empty()) {
    throw core::FatalError("server binary '" + name +
                           "' not found: set server.binary in the config, put it on PATH, or set "
                           "KVSWEEP_LLAMA_BIN=$(scripts/llama-cpp)");
  }
  return executable_file(found, "server binary");
}

/// The ollama binary: a path as given, else $KVSWEEP_OLLAMA_BIN/<name> (scripts/ollama's build), else PATH.
std::string resolve_ollama_binary(const std::string& name) {
  std::string found = process::find_tool(name, "KVSWEEP_OLLAMA_BIN");
  if (found.empty()) {
    throw core::FatalError("ollama binary '" + name + "' not found: set KVSWEEP_OLLAMA_BIN=$(scripts/ollama) (builds "
                           "Ollama 0.30.1 from its Go module, once), put ollama on PATH, or set server.binary to its path");
  }
  return executable_file(found, "ollama binary");
}

/// Where a server comes from: the config's server section (for the cells) or its embedder.
struct ServerSource {
  std::string backend;  // llama-server | ollama | external
  std::string api;      // external: "ollama" speaks Ollama's API, else llama-server's
  std::string binary;   // llama-server, or ollama when it is launched
  std::string url;      // external; ollama: attach to this Ollama instead of launching one
  std::string api_key_env;
  std::string url_user;
  std::string url_password;
  const config::ServerConfig* command = nullptr;  // backend "command": the launch template
  std::string log;                                // external llama-server: its log file (server.log)
};

/// The backend for `source`, its binary resolved now (a missing binary is a setup error);
/// `llama` carries llama-server's other options (embeddings, pooling).
std::unique_ptr<server::Backend> make_backend(const ServerSource& source, server::LlamaServerOptions llama) {
  if (source.backend == "ollama" || (source.backend == "external" && source.api == "ollama")) {
    const std::string binary =
        source.backend == "ollama" && source.url.empty() ? resolve_ollama_binary(source.binary) : std::string();
    return std::make_unique<server::OllamaBackend>(
        server::OllamaOptions{binary, source.url, source.api_key_env, source.url_user, source.url_password});
  }
  if (source.backend == "command") return std::make_unique<server::TemplateBackend>(template_options(*source.command));
  if (source.backend == "external" && source.api == "openai") {
    // A running OpenAI-compatible server (vLLM, SGLang…): its template's serving settings, attached.
    server::TemplateOptions options = template_options(*source.command);
    options.attach = server::TemplateOptions::Attached{source.url, source.api_key_env, source.url_user, source.url_password};
    return std::make_unique<server::TemplateBackend>(std::move(options));
  }
  if (source.backend == "external")
    return std::make_unique<server::ExternalBackend>(
        server::ExternalOptions{source.url, source.api_key_env, source.url_user, source.url_password, source.log});
  llama.binary = resolve_binary(source.binary);
  return std::make_unique<server::LlamaServerBackend>(llama);
}

}  // namespace

std::unique_ptr<server::Backend> make_cell_backend(const config::Config& cfg) {
  const bool external = cfg.server.backend == "external";
  return make_backend(ServerSource{cfg.server.backend, cfg.server.api, cfg.server.binary, external ? cfg.server.url : "",
                                   external ? cfg.server.api_key_env : "", external ? cfg.server.url_user : "",
                                   external ? cfg.server.url_password : "", &cfg.server, cfg.server.log},
                      server::LlamaServerOptions{});
}

void resolve_variant_binaries(const config::Config& cfg, sweep::RunOptions& ropts) {
  for (std::size_t i = 0; i < cfg.variants.size(); ++i) {
    const auto& v = cfg.variants[i];
    if (v.binary.empty()) continue;
    const std::string found = process::find_llama_tool(v.binary);
    if (found.empty())
      throw core::FatalError(cfg.file.string() + ": variants[" + std::to_string(i) + "].binary: '" + v.binary +
                             "' not found (a path, or a name on KVSWEEP_LLAMA_BIN or PATH)");
    ropts.variant_binaries[v.name] =
        executable_file(found, cfg.file.string() + ": variants[" + std::to_string(i) + "].binary");
  }
}

RunningEmbedder start_embedder(const config::Config& cfg, const sweep::RunStore& store) {
  const auto& e = *cfg.embedder;
  server::CellSpec spec;
  spec.model = "embedder";
  spec.model_path = e.model;
  spec.n_ctx = 8192;
  spec.n_ctx_at_most = true;  // Ollama gives an embedding model at most its training context
  spec.log_path = store.log_path("embedder");
  spec.extra_args = e.args;
  spec.ready_timeout = std::chrono::milliseconds(static_cast<long long>(cfg.server.ready_timeout_s * 1000));
  spec.request_timeout = std::chrono::milliseconds(static_cast<long long>(cfg.server.request_timeout_s * 1000));
  // Ollama: its own `ollama serve` at f16 KV (or the Ollama at e.url), never the cell's server.
  const std::string binary = e.backend == "ollama" ? (cfg.server.backend == "ollama" ? cfg.server.binary : "ollama")
                             : cfg.server.backend == "llama-server" ? cfg.server.binary
                                                                    : "llama-server";
  RunningEmbedder running;
  running.backend = make_backend(ServerSource{e.backend, "", binary, e.url, e.api_key_env, e.url_user, e.url_password, nullptr, ""},
                                 server::LlamaServerOptions{"", true, e.pooling});
  if (e.backend == "ollama" && cfg.server.backend == "ollama") spec.env = cfg.server.env;  // the same model store
  auto inst = running.backend->start(spec, cancel_flag());
  if (!inst) throw core::FatalError("embedder failed to start: " + inst.error().message + "\n" + inst.error().log_tail);
  running.instance = std::move(*inst);
  nlohmann::json desc = {{"backend", e.backend}, {"model", e.model},
                         {"pooling", e.pooling}, {"url", e.url}, {"server", running.instance->info()}};
  // The instrument's weights: its identity, the one a resume checks (sweep::hash_embedder).
  if (auto h = sweep::hash_embedder(cfg); h && !h->empty()) desc["sha256"] = *h;
  if (e.backend == "llama-server") desc["server"]["argv"] = nullptr;  // port-specific noise
  running.embedder = std::make_unique<probe::ApiEmbedder>(running.instance->api(), desc);
  return running;
}

}  // namespace kvsweep::cli
