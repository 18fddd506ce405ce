#include "kvsweep/process/log_pump.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "kvsweep/core/redact.hpp"

namespace kvsweep::process {

namespace {

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk: the server's output is lost, the server is not stopped for it
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

LogPump::LogPump(int pipe_fd, int log_fd) : m_pipe_fd(pipe_fd), m_log_fd(log_fd), m_thread([this] { run(); }) {}

LogPump::~LogPump() { finish(std::chrono::milliseconds(0)); }

void LogPump::run() {
  core::LineRedactor lines;
  char buffer[64 * 1024];
  int after_stop = 0;
  for (;;) {
    pollfd p{m_pipe_fd, POLLIN, 0};
    // Polled with a timeout so that finish() can stop a pump whose pipe a stray grandchild holds open.
    const int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (m_stop.load()) break;
      continue;
    }
    const ssize_t n = ::read(m_pipe_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of file: every writer is gone
    write_all(m_log_fd, lines.feed(std::string_view(buffer, static_cast<std::size_t>(n))));
    if (m_stop.load() && ++after_stop > 64) break;  // a writer that never pauses: 4 MiB after the stop is enough
  }
  write_all(m_log_fd, lines.finish());
  ::close(m_pipe_fd);
  ::close(m_log_fd);
  std::lock_guard lock(m_mutex);
  m_ended = true;
  m_ended_cv.notify_all();
}

void LogPump::finish(std::chrono::milliseconds wait) {
  {
    std::unique_lock lock(m_mutex);
    m_ended_cv.wait_for(lock, wait, [this] { return m_ended; });
  }
  m_stop.store(true);
  if (m_thread.joinable()) m_thread.join();
}

}  // namespace kvsweep::process
