#pragma once
/// The sweep configuration: structs with defaults, loaded from JSON (comments allowed)
/// and validated before anything starts; errors name the file and the key.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/slot_env.hpp"
#include "kvsweep/core/cell_key.hpp"

namespace kvsweep::config {

struct ServerConfig;
/// The nine cache types llama-server accepts for -ctk/-ctv.
const std::vector<std::string>& cache_types();
/// The cache types a grid may name on `server`: a launch template's own list, else llama-server's.
const std::vector<std::string>& cache_types(const ServerConfig& server);

class Site;
/// Fails at `site` unless `type` is one of cache_types(): "unknown cache type 'q4' (did you mean
/// 'q4_0'?); valid types: f32, …".
void check_cache_type(const std::string& type, const Site& site);

/// How a launched server's effective KV type is read back (backend "command"); see
/// server::KvConfirm. Exactly one of `log` and `http` is set, or neither (every cell kv_unverified).
struct KvConfirmConfig {
  std::string log;        // "llama.cpp" (its KV cache line) or a regex: group 1 K, group 2 V (one group: both)
  std::string http;       // an endpoint path, e.g. "/metrics"
  std::string format;     // http: "json" or "prometheus"
  std::string pointer;    // json: a JSON pointer to K's type (or both)
  std::string pointer_v;  // json: V's, when the server has two
  std::string metric;     // prometheus: the metric, e.g. "vllm:cache_config_info"
  std::string label;      // prometheus: its label holding the type, e.g. "cache_dtype"
};

/// The OpenAI API as a launched server speaks it (backend "command").
struct OpenAiConfig {
  std::string model;                 // the request's "model"; "" = the first id of /v1/models
  std::string tokenizer = "none";    // none | llama-server | vllm | tabbyapi
  std::string prompt_logprobs = "none";  // none | vllm | sglang: how it answers every prompt position's top-n
  std::vector<std::string> capabilities;  // what the server can do (server::Capability names)
  bool cache_prompt = false;         // send llama.cpp's cache_prompt field
  nlohmann::json extra = nlohmann::json::object();  // merged into every generation request
};

/// A server started from a launch template (backend "command"), filled by a preset
/// (config/server_presets) and the keys the config sets over it.
struct CommandConfig {
  std::string preset;                         // "" or a preset's name
  std::string server = "server";              // the server's name in messages
  std::vector<std::string> argv;              // with placeholders {binary} {model} {host} {port} {type_k} {type_v} {ctx}
  std::vector<std::string> types;             // the cache types a grid may name, in "all" order
  std::vector<std::pair<std::string, std::string>> spelling;  // type → what the server is given
  bool tied = false;                          // one setting for K and V: symmetric grids only
  std::string reference;                      // the default reference cell ("" = f16/f16)
  std::string ready_path = "/health";
  int ready_status = 200;
  std::string listening;                      // the log line that says it holds the port
  KvConfirmConfig confirm;
  OpenAiConfig openai;
};

struct ServerConfig {
  std::string backend = "llama-server";  // llama-server | ollama | external | command
  std::string binary = "llama-server";   // resolved against KVSWEEP_LLAMA_BIN / PATH; "ollama" for backend ollama
  std::vector<std::string> args;         // extra args for every cell, e.g. ["-fa","on"]
  std::vector<std::pair<std::string, std::string>> env;
  int ctx = 0;                           // -c; 0 = from the probes' needs (at least 4096)
  double ready_timeout_s = 300;
  double request_timeout_s = 600;
  double stop_grace_s = 10;
  std::string url;                       // external: the server's base URL, without userinfo
  std::string url_user;                  // the URL's user:password, split off at load; never written
  std::string url_password;
  std::string api_key_env;               // external: env var holding the API key
  std::string api = "llama-server";      // external: which API the server speaks (llama-server | ollama); command: openai
  // external (api llama-server): the attached server's own log file, read for the K/V types it allocated
  // (its last start); "" = the types are declared, unverified. Not part of the config's identity: a
  // resume after the server restarted may name another file.
  std::string log;
  CommandConfig command;                 // backend "command"
};

/// True when the cells run on Ollama (backend ollama, or external with api ollama): one KV type
/// for K and V, models are tags.
bool uses_ollama(const ServerConfig& server);
/// A models[].path ending in ".gguf" (any case): a file even under backend "ollama", where it is
/// imported into kvsweep's own model store; anything else there is an Ollama tag.
bool is_gguf_path(std::string_view path);

/// One named setting of the server that a sweep compares, beside K and V: extra args, extra
/// environment, a context size or another llama-server binary. The grid is models × variants ×
/// K × V; every variant has its own reference cell. No variants: one unnamed variant (as before).
struct VariantConfig {
  std::string name;
  std::vector<std::string> args;                           // after server.args
  std::vector<std::pair<std::string, std::string>> env;    // after server.env (the last value of a name wins)
  int ctx = 0;                                             // -c; 0 = server.ctx
  std::string binary;                                      // llama-server binary; empty = server.binary
};

struct ModelConfig {
  std::string name;
  std::string path;
};

enum class Order { shuffle, as_listed };

struct GridConfig {
  std::vector<std::string> k;
  std::vector<std::string> v;
  bool tied = false;                    // only cells with K == V
  std::vector<core::KvPair> include;    // extra cells ("K/V" in the file, parsed once here)
  std::vector<core::KvPair> exclude;    // cells to drop
  core::KvPair reference;               // f16/f16 unless the file says
  bool excludes(const core::KvPair& cell) const {
    return std::find(exclude.begin(), exclude.end(), cell) != exclude.end();
  }
  Order order = Order::shuffle;
  std::uint64_t seed = 7;
};

struct EmbedderConfig {
  std::string backend = "llama-server";  // llama-server | external | ollama
  std::string model;                     // path (llama-server), model name (external) or tag (ollama)
  std::string pooling = "mean";
  std::vector<std::string> args;
  std::string url;                       // external; ollama: attach to this Ollama instead of launching one
  std::string url_user;                  // the URL's user:password, split off at load; never written
  std::string url_password;
  std::string api_key_env;
};

/// Adaptive sweeps (`sweep.adaptive`, `kvsweep run --adaptive`): a cell's items run in a seeded order and
/// the cell stops once every gated metric's verdict against the reference is settled; the items it does
/// not run are recorded `skipped` (reason `settled`). Off by default; the section turns it on unless it
/// says "enabled": false.
struct AdaptiveConfig {
  bool enabled = false;
  int min_items = 5;          // paired items before any verdict (the normal mixture needs 5 at alpha 0.05)
  double alpha = 0.05;        // each verdict's error rate, held although checked after every item
  /// Binary metrics: stop with "unknown" once the full design's predictive probability of a verdict is
  /// below this (0: only when no outcome of the items left could give one).
  double futility = 0.1;
  std::uint64_t seed = 1;     // the items' order in every cell
};

/// How a sweep is executed on this host; not part of the config hash. Results do not depend on it —
/// adaptive included: it decides which items run, never what an item answers, and its skipped records
/// say so; keeping it out of the hash lets `--resume` without `--adaptive` complete an adaptive run.
struct SweepConfig {
  int parallel_cells = 1;          // cells run at once, each server in its own slot 0..N-1
  std::vector<SlotEnv> slot_env;   // per-slot environment, e.g. CUDA_VISIBLE_DEVICES={slot}
  AdaptiveConfig adaptive;
};

struct Config {
  std::filesystem::path file;
  std::filesystem::path base_dir;       // relative paths resolve against the config's directory
  std::string name;
  ServerConfig server;
  std::vector<ModelConfig> models;
  std::vector<VariantConfig> variants;  // empty: the grid has no variant axis
  GridConfig grid;
  nlohmann::json probes = nlohmann::json::array();  // validated by the probe factories
  std::optional<EmbedderConfig> embedder;
  SweepConfig sweep;
  std::string output_dir = "runs";
  nlohmann::json raw;                   // the parsed document, for the manifest
};

/// Reads and validates a config; throws core::FatalError("file: key: what").
Config load(const std::filesystem::path& file);
/// Validates an already-parsed document (file is used for messages and base_dir).
Config from_json(const nlohmann::json& doc, const std::filesystem::path& file);

/// A stable hash of what determines results (the resolved config minus output_dir), hex.
std::string config_hash(const Config& config);

/// Resolved config as JSON (defaults filled in).
nlohmann::json to_json(const Config& config);

}  // namespace kvsweep::config
