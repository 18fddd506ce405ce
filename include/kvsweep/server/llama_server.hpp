#pragma once
/// The llama-server backend: one llama-server process per cell, bound to 127.0.0.1 on a
/// free port, ready when /health answers 200, its log parsed for the effective KV types.

#include <string>

#include "kvsweep/server/backend.hpp"

namespace kvsweep::server {

struct LlamaServerOptions {
  std::string binary = "llama-server";
  bool embeddings = false;        // an embedding instrument: --embeddings --pooling <pooling>
  std::string pooling = "mean";
};

class LlamaServerBackend final : public Backend {
 public:
  explicit LlamaServerBackend(LlamaServerOptions options) : m_options(std::move(options)) {}
  std::string kind() const override { return "llama-server"; }
  std::expected<std::unique_ptr<Instance>, StartFailure> start(const CellSpec& spec,
                                                             const std::atomic<bool>& cancel) override;
  nlohmann::json describe() override;

 private:
  LlamaServerOptions m_options;
  nlohmann::json m_description;
};

/// The argv used to launch llama-server for a cell (exposed for tests and --dry-run).
std::vector<std::string> llama_server_argv(const LlamaServerOptions& options, const CellSpec& spec, int port);

}  // namespace kvsweep::server
