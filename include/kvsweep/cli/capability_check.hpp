#pragma once
/// Before anything starts: what the cells' server can do (server::Capabilities, from the config) against
/// what each probe needs (Probe::needs). A need without a text-only form refuses the run, naming the
/// probe and the capability; one with a fallback is said once on stderr.

#include <memory>
#include <string>
#include <vector>

#include "kvsweep/config/config.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/server/capabilities.hpp"

namespace kvsweep::cli {

/// What the cells' server offers: a launch template's declared capabilities, Ollama's, or everything
/// (llama-server, an external llama-server).
server::Capabilities server_capabilities(const config::ServerConfig& server);

/// Throws core::FatalError naming every (probe, capability) the server lacks that the probe cannot run
/// without; returns one line per probe that will run its text-only form instead.
std::vector<std::string> check_capabilities(const config::Config& config,
                                            const std::vector<std::unique_ptr<probe::Probe>>& probes);

}  // namespace kvsweep::cli
