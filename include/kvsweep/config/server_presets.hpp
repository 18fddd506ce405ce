#pragma once
/// The launch templates kvsweep ships (`"preset"` in a config's server section): vLLM, SGLang, TabbyAPI
/// and llama-cpp-python, each with its command line, its documented cache-type names, whether it ties K
/// and V, its readiness check, how it confirms the type it allocated, and what its OpenAI API can do.
/// The facts come from each server's documentation and source (shared/reference/other-servers.md);
/// which of them were run here is in docs/backends-and-servers.md's "Other servers" table.

#include <string>
#include <vector>

#include "kvsweep/config/config.hpp"

namespace kvsweep::config {

struct ServerPreset {
  std::string name;    // "vllm"
  std::string binary;  // the default server.binary ({binary} in the command)
  CommandConfig command = {};  // set field by field in each preset
};

const std::vector<ServerPreset>& server_presets();
/// The preset called `name`, or null.
const ServerPreset* find_server_preset(const std::string& name);
std::vector<std::string> server_preset_names();

}  // namespace kvsweep::config
