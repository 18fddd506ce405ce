#pragma once
/// The server section of backend "command" (a launch template): its preset, then the keys the config
/// sets over it (command, cache_types, kv_tied, reference, ready, listening, confirm, openai), checked
/// whole before anything starts.
//
//   "server": {
//     "preset": "vllm",                     // implies "backend": "command"; fills every key below
//     "binary": "/opt/vllm/bin/vllm",       // {binary}; the preset's default otherwise
//     "command": ["{binary}", "serve", "{model}", "--host", "{host}", "--port", "{port}",
//                 "--kv-cache-dtype", "{type_k}", "--max-model-len", "{ctx}"],
//     "args": ["--gpu-memory-utilization", "0.8"],   // appended to the command
//     "env": {"VLLM_LOGGING_LEVEL": "INFO"},         // values may hold placeholders
//     "cache_types": ["fp8", "fp8_e5m2"]  or  {"f16": "1", "q8_0": "8"},  // names, or names → spelling
//     "kv_tied": true,                       // one setting for K and V: symmetric grids only
//     "reference": "auto/auto",              // the grid's default reference cell
//     "ready": {"path": "/health", "status": 200},
//     "listening": "Uvicorn running on http://{host}:{port}",
//     "confirm": {"http": "/metrics", "format": "prometheus", "metric": "vllm:cache_config_info",
//                 "label": "cache_dtype"}   // or {"http": …, "format": "json", "pointer": "/kv_cache_dtype"},
//                                           // {"log": "llama.cpp"}, {"log": "<regex: K, V groups>"}, {}
//     "openai": {"model": "", "tokenizer": "vllm", "capabilities": {"tool_calls": true},
//                "cache_prompt": false, "extra": {"repetition_penalty": 1.0}}
//   }

#include <string>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/config/keys.hpp"

namespace kvsweep::config {

/// The keys a command server section may hold beside the common ones (backend, binary, args, env, …).
const std::vector<std::string>& command_server_keys();

/// Reads the command server of `sj` (its preset first); `binary` gets the preset's default when the
/// section names none. Throws core::FatalError("file: server.key: …").
/// `attached`: a running server (backend "external", api "openai"): nothing is launched, so there is
/// no command and no listening line, and `command_launch_keys()` are refused.
CommandConfig read_command_server(const nlohmann::json& sj, const Site& site, std::string& binary, bool attached = false);
/// The keys of a launch template that only a launch uses: "command", "listening".
const std::vector<std::string>& command_launch_keys();

/// The command server as the manifest and the config hash hold it (every resolved value).
nlohmann::json to_json(const CommandConfig& command);

}  // namespace kvsweep::config
