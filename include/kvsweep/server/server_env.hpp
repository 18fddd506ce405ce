#pragma once
/// The environment variables a launched server reads — llama.cpp's LLAMA_*, ggml's GGML_*, Ollama's
/// OLLAMA_*, the GPU runtimes' device selection — and which of kvsweep's own it inherits, so the
/// manifest can record them (`server_env`) and compare can say when one changed.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvsweep::server {

using EnvList = std::vector<std::pair<std::string, std::string>>;

/// Whether a server (or the llama.cpp tools a probe runs) may read the variable: a name starting
/// LLAMA_, GGML_ or OLLAMA_, or one of the device-selection names (CUDA_VISIBLE_DEVICES,
/// HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL, ONEAPI_DEVICE_SELECTOR, …).
bool is_server_env_name(std::string_view name);

/// Whether the variable selects the hardware (CUDA_VISIBLE_DEVICES, …) rather than what a server does:
/// a resumed shard may run on another node's devices.
bool is_device_env_name(std::string_view name);

/// Whether the Ollama backend removes the inherited variable from its server's environment
/// (OLLAMA_*, LLAMA_ARG_*: only the config decides what a cell is; see ollama.hpp).
bool ollama_drops_inherited(std::string_view name);

/// The NAME=VALUE entries of `envp` (environ's form, null-terminated; null reads as empty) that a
/// server of `backend` inherits and reads (is_server_env_name), sorted by name. Empty for
/// `external`, which launches nothing; without the names Ollama drops for `ollama`.
EnvList inherited_server_env(const char* const* envp, std::string_view backend);

/// The environment a server starts with, as far as it reads it: `inherited`, then `set` (the config's
/// server.env), a name in both taking the value from `set` as process::Child does; sorted by name.
EnvList launched_server_env(const EnvList& inherited, const EnvList& set);

}  // namespace kvsweep::server
