#pragma once
/// Backends start a server for a cell (or attach to one) and hand out its Api;
/// one interface for llama-server, Ollama and external servers.

#include <atomic>
#include <chrono>
#include <expected>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/server/api.hpp"
#include "kvsweep/server/attention_path.hpp"
#include "kvsweep/server/outcome.hpp"

namespace kvsweep::server {

/// Everything needed to start one cell's server: its key (model, variant, K, V; f16/f16 unless
/// set) and how to launch it.
struct CellSpec : core::CellKey {
  CellSpec() : core::CellKey{"", "", "f16", "f16"} {}
  std::string model_path;      // file (llama-server) or tag (ollama)
  std::string binary;          // this cell's llama-server binary (a variant's); empty: the backend's
  int n_ctx = 4096;
  // The embedder's context is a ceiling, not a setting of the cell: a server that allocates less
  // (Ollama caps num_ctx at the model's training context, e.g. 512 for all-MiniLM-L6-v2) is fine.
  bool n_ctx_at_most = false;
  std::filesystem::path log_path;
  std::vector<std::string> extra_args;                     // the user's server args
  std::vector<std::pair<std::string, std::string>> env;    // the user's extra environment
  std::chrono::milliseconds ready_timeout{300000};
  std::chrono::milliseconds request_timeout{600000};
  std::chrono::milliseconds stop_grace{10000};
};

/// What the server says it allocated (from its log); `found` is false when the log
/// holds no such line (e.g. an external server).
struct EffectiveKv {
  bool found = false;
  std::string type_k;
  std::string type_v;
  double k_mib = 0;
  double v_mib = 0;
  double total_mib = 0;
  std::string flash_attn;  // enabled | disabled | auto | "" when unknown
  // Whether the server rotates K / V with a Hadamard matrix before writing a quantized cache
  // (llama.cpp since April 2026: `llama_kv_cache: attn_rot_k = 1`; off with
  // LLAMA_ATTN_ROT_DISABLE=1). -1 when the log does not say (older builds, external servers).
  int attn_rot_k = -1;
  int attn_rot_v = -1;
  int n_ctx = 0;           // the context the server allocated (`llama_context: n_ctx = N`); 0 when unknown
  // The model's training context where llama-server capped each slot at it ("the slot context (N)
  // exceeds the training context of the model (M) - capping"): a request past M is refused. 0 when not.
  int slot_cap = 0;
  std::string architecture;  // general.architecture from the model loader's lines ("" when not logged)
  bool declared = false;   // true when the user declared the types (external / attach)
  AttentionFacts attention;  // the build, the evidence of the attention kernel, the buffers per device
  // The attention path from this log alone; `fallback?` needs the reference cell's splits, so the
  // manifest's `path` is decided across cells (sweep::resolve_attention_paths).
  PathVerdict path;
};
nlohmann::json to_json(const EffectiveKv& e);

/// Parses llama.cpp's startup log for the KV cache line, the flash-attention state, the
/// attention-rotation switches, and the attention path and buffers (parse_attention_facts).
EffectiveKv parse_effective_kv(const std::string& log);

/// What the cell asked of the server beyond K and V — its context size (also each slot's, which
/// llama-server caps at the model's training context), flash attention (`-fa on|off`
/// in its args), attention rotation disabled (LLAMA_ATTN_ROT_DISABLE set to a non-zero number in its
/// environment) — checked against what the log shows. Returns "" when nothing contradicts the
/// request (a setting the log does not show is not a contradiction), else what differs, e.g.
/// "requested flash attention off (-fa off), the server ran it enabled".
std::string check_settings(const EffectiveKv& effective, const CellSpec& spec);

/// Why a server could not be brought up: `unsupported`, `load_failed`, `config_mismatch` or `cancelled`.
struct StartFailure {
  CellOutcome outcome = CellOutcome::load_failed;
  std::string message;
  std::string log_tail;   // the server's own error lines and its last lines (server_error_lines)
  EffectiveKv effective;  // what the log showed (config_mismatch)
};

/// Whether the effective K/V types match the cell's (server::check_kv).
enum class KvCheck { verified, declared, unverified, mismatch };

/// A running (or attached) server.
class Instance {
 public:
  virtual ~Instance() = default;
  virtual Api& api() = 0;
  /// False once the server process has died (always true for attached servers).
  virtual bool alive() = 0;
  /// Stops the server (SIGTERM, grace, SIGKILL); no-op for attached servers.
  virtual void stop() = 0;
  virtual EffectiveKv effective() const = 0;
  /// The K/V verdict taken once when the server was ready (a mismatch never starts). By default
  /// what effective() alone says: declared, or unverified when no KV line was found.
  virtual KvCheck kv_check() const {
    const EffectiveKv e = effective();
    return e.declared ? KvCheck::declared : e.found ? KvCheck::verified : KvCheck::unverified;
  }
  /// Seconds from launch to ready.
  virtual double ready_seconds() const = 0;
  /// Provenance: /props build_info, model path, n_ctx, etc.
  virtual nlohmann::json info() const = 0;
  virtual std::string log_tail(std::size_t lines = 20) const = 0;
  /// The server's own error lines since it started, and its last lines (server_error_lines).
  virtual std::string error_lines() const { return log_tail(20); }
  /// How the process ended, when it has ("exited with code 1", "killed by signal 9").
  virtual std::string exit_description() { return {}; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string kind() const = 0;
  virtual std::expected<std::unique_ptr<Instance>, StartFailure> start(const CellSpec& spec,
                                                                     const std::atomic<bool>& cancel) = 0;
  /// Provenance of the server build (e.g. `llama-server --version`), once per run.
  virtual nlohmann::json describe() = 0;
  /// The same for another binary of this backend (a variant's `binary`).
  virtual nlohmann::json describe_binary(const std::string& binary) { return {{"binary", binary}}; }
};

/// The outcome for a server that exited during load, judged from its log.
CellOutcome classify_load_failure(const std::string& log);

/// What a failing server said: its error lines (llama.cpp's `E` level, Ollama's level=ERROR) and
/// the last `last` lines, in log order, without the rest of its start-up log.
std::string server_error_lines(const std::string& log, std::size_t last = 3);

/// A free TCP port on 127.0.0.1 (bind to port 0 and read it back).
int free_port();

}  // namespace kvsweep::server
