#include "kvsweep/server/llama_server.hpp"

#include <sstream>

#include "kvsweep/server/llama_api.hpp"

namespace kvsweep::server {

namespace {

/// /props is provenance: a few KiB (the chat template is the largest part).
constexpr std::size_t kPropsLimit = std::size_t{4} << 20;

nlohmann::json text_or_unknown(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "unknown";
  return j[key];
}

nlohmann::json count_or_unknown(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return "unknown";
  return j[key];
}

}  // namespace

std::vector<std::string> llama_server_argv(const LlamaServerOptions& options, const CellSpec& spec, int port) {
  std::vector<std::string> argv = {
      spec.binary.empty() ? options.binary : spec.binary, "-m", spec.model_path, "--host", "127.0.0.1", "--port", std::to_string(port),
      "-ctk", spec.type_k, "-ctv", spec.type_v, "-np", "1", "-c", std::to_string(spec.n_ctx),
      // -lv 4 prints the KV cache and flash-attention lines we verify the cell with.
      "-lv", "4", "--no-webui", "--log-colors", "off"};
  if (options.embeddings) {
    argv.insert(argv.end(), {"--embeddings", "--pooling", options.pooling});
  }
  argv.insert(argv.end(), spec.extra_args.begin(), spec.extra_args.end());
  return argv;
}

process::LaunchSpec LlamaServerFlavour::launch_spec(const CellSpec& spec, int port) const {
  process::LaunchSpec launch;
  launch.argv = llama_server_argv(m_options, spec, port);
  launch.env = spec.env;
  // Environment variables that would silently change the cell (CLI wins, but warn-free is better).
  launch.unset_env = {"LLAMA_ARG_CACHE_TYPE_K", "LLAMA_ARG_CACHE_TYPE_V", "LLAMA_ARG_MODEL", "LLAMA_ARG_CTX_SIZE",
                      "LLAMA_ARG_N_PARALLEL", "LLAMA_API_KEY"};
  return launch;
}

std::expected<void, ReadyFailure> LlamaServerFlavour::after_ready(ReadyContext& context) const {
  // Provenance only: a server without /props is still usable.
  // Read leniently: a field of another type (or /props not an object) is recorded "unknown".
  if (auto props = context.client.get_json("/props", kPropsLimit)) {
    context.info["build_info"] = text_or_unknown(*props, "build_info");
    if (context.attached) return {};
    context.info["model_path"] = text_or_unknown(*props, "model_path");
    if (props->is_object() && props->contains("default_generation_settings"))
      context.info["n_ctx"] = count_or_unknown((*props)["default_generation_settings"], "n_ctx");
    context.info["total_slots"] = count_or_unknown(*props, "total_slots");
  }
  return {};
}

std::unique_ptr<Api> LlamaServerFlavour::make_api(std::shared_ptr<http::Client> client, const CellSpec&) const {
  return std::make_unique<LlamaApi>(std::move(client));
}

std::expected<std::unique_ptr<Instance>, StartFailure> LlamaServerBackend::start(const CellSpec& spec,
                                                                                const std::atomic<bool>& cancel) {
  return m_lifecycle.launch(m_flavour, spec, cancel);
}

nlohmann::json LlamaServerBackend::describe() {
  if (m_description.is_null()) m_description = describe_binary(m_options.binary);
  return m_description;
}

nlohmann::json LlamaServerBackend::describe_binary(const std::string& binary) {
  // `llama-server --version` prints "version: N (sha)" and "built with …" on stderr. The version is the
  // run's build identity (resume and merge compare it), and a loaded machine can lose it: llama.cpp's
  // logger is not flushed at exit, and a query past 5 s is stopped. An answer without it is asked again.
  constexpr int kAttempts = 3;
  nlohmann::json d = {{"backend", "llama-server"}, {"binary", process::which(binary)}};
  for (int attempt = 0; attempt < kAttempts && !d.contains("version"); ++attempt) {
    std::istringstream in(m_lifecycle.version_output({{binary, "--version"}, {}, {}, {}}));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("version:", 0) == 0) d["version"] = line.substr(9);
      if (line.rfind("built with", 0) == 0) d["built_with"] = line;
    }
  }
  return d;
}

}  // namespace kvsweep::server
