#pragma once
/// The choice of backend for `kvsweep run`: the cells' server (llama-server, Ollama, an external server,
/// a launch template), each variant's own llama-server binary and the run's embedding server, each
/// binary resolved before anything starts (a missing one is a setup error and leaves no run directory).

#include <memory>

#include "kvsweep/config/config.hpp"
#include "kvsweep/probe/telephone/embedder.hpp"
#include "kvsweep/server/backend.hpp"
#include "kvsweep/sweep/run/runner.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::cli {

/// The cells' backend, its binary resolved now: a missing binary leaves no run directory behind.
/// The cells' Ollama is always launched (ollama serve per cell), never attached to.
std::unique_ptr<server::Backend> make_cell_backend(const config::Config& cfg);

/// Each variant's own llama-server binary, found now (KVSWEEP_LLAMA_BIN, PATH) and given to the runner.
void resolve_variant_binaries(const config::Config& cfg, sweep::RunOptions& ropts);

/// The embedding server of a run and the instrument over it; it stops when this ends.
struct RunningEmbedder {
  std::unique_ptr<server::Backend> backend;
  std::unique_ptr<server::Instance> instance;
  std::unique_ptr<probe::Embedder> embedder;
};

/// Starts the config's embedder: an instrument, started once per run, the same for every cell.
RunningEmbedder start_embedder(const config::Config& cfg, const sweep::RunStore& store);

}  // namespace kvsweep::cli
