#include "kvsweep/server/llama/llama_server.hpp"

#include <cerrno>
#include <cstring>
#include <sstream>

#include "kvsweep/core/read_file.hpp"
#include "kvsweep/server/lifecycle/attach_verify.hpp"
#include "kvsweep/server/llama/llama_api.hpp"

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

/// An attached server, before any item: its model and context (/props) are the cell's, and its K/V
/// types are read from the log the user named (server/attach_verify); without one they stay declared.
std::expected<void, ReadyFailure> verify_attached(ReadyContext& context) {
  auto props = context.client.get_json("/props", kPropsLimit);
  if (!props)
    return std::unexpected(ReadyFailure{"while answering /props",
                                        "the attached server does not answer GET /props (" + props.error().message +
                                            "), so the model it serves cannot be checked: attach a llama-server",
                                        CellOutcome::config_mismatch});
  const AttachedProps said = read_props(*props);
  context.info["build_info"] = said.build_info.empty() ? nlohmann::json("unknown") : nlohmann::json(said.build_info);
  context.info["model_path"] = said.model_path;
  context.info["model_ftype"] = said.model_ftype;
  context.info["n_ctx"] = said.n_ctx;
  context.info["total_slots"] = said.total_slots;
  if (const std::string differs = props_mismatch(said, context.spec); !differs.empty())
    return std::unexpected(ReadyFailure{"while checking /props", "the attached server is not this cell's: " + differs,
                                        CellOutcome::config_mismatch});
  if (context.attached_log.empty()) {
    context.info["kv_types"] = "declared, unverified";
    context.info["kv_unconfirmed"] = "declared by the config, unverified: an attached llama-server does not report its "
                                     "K/V types (name the file it logs to, at -lv 4, in server.log to verify them)";
    return {};
  }
  auto text = core::read_file(context.attached_log, core::Links::follow);
  if (!text)
    return std::unexpected(ReadyFailure{"while reading server.log",
                                        "server.log '" + context.attached_log + "': " + std::strerror(errno),
                                        CellOutcome::config_mismatch});
  auto effective = effective_from_log(*text, context.attached_log, context.client.base_url(), said);
  if (!effective)
    return std::unexpected(ReadyFailure{"while reading server.log", effective.error(), CellOutcome::config_mismatch});
  context.info["kv_types"] = "from server.log " + context.attached_log;
  context.effective = *effective;
  return {};
}

std::expected<void, ReadyFailure> LlamaServerFlavour::after_ready(ReadyContext& context) const {
  if (context.attached) return verify_attached(context);
  // Provenance only: a server kvsweep launched is checked by its log; one without /props is still usable.
  // Read leniently: a field of another type (or /props not an object) is recorded "unknown".
  if (auto props = context.client.get_json("/props", kPropsLimit)) {
    context.info["build_info"] = text_or_unknown(*props, "build_info");
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
