#pragma once
/// Test fakes for the server lifecycle: a process::Launcher whose processes are scripted (they
/// write a given log and live or die on command) and a ReadyProbe that answers from a script.
/// No child is started and no socket is opened.

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvsweep/process/launcher.hpp"
#include "kvsweep/server/lifecycle/lifecycle.hpp"

namespace kvsweep::testing {

/// What one fake process does; shared with the test so it can kill the "server" later.
struct FakeProcessState {
  std::optional<process::ExitStatus> exit;  // set: the process has ended
  int stops = 0;                            // how often stop() was called
};

class FakeLauncher final : public process::Launcher {
 public:
  /// The log the next launched process writes at once (appended to LaunchSpec::log_path).
  std::string log;
  /// The logs of the first launches, one each, in order; later launches write `log`.
  std::vector<std::string> logs;
  /// Ends the process at launch with this status (died before ready).
  std::optional<process::ExitStatus> exit_at_launch;
  /// A log the process writes only on its `late_log_polls`-th poll (a server whose log worker lags
  /// behind its ready answer).
  std::string late_log;
  int late_log_polls = 0;
  /// Launching fails (e.g. the binary cannot be executed).
  bool refuse = false;
  /// Whether the process logs "listening on http://127.0.0.1:<its --port>" after `log`, as llama-server
  /// does once it holds its port (false: it never binds, e.g. another process took the port).
  bool listens = true;

  std::vector<process::LaunchSpec> launched;
  std::vector<std::shared_ptr<FakeProcessState>> processes;

  core::Expected<std::unique_ptr<process::Process>> launch(const process::LaunchSpec& spec) override {
    if (refuse) return core::fail(core::ErrorKind::process, "cannot execute " + spec.argv.at(0));
    launched.push_back(spec);
    const std::string& text = launched.size() <= logs.size() ? logs[launched.size() - 1] : log;
    if (!text.empty()) std::ofstream(spec.log_path, std::ios::app) << text;
    if (listens) std::ofstream(spec.log_path, std::ios::app) << "0.00.9 I srv  llama_server: listening on http://127.0.0.1:" << port_of(spec) << "\n";
    auto state = std::make_shared<FakeProcessState>();
    state->exit = exit_at_launch;
    processes.push_back(state);
    return std::make_unique<Process>(state, spec.log_path, late_log, late_log_polls);
  }

 private:
  static std::string port_of(const process::LaunchSpec& spec) {
    for (std::size_t i = 0; i + 1 < spec.argv.size(); ++i)
      if (spec.argv[i] == "--port") return spec.argv[i + 1];
    return "";
  }

  class Process final : public process::Process {
   public:
    Process(std::shared_ptr<FakeProcessState> state, std::string log_path, std::string late_log, int late_log_polls)
        : m_state(std::move(state)),
          m_log_path(std::move(log_path)),
          m_late_log(std::move(late_log)),
          m_late_log_polls(late_log_polls) {}
    std::optional<process::ExitStatus> poll() override {
      if (!m_late_log.empty() && ++m_polls == m_late_log_polls) std::ofstream(m_log_path, std::ios::app) << m_late_log;
      return m_state->exit;
    }
    process::ExitStatus stop(std::chrono::milliseconds) override {
      ++m_state->stops;
      if (!m_state->exit) m_state->exit = process::ExitStatus{0, 15, true};
      return *m_state->exit;
    }

   private:
    std::shared_ptr<FakeProcessState> m_state;
    std::string m_log_path, m_late_log;
    int m_late_log_polls = 0, m_polls = 0;
  };
};

/// Answers the ready wait: `not_ready` failures first, then 200 with `body` (never, when ready is false).
class FakeReadyProbe final : public server::ReadyProbe {
 public:
  int not_ready = 0;
  bool ready = true;
  std::string body = "{}";
  /// Called as each 200 is given (e.g. the launched process dies meanwhile: another one answered).
  std::function<void()> on_answer;
  int calls = 0;
  std::vector<std::string> paths;
  std::vector<http::Credentials> credentials;

  core::Expected<std::string> get(const std::string&, const std::string& path, const http::Credentials& c) override {
    ++calls;
    paths.push_back(path);
    credentials.push_back(c);
    if (!ready || calls <= not_ready) return core::fail(core::ErrorKind::connect, "connection refused");
    if (on_answer) on_answer();
    return body;
  }
};

}  // namespace kvsweep::testing
