#pragma once
/// The llama-server backend: one llama-server process per cell, bound to 127.0.0.1 on a
/// free port, ready when /health answers 200, its log parsed for the effective KV types.

#include <string>

#include "kvsweep/server/backend.hpp"
#include "kvsweep/server/lifecycle/lifecycle.hpp"

namespace kvsweep::server {

struct LlamaServerOptions {
  std::string binary = "llama-server";
  bool embeddings = false;        // an embedding instrument: --embeddings --pooling <pooling>
  std::string pooling = "mean";
};

/// llama-server's part of the lifecycle (also the external backend's, attached to a URL).
class LlamaServerFlavour final : public Flavour {
 public:
  explicit LlamaServerFlavour(LlamaServerOptions options) : m_options(std::move(options)) {}
  std::string who() const override { return "llama-server"; }
  std::optional<process::LlamaProgram> llama_program() const override { return process::LlamaProgram::server; }
  process::LaunchSpec launch_spec(const CellSpec& spec, int port) const override;
  std::string ready_path() const override { return "/health"; }
  /// llama-server logs "llama_server: model loaded" (older builds "main: model loaded") after the KV
  /// cache, context and rotation lines.
  std::string log_complete_marker() const override { return "model loaded"; }
  /// "srv  llama_server: listening on http://127.0.0.1:<port>" (older builds: "main: server is listening
  /// on http://127.0.0.1:<port> - starting the main loop"), logged once the model is loaded.
  std::string listening_line(int port) const override { return "listening on http://127.0.0.1:" + std::to_string(port); }
  /// Reads /props (build_info; for a launched server also model_path, n_ctx, total_slots).
  std::expected<void, ReadyFailure> after_ready(ReadyContext& context) const override;
  std::unique_ptr<Api> make_api(std::shared_ptr<http::Client> client, const CellSpec& spec) const override;

 private:
  LlamaServerOptions m_options;
};

class LlamaServerBackend final : public Backend {
 public:
  explicit LlamaServerBackend(LlamaServerOptions options, process::Launcher& launcher = process::child_launcher(),
                              ReadyProbe& probe = http_ready_probe())
      : m_options(options), m_flavour(std::move(options)), m_lifecycle(launcher, probe) {}
  std::string kind() const override { return "llama-server"; }
  std::expected<std::unique_ptr<Instance>, StartFailure> start(const CellSpec& spec,
                                                             const std::atomic<bool>& cancel) override;
  nlohmann::json describe() override;
  nlohmann::json describe_binary(const std::string& binary) override;

 private:
  LlamaServerOptions m_options;
  LlamaServerFlavour m_flavour;
  Lifecycle m_lifecycle;
  nlohmann::json m_description;
};

/// The argv used to launch llama-server for a cell (exposed for tests and --dry-run).
std::vector<std::string> llama_server_argv(const LlamaServerOptions& options, const CellSpec& spec, int port);

}  // namespace kvsweep::server
