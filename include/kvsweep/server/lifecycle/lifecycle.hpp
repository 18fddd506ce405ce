#pragma once
/// The one server lifecycle: launch through a process::Launcher (or attach to a URL), the log and
/// its offset, one ready-wait loop (endpoint, deadline, cancel, child alive), the effective-KV
/// check, stop, and the version probe. A backend brings only its Flavour.

#include <atomic>
#include <chrono>
#include <expected>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/http/client.hpp"
#include "kvsweep/http/credentials.hpp"
#include "kvsweep/process/known_crash.hpp"
#include "kvsweep/process/launcher.hpp"
#include "kvsweep/server/backend.hpp"

namespace kvsweep::server {

/// Asks a server for `path` during the ready wait: the body of a 200, or why not.
class ReadyProbe {
 public:
  virtual ~ReadyProbe() = default;
  virtual core::Expected<std::string> get(const std::string& base_url, const std::string& path,
                                          const http::Credentials& credentials) = 0;
};

/// The ReadyProbe over HTTP (200 ms to connect, 2 s to answer).
ReadyProbe& http_ready_probe();

/// An already running server to attach to: nothing is launched or stopped.
struct Attach {
  std::string url;                // scheme://host:port[/prefix], without userinfo (http::split_userinfo)
  http::Credentials credentials;  // never written anywhere
  std::string log_path;           // the server's own log file, read for its K/V types ("": declared, unverified)
};

/// The bearer token held by the environment variable `env_name` (server.api_key_env); "" when
/// `env_name` is empty; load_failed naming the variable when it is unset or empty.
std::expected<std::string, StartFailure> api_key_from_env(const std::string& env_name);

/// What a flavour's after_ready may use and fill in.
struct ReadyContext {
  http::Client& client;
  const CellSpec& spec;
  const std::string& ready_body;  // the ready endpoint's 200 body
  nlohmann::json& info;           // provenance, ends up in Instance::info()
  std::chrono::steady_clock::time_point deadline;
  bool attached;
  /// Set by a flavour that read the effective K/V types over HTTP (vLLM's /metrics, SGLang's
  /// /server_info): the lifecycle checks these instead of reading them from the log.
  std::optional<EffectiveKv> effective = std::nullopt;
  /// Attached: the server's log file the user named (Attach::log_path); "" when none.
  std::string attached_log = {};
};

/// Why after_ready failed. When the server died meanwhile the cell is judged from its log.
struct ReadyFailure {
  std::string when;                    // e.g. "while answering /api/show"
  std::string message;
  std::optional<CellOutcome> outcome;  // nullopt: classify_load_failure(log)
};

/// A backend's part of the lifecycle.
class Flavour {
 public:
  virtual ~Flavour() = default;
  /// Who the messages name ("llama-server", "ollama serve").
  virtual std::string who() const = 0;
  /// The llama.cpp program this flavour runs, for the crashes kvsweep recognises by their log
  /// (process/known_crash); nullopt: another server, nothing known of its crashes.
  virtual std::optional<process::LlamaProgram> llama_program() const { return std::nullopt; }
  /// The child for a cell on `port`: argv and environment (the lifecycle sets log_path).
  virtual process::LaunchSpec launch_spec(const CellSpec& spec, int port) const = 0;
  /// The line written to the cell's log before the launch; never a secret value. Default: the argv.
  virtual std::string launch_line(const process::LaunchSpec& launch) const;
  /// Provenance of the launch (default: the argv).
  virtual void describe_launch(const process::LaunchSpec& launch, nlohmann::json& info) const;
  virtual std::string ready_path() const = 0;
  /// The status ready_path answers once the server is ready (200 unless the server says otherwise).
  virtual int ready_status() const { return 200; }
  /// Once ready: what else the server must do before any timed request (default: nothing).
  virtual std::expected<void, ReadyFailure> after_ready(ReadyContext& context) const;
  /// The K/V types the server used, from its log since the launch (default: parse_effective_kv).
  virtual EffectiveKv effective(const std::string& log, const CellSpec& spec) const;
  /// A line the server logs once everything `effective` reads is in its log (default: none). A server
  /// that writes its log from a worker thread (llama.cpp) can answer ready before those lines reach the
  /// file; the lifecycle then reads the log again until this appears, for at most kLogSettle.
  virtual std::string log_complete_marker() const { return {}; }
  /// What the server logs once it holds `port` (llama-server: "listening on http://127.0.0.1:<port>").
  /// kvsweep closes the free port it picked before the child binds it, so another process may take the
  /// port first and answer the ready wait: a launched server is the one answering only once its own log
  /// says this (not followed by a digit) and it still runs.
  virtual std::string listening_line(int port) const = 0;
  virtual std::unique_ptr<Api> make_api(std::shared_ptr<http::Client> client, const CellSpec& spec) const = 0;
};

/// Whether `log` holds `line` not followed by a digit (port 808 is not port 8080).
bool says_listening(const std::string& log, const std::string& line);

/// Whether the effective K/V types match the cell: the lifecycle's one verdict per instance
/// (Instance::kv_check), taken when the server is ready.
KvCheck check_kv(const EffectiveKv& effective, const std::string& type_k, const std::string& type_v);

class Lifecycle {
 public:
  explicit Lifecycle(process::Launcher& launcher = process::child_launcher(), ReadyProbe& probe = http_ready_probe())
      : m_launcher(launcher), m_probe(probe) {}

  /// Launches the flavour's server for `spec` on a free 127.0.0.1 port and waits until it is ready,
  /// its log says it holds that port (Flavour::listening_line) and shows the K/V types asked for.
  std::expected<std::unique_ptr<Instance>, StartFailure> launch(const Flavour& flavour, const CellSpec& spec,
                                                               const std::atomic<bool>& cancel);
  /// Waits until the server at `attach` is ready; its K/V types are the user's declaration.
  std::expected<std::unique_ptr<Instance>, StartFailure> attach(const Flavour& flavour, const Attach& attach,
                                                               const CellSpec& spec, const std::atomic<bool>& cancel);
  /// What `launch.argv` (e.g. `llama-server --version`) prints, through a temp file; "" when it cannot run.
  std::string version_output(process::LaunchSpec launch);

 private:
  std::expected<std::unique_ptr<Instance>, StartFailure> start(const Flavour& flavour, const CellSpec& spec,
                                                              const std::atomic<bool>& cancel,
                                                              const std::optional<Attach>& attach);
  process::Launcher& m_launcher;
  ReadyProbe& m_probe;
};

}  // namespace kvsweep::server
