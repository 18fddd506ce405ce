#pragma once
/// One child process in its own process group, its output appended to a log file, killed
/// with the group when kvsweep stops or dies: PR_SET_PDEATHSIG for the child, and a guard
/// process in the group that kills all of it (what a wrapper script started too) once
/// kvsweep is gone, kill -9 included.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvsweep/core/error.hpp"

namespace kvsweep::process {

class LogPump;

struct LaunchSpec {
  std::vector<std::string> argv;                           // argv[0] is looked up on PATH when it has no '/'
  std::vector<std::pair<std::string, std::string>> env;    // set (or overridden) in the child
  std::vector<std::string> unset_env;                      // removed from the child's environment
  std::filesystem::path log_path;                          // stdout and stderr are appended here, redacted (LogPump)
};

/// How a child ended: exit code, or the signal that killed it.
struct ExitStatus {
  int code = 0;        // valid when !signaled
  int signal = 0;      // valid when signaled
  bool signaled = false;
  /// Shell-style number: code, or 128 + signal.
  int shell_code() const { return signaled ? 128 + signal : code; }
  std::string describe() const;
};

class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  /// Kills the group (no grace) if still running.
  ~Child();

  static core::Expected<Child> spawn(const LaunchSpec& spec);

  pid_t pid() const { return m_pid; }
  /// The exit status once the child has ended (non-blocking).
  std::optional<ExitStatus> poll();
  bool running() { return !poll().has_value(); }
  /// SIGTERM to the group, wait up to `grace`, then SIGKILL; returns how it ended.
  ExitStatus stop(std::chrono::milliseconds grace);
  /// Sends a signal to the whole process group.
  void signal_group(int sig) const;

 private:
  /// Closes kvsweep's end of the guard's pipe (after the group is dead) and lets the log pump
  /// write the group's last output.
  void release_guard();
  pid_t m_pid = -1;
  int m_guard_fd = -1;  // the write end the group's guard waits on
  std::unique_ptr<LogPump> m_pump;  // the child's output into its log; null without a log
  std::optional<ExitStatus> m_status;
};

/// Every live child's process group, so a signal handler can kill them all
/// (async-signal-safe: only kill(2) on a fixed array).
void kill_all_children(int sig) noexcept;

/// The last `max_lines` lines of a file (for error messages).
std::string tail_file(const std::filesystem::path& path, std::size_t max_lines = 20);

/// Resolves a program name on PATH; empty when not found.
std::string which(const std::string& program);

/// A program kvsweep launches: `name` as given when it holds a '/', else $<dir_variable>/<name>
/// when that is executable, else `which(name)`; empty when not found.
std::string find_tool(const std::string& name, const char* dir_variable);
/// A llama.cpp tool (llama-server, llama-perplexity): find_tool(name, "KVSWEEP_LLAMA_BIN").
std::string find_llama_tool(const std::string& name);

}  // namespace kvsweep::process
