#pragma once
/// Before the grid: the servers a run attaches to instead of launching (backend "external" for the
/// cells, an external or attached-Ollama embedder) must answer at their URLs.

#include "kvsweep/config/config.hpp"

namespace kvsweep::cli {

/// Throws core::FatalError "<file>: server.url http://…: nothing answers (…); start the server, or
/// fix server.url" when an attached server does not answer HTTP within a few seconds.
void check_attached_servers(const config::Config& config);

}  // namespace kvsweep::cli
