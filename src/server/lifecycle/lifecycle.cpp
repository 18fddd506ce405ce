#include "kvsweep/server/lifecycle/lifecycle.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <thread>

#include "kvsweep/core/no_follow.hpp"
#include "kvsweep/core/read_file.hpp"
#include "kvsweep/core/redact.hpp"

namespace kvsweep::server {

namespace {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

// 20 ms between ready polls: readiness is noticed within ~50 ms without busy-looping.
constexpr Ms kPollInterval{20};
// How long a log without the flavour's completion marker is read again after ready (a build that never
// logs the marker costs this once per cell).
constexpr Ms kLogSettle{2000};
// What a failure message shows of a server's log when nothing better is known.
constexpr std::size_t kTailLines = 25;

std::string read_from(const std::filesystem::path& p, std::size_t offset) {
  return core::read_file(p, core::Links::refuse, offset).value_or("");
}

std::size_t file_size_or_zero(const std::filesystem::path& p) {
  std::error_code ec;
  auto n = std::filesystem::file_size(p, ec);
  return ec ? 0 : static_cast<std::size_t>(n);
}

/// A server started (or attached) by the lifecycle.
class ManagedInstance final : public Instance {
 public:
  ManagedInstance(std::unique_ptr<process::Process> process, std::shared_ptr<http::Client> client, CellSpec spec,
                  std::size_t log_offset)
      : m_process(std::move(process)), m_client(std::move(client)), m_spec(std::move(spec)), m_log_offset(log_offset) {}
  ~ManagedInstance() override { stop(); }

  Api& api() override { return *m_api; }
  bool alive() override { return !m_process || !m_process->poll(); }
  void stop() override {
    if (m_process && !m_stopped) {
      const process::ExitStatus status = m_process->stop(m_spec.stop_grace);
      m_exit = status.describe();
      m_exit_signaled = status.signaled;
      m_stopped = true;
    }
  }
  EffectiveKv effective() const override { return m_effective; }
  KvCheck kv_check() const override { return m_kv_check; }
  double ready_seconds() const override { return m_ready_s; }
  nlohmann::json info() const override { return m_info; }
  std::string log_tail(std::size_t lines) const override {
    if (!m_process) return "(attached server: no log)";
    return process::tail_file(m_spec.log_path, lines);
  }
  std::string error_lines() const override {
    if (!m_process) return {};
    return server_error_lines(log_since_start());
  }
  std::string exit_description() override {
    if (!m_process) return {};
    if (auto s = m_process->poll()) return s->describe();
    return m_exit;
  }
  /// The launched server died by a signal (a crash, not an exit of its own).
  bool killed_by_signal() {
    if (!m_process) return false;
    if (auto s = m_process->poll()) return s->signaled;
    return m_exit_signaled;
  }

  std::string log_since_start() const { return m_process ? read_from(m_spec.log_path, m_log_offset) : std::string{}; }

  std::unique_ptr<Api> m_api;
  EffectiveKv m_effective;
  KvCheck m_kv_check = KvCheck::unverified;  // check_effective's verdict
  double m_ready_s = 0;
  nlohmann::json m_info = nlohmann::json::object();

