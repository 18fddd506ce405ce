#pragma once
/// An attached llama-server (backend "external") verified before any item: what it says of itself
/// (/props: model_path, model_ftype, the slot's n_ctx, build_info) against the cell, and the K/V
/// types it allocated from the log file the user names (server.log). Pure: the lifecycle and the
/// flavour do the I/O. Without a log, the types are the user's declaration and the cell is recorded
/// kv_unverified ("declared, unverified").

#include <expected>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/server/backend.hpp"

namespace kvsweep::server {

/// What llama-server's GET /props says of the running server; "" / 0 where it says nothing.
struct AttachedProps {
  std::string model_path;
  std::string model_ftype;
  std::string build_info;
  int n_ctx = 0;  // default_generation_settings.n_ctx: one slot's context
  int total_slots = 0;
};

/// Reads /props leniently (a field of another type is left empty).
AttachedProps read_props(const nlohmann::json& props);

/// "" when the attached server serves the cell's model (the same file, or a file of the same name
/// when the server's path is not on this machine) with at least the cell's context; else why not,
/// in words naming both sides.
std::string props_mismatch(const AttachedProps& props, const CellSpec& spec);

/// The text of the last start in a llama-server log (from its last "llama_server: initializing" or
/// "main: build" line); the whole text when neither is there.
std::string last_start(const std::string& log);

/// The K/V types (and cache sizes) the attached server at `url` allocated, from the last start of
/// the log file at `log_path` (its text `log`): that start must say it listens on the URL's port,
/// hold the KV cache line, and agree with /props on the context. Else why the file cannot vouch
/// for this server.
std::expected<EffectiveKv, std::string> effective_from_log(const std::string& log, const std::string& log_path,
                                                           const std::string& url, const AttachedProps& props);

/// An attached OpenAI-compatible server's /v1/models ids against the cell: "" when one of them is the
/// model asked (server.openai.model when set, else the config's model: the same id, or the same file
/// name without ".gguf"), or when the server lists none (nothing to check); else why not.
std::string served_model_mismatch(const std::vector<std::string>& ids, const std::string& asked,
                                  const std::string& configured);

/// One running server is one cell: a second cell attaching to the URL another cell attached to in
/// this invocation would be the first one measured again under another name. Thread-safe.
class OneServerOneCell {
 public:
  /// nullopt when `spec` may attach to `url` (the first cell there, or that cell again after a
  /// restart); else the config_mismatch that refuses it.
  std::optional<StartFailure> claim(const std::string& url, const CellSpec& spec);

 private:
  std::mutex m_mutex;
  std::map<std::string, std::string> m_cell_at;  // URL → the label of the cell attached to it
};

}  // namespace kvsweep::server
