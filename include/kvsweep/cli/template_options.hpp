#pragma once
/// The launch template of a config's server section (backend "command") as the server layer takes it:
/// its binary found now (a missing one is a setup error), its confirmation and OpenAI options resolved.

#include "kvsweep/config/config.hpp"
#include "kvsweep/server/openai/launch_template.hpp"

namespace kvsweep::cli {

/// Throws core::FatalError when the binary ({binary}) is not found.
server::TemplateOptions template_options(const config::ServerConfig& server);

}  // namespace kvsweep::cli