 private:
  std::unique_ptr<process::Process> m_process;
  std::shared_ptr<http::Client> m_client;
  CellSpec m_spec;
  std::size_t m_log_offset;
  bool m_stopped = false;
  std::string m_exit;
  bool m_exit_signaled = false;
};

class HttpReadyProbe final : public ReadyProbe {
 public:
  core::Expected<std::string> get(const std::string& base_url, const std::string& path,
                                  const http::Credentials& credentials) override {
    http::Client client(base_url, http::Timeouts{Ms(200), Ms(2000)});
    credentials.apply(client);
    auto r = client.get(path);
    if (!r) return std::unexpected(r.error());
    if (r->status != 200) return core::fail(core::ErrorKind::http_status, "HTTP " + std::to_string(r->status), r->status);
    return r->body;
  }
};

std::string seconds(Ms ms) { return std::to_string(ms.count() / 1000) + " s"; }

/// Where a server answers: a launched child on its port, or the URL attached to; provenance for info().
struct Endpoint {
  std::unique_ptr<process::Process> child;  // null when attached
  std::string base_url;
  int port = 0;                // a launched child's; 0 when attached
  std::size_t log_offset = 0;  // where this start's lines begin in the log
  std::string who;             // the server in messages
  nlohmann::json info = nlohmann::json::object();
  http::Credentials credentials;  // a launched server's key from its own argv (--api-key K)
};

/// The server at `attach`, its URL without a trailing slash; its K/V types are the user's declaration.
Endpoint attached_endpoint(const Flavour& flavour, const Attach& attach) {
  Endpoint at;
  at.base_url = attach.url;
  while (!at.base_url.empty() && at.base_url.back() == '/') at.base_url.pop_back();
  at.who = flavour.who() + " at " + at.base_url;
  at.info["url"] = at.base_url;
  at.info["kv_types"] = "declared by the user";
  return at;
}

/// Launches the flavour's server for `spec` on a free 127.0.0.1 port, the launch line logged first.
std::expected<Endpoint, StartFailure> launched_endpoint(process::Launcher& launcher, const Flavour& flavour,
                                                        const CellSpec& spec) {
  Endpoint at;
  at.who = flavour.who();
  const int port = free_port();
  process::LaunchSpec launch = flavour.launch_spec(spec, port);
  launch.log_path = spec.log_path;
  if (spec.log_path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(spec.log_path.parent_path(), ec);
  }
  if (const int fd = core::open_no_follow(spec.log_path, O_WRONLY | O_CREAT | O_APPEND); fd >= 0) {
    const std::string line = "# kvsweep: launching: " + core::redact(flavour.launch_line(launch)) + "\n";
    const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!written) return std::unexpected(StartFailure{CellOutcome::load_failed, "cannot write " + spec.log_path.string(), "", {}});
  } else {
    return std::unexpected(StartFailure{CellOutcome::load_failed, core::open_failure(spec.log_path), "", {}});
  }
  at.log_offset = file_size_or_zero(spec.log_path);
  // A launched server started with --api-key (server.args, a launch template's command) wants that key from us too.
  at.credentials = http::credentials_from_args(launch.argv);
  auto spawned = launcher.launch(launch);
  if (!spawned) return std::unexpected(StartFailure{CellOutcome::load_failed, "cannot start " + at.who + ": " + spawned.error().message, "", {}});
  at.child = std::move(*spawned);
  at.base_url = "http://127.0.0.1:" + std::to_string(port);
  at.port = port;
  at.info["port"] = port;
  flavour.describe_launch(launch, at.info);
  return at;
}

/// A start that failed: the server's error lines kept, then the server stopped.
std::unexpected<StartFailure> start_failed(ManagedInstance& instance, CellOutcome outcome, std::string message) {
  std::string lines = instance.error_lines();
  instance.stop();
  return std::unexpected(StartFailure{outcome, std::move(message), std::move(lines), instance.effective()});
}

/// `message` with what the crash is known to be (process/known_crash: llama.cpp's AMX path, its remedies).
std::string with_known_crash(std::string message, const Flavour& flavour, const std::string& log, bool crashed) {
  if (const auto program = flavour.llama_program())
    if (auto known = process::known_crash(*program, log, crashed, process::host_has_amx()))
      message += " — " + *known;
  return message;
}

/// The server exited on its own: its log says why (load_failed, out of memory, a known crash, …).
std::unexpected<StartFailure> start_died(ManagedInstance& instance, const Flavour& flavour, const std::string& who,
                                         const std::string& when) {
  const std::string log = instance.log_since_start();
  const bool crashed = instance.killed_by_signal();
  return start_failed(instance, classify_load_failure(log),
                      with_known_crash(who + " " + instance.exit_description() + " " + when, flavour, log, crashed));
}

/// Ready: the flavour's endpoint answers 200 before the deadline, while the child lives; its body.
std::expected<std::string, StartFailure> wait_ready(ReadyProbe& probe, ManagedInstance& instance, const Flavour& flavour,
                                                    const Endpoint& at, const CellSpec& spec,
                                                    const http::Credentials& credentials,
                                                    const std::atomic<bool>& cancel, Clock::time_point deadline) {
  for (;;) {
    if (cancel.load()) return start_failed(instance, CellOutcome::cancelled, "interrupted while waiting for " + at.who);
    if (!instance.alive()) return start_died(instance, flavour, at.who, "before it was ready");
    auto r = probe.get(at.base_url, flavour.ready_path(), credentials);
    if (r) return std::move(*r);
    // A server ready on another status (the readiness check a launch template names): its body is not read.
    if (!r && r.error().kind == core::ErrorKind::http_status && r.error().http_status == flavour.ready_status())
      return std::string{};
    if (Clock::now() > deadline) {
      return start_failed(instance, CellOutcome::load_failed,
                          at.who + ": GET " + flavour.ready_path() + " not ready within the ready timeout (" +
                              seconds(spec.ready_timeout) + "; last: " + r.error().message + ")");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

/// The launched child is the server that answered: its own log says it holds the port, and it runs.
/// Otherwise another process took the port between free_port() and the child's bind (the child then
/// exits, "couldn't bind"), and nothing that process answers may be recorded as the cell's.
std::expected<void, StartFailure> confirm_listener(ManagedInstance& instance, const Flavour& flavour, const Endpoint& at,
                                                   const CellSpec& spec, const std::atomic<bool>& cancel,
                                                   Clock::time_point deadline) {
  const std::string line = flavour.listening_line(at.port);
  const auto said = [&] { return says_listening(instance.log_since_start(), line); };
  // Like the marker: the log's worker thread may write the line after the ready answer.
  while (!said() && instance.alive() && !cancel.load() && Clock::now() < deadline) std::this_thread::sleep_for(kPollInterval);
  if (cancel.load()) return start_failed(instance, CellOutcome::cancelled, "interrupted while waiting for " + at.who);
  if (said() && instance.alive()) return {};
  if (said()) return start_died(instance, flavour, at.who, "after it was ready");
  const std::string answered = " that it listens on port " + std::to_string(at.port) + ", yet " + flavour.ready_path() +
                               " answered there: ";
  const std::string unrecorded = " (another process can take the port between kvsweep choosing it and the server "
                                 "binding it); nothing it answers is recorded as this cell's";
  if (!instance.alive())
    return start_failed(instance, CellOutcome::load_failed,
                        at.who + " " + instance.exit_description() + " and never logged" + answered +
                            "another process holds the port" + unrecorded);
  return start_failed(instance, CellOutcome::load_failed,
                      at.who + " did not log within the ready timeout (" + seconds(spec.ready_timeout) + ")" + answered +
                          "the server answering cannot be confirmed as the one kvsweep started" + unrecorded);
}

/// What the server allocated (an attached server: the user's declaration), checked against the cell.
std::expected<void, StartFailure> check_effective(ManagedInstance& instance, const Flavour& flavour,
                                                  const CellSpec& spec, bool attached,
                                                  const std::optional<EffectiveKv>& read_over_http,
                                                  const std::atomic<bool>& cancel, Clock::time_point deadline) {
  if (read_over_http) {
    instance.m_effective = *read_over_http;
  } else if (attached) {
    instance.m_effective.declared = true;
    instance.m_effective.type_k = spec.type_k;
    instance.m_effective.type_v = spec.type_v;
  } else {
    // llama.cpp's log worker may still be writing what it logged before ready: wait for the marker.
    if (const std::string marker = flavour.log_complete_marker(); !marker.empty()) {
      const auto settle = std::min(Clock::now() + kLogSettle, deadline);
      while (instance.log_since_start().find(marker) == std::string::npos && instance.alive() &&
             !cancel.load() && Clock::now() < settle)
        std::this_thread::sleep_for(kPollInterval);
    }
    instance.m_effective = flavour.effective(instance.log_since_start(), spec);
  }
  instance.m_kv_check = check_kv(instance.m_effective, spec.type_k, spec.type_v);
  if (instance.m_kv_check == KvCheck::mismatch) {
    return start_failed(instance, CellOutcome::config_mismatch,
                        "requested K=" + spec.type_k + " V=" + spec.type_v + ", the server allocated K=" +
                            instance.m_effective.type_k + " V=" + instance.m_effective.type_v);
  }
  // A setting of the cell (a variant's context, flash attention, rotation) the server did not apply.
  if (!attached) {
    if (std::string differs = check_settings(instance.m_effective, spec); !differs.empty())
      return start_failed(instance, CellOutcome::config_mismatch, differs);
  }
  return {};
}

}  // namespace

ReadyProbe& http_ready_probe() {
  static HttpReadyProbe probe;
  return probe;
}

std::string Flavour::launch_line(const process::LaunchSpec& launch) const {
  std::string line;
  for (const auto& a : launch.argv) line += (line.empty() ? "" : " ") + a;
  return line;
}

void Flavour::describe_launch(const process::LaunchSpec& launch, nlohmann::json& info) const { info["argv"] = launch.argv; }

std::expected<void, ReadyFailure> Flavour::after_ready(ReadyContext&) const { return {}; }

EffectiveKv Flavour::effective(const std::string& log, const CellSpec&) const { return parse_effective_kv(log); }

std::expected<std::string, StartFailure> api_key_from_env(const std::string& env_name) {
  if (env_name.empty()) return std::string{};
  const char* key = std::getenv(env_name.c_str());
  if (!key || !*key) {
    return std::unexpected(StartFailure{CellOutcome::load_failed,
                                        "environment variable " + env_name + " (server.api_key_env) is not set", "", {}});
  }
  core::add_secret(key);  // written nowhere, whatever echoes it
  return std::string(key);
}

bool says_listening(const std::string& log, const std::string& line) {
  for (auto at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) {
    const std::size_t end = at + line.size();
    if (end == log.size() || !std::isdigit(static_cast<unsigned char>(log[end]))) return true;
  }
  return false;
}

KvCheck check_kv(const EffectiveKv& e, const std::string& type_k, const std::string& type_v) {
  if (e.declared) return KvCheck::declared;
  if (!e.found) return KvCheck::unverified;
  return e.type_k == type_k && e.type_v == type_v ? KvCheck::verified : KvCheck::mismatch;
}

std::expected<std::unique_ptr<Instance>, StartFailure> Lifecycle::launch(const Flavour& flavour, const CellSpec& spec,
                                                                        const std::atomic<bool>& cancel) {
  return start(flavour, spec, cancel, std::nullopt);
}

std::expected<std::unique_ptr<Instance>, StartFailure> Lifecycle::attach(const Flavour& flavour, const Attach& attach,
                                                                        const CellSpec& spec,
                                                                        const std::atomic<bool>& cancel) {
  return start(flavour, spec, cancel, attach);
}

std::expected<std::unique_ptr<Instance>, StartFailure> Lifecycle::start(const Flavour& flavour, const CellSpec& spec,
                                                                       const std::atomic<bool>& cancel,
                                                                       const std::optional<Attach>& attach) {
  const auto t0 = Clock::now();
  const auto deadline = t0 + spec.ready_timeout;
  std::expected<Endpoint, StartFailure> at =
      attach ? attached_endpoint(flavour, *attach) : launched_endpoint(m_launcher, flavour, spec);
  if (!at) return std::unexpected(std::move(at.error()));
  const http::Credentials credentials = attach ? attach->credentials : at->credentials;
  auto client = std::make_shared<http::Client>(at->base_url, http::Timeouts{Ms(2000), spec.request_timeout});
  credentials.apply(*client);
  auto instance = std::make_unique<ManagedInstance>(std::move(at->child), client, spec, at->log_offset);

  // 1. Ready.
  auto ready_body = wait_ready(m_probe, *instance, flavour, *at, spec, credentials, cancel, deadline);
  if (!ready_body) return std::unexpected(std::move(ready_body.error()));

  // 2. The server that answered is the child started for this cell.
  if (!attach) {
    if (auto confirmed = confirm_listener(*instance, flavour, *at, spec, cancel, deadline); !confirmed)
      return std::unexpected(std::move(confirmed.error()));
  }

  // 3. The flavour's own steps (Ollama: the tag exists, the model is warm).
  ReadyContext context{*client, spec, *ready_body, at->info, deadline, attach.has_value()};
  if (attach) context.attached_log = attach->log_path;
  if (auto after = flavour.after_ready(context); !after) {
    if (!instance->alive()) return start_died(*instance, flavour, at->who, after.error().when);
    const std::string log = instance->log_since_start();
    CellOutcome outcome = after.error().outcome.value_or(classify_load_failure(log));
    // Ollama's server lives on when the llama-server it launched dies: its answer says so.
    return start_failed(*instance, outcome,
                        with_known_crash(after.error().message, flavour, log,
                                         process::ollama_runner_crashed(after.error().message)));
  }
  instance->m_ready_s = std::chrono::duration<double>(Clock::now() - t0).count();

  // 4. What the server allocated.
  if (auto checked = check_effective(*instance, flavour, spec, attach.has_value(), context.effective, cancel, deadline);
      !checked)
    return std::unexpected(std::move(checked.error()));
  instance->m_api = flavour.make_api(client, spec);
  instance->m_info = std::move(at->info);
  return instance;
}

std::string Lifecycle::version_output(process::LaunchSpec launch) {
  static std::atomic<int> counter{0};
  launch.log_path = std::filesystem::temp_directory_path() /
                    ("kvsweep-version-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".txt");
  std::string text;
  if (auto child = m_launcher.launch(launch)) {
    // Up to 5 s: a version query that hangs must not hold up the run.
    for (int i = 0; i < 500 && !(*child)->poll(); ++i) std::this_thread::sleep_for(Ms(10));
    (*child)->stop(Ms(100));
    text = read_from(launch.log_path, 0);
  }
  std::error_code ec;
  std::filesystem::remove(launch.log_path, ec);
  return text;
}

}  // namespace kvsweep::server
