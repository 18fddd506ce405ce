#pragma once
/// A child's stdout and stderr, read from a pipe by a thread of kvsweep and appended to its log file
/// redacted line by line (core::LineRedactor): a server that echoes its argv or logs a request's
/// Authorization header writes no secret into the run directory. The pump owns both descriptors.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace kvsweep::process {

class LogPump {
 public:
  /// Starts reading `pipe_fd` into `log_fd` (opened for appending); both are closed by the pump.
  LogPump(int pipe_fd, int log_fd);
  LogPump(const LogPump&) = delete;
  LogPump& operator=(const LogPump&) = delete;
  /// finish(0).
  ~LogPump();

  /// Waits up to `wait` for the pipe's end (every writer gone), then stops reading once what is
  /// in the pipe is written; the log holds everything written before. Idempotent.
  void finish(std::chrono::milliseconds wait);

 private:
  void run();
  int m_pipe_fd;
  int m_log_fd;
  std::atomic<bool> m_stop{false};
  std::mutex m_mutex;
  std::condition_variable m_ended_cv;
  bool m_ended = false;
  std::thread m_thread;
};

}  // namespace kvsweep::process
