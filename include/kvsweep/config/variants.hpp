#pragma once
/// The `variants` axis of a config: named server settings swept beside K and V, and the checks
/// they share with `server` (arguments and environment kvsweep owns per cell).

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/config/keys.hpp"

namespace kvsweep::config {

/// Reads `doc["variants"]` (absent: none). `server` is the config's server section, already read;
/// relative binary paths resolve against `base_dir`. Throws core::FatalError naming file and key.
///
///   "variants": [
///     {"name": "rot-on",  "env": {"LLAMA_ATTN_ROT_DISABLE": "0"}},
///     {"name": "rot-off", "env": {"LLAMA_ATTN_ROT_DISABLE": "1"}},
///     {"name": "fa-off",  "args": ["-fa", "off"]},
///     {"name": "ctx32k",  "ctx": 32768},
///     {"name": "build-b", "binary": "/opt/llama-b/llama-server"}
///   ]
std::vector<VariantConfig> read_variants(const nlohmann::json& doc, const ServerConfig& server,
                                         const std::filesystem::path& base_dir, const Site& site);

/// Fails when `args` sets what kvsweep sets per cell (-ctk, -c, --port, …).
void check_server_args(const std::vector<std::string>& args, const Site& site);
/// Fails at `site` on a "--flag=value" argument: llama.cpp's tools take flag and value as two
/// arguments, and llama-server would exit echoing the whole argument (a secret too) into its log.
void check_llama_arg_forms(const std::vector<std::string>& args, const Site& site);
/// Fails when `env` sets a variable kvsweep sets per Ollama cell (OLLAMA_KV_CACHE_TYPE, …).
void check_ollama_env(const std::vector<std::pair<std::string, std::string>>& env, const Site& site);
/// An object of NAME: "value" strings, in document order; absent: empty.
std::vector<std::pair<std::string, std::string>> get_env(const nlohmann::json& obj, const std::string& key,
                                                         const Site& site);

nlohmann::json to_json(const VariantConfig& variant);

/// The variant named `name` of `config`; nullptr for "" (a config without variants) or an unknown name.
const VariantConfig* find_variant(const Config& config, const std::string& name);

}  // namespace kvsweep::config
