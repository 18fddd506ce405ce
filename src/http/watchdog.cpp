#include "kvsweep/http/watchdog.hpp"

namespace kvsweep::http {

Watchdog::Watchdog(std::function<void()> on_expire) : m_on_expire(std::move(on_expire)) {}

Watchdog::~Watchdog() {
  if (m_thread.joinable()) {
    m_thread.request_stop();
    m_thread.join();
  }
}

void Watchdog::arm(Clock::time_point deadline) {
  std::lock_guard lock(m_mutex);
  m_deadline = deadline;
  m_expired = false;
  ++m_generation;
  if (!m_thread.joinable()) m_thread = std::jthread([this](std::stop_token stop) { loop(stop); });
  m_cv.notify_all();
}

bool Watchdog::disarm() {
  std::lock_guard lock(m_mutex);  // on_expire runs under it: once disarmed, it cannot still be running
  m_deadline.reset();
  m_cv.notify_all();
  return m_expired;
}

void Watchdog::loop(const std::stop_token& stop) {
  std::unique_lock lock(m_mutex);
  while (!stop.stop_requested()) {
    if (!m_deadline) {
      m_cv.wait(lock, stop, [&] { return m_deadline.has_value(); });
      continue;
    }
    const auto deadline = *m_deadline;
    const auto generation = m_generation;
    const bool changed = m_cv.wait_until(lock, stop, deadline, [&] { return !m_deadline || m_generation != generation; });
    if (changed || stop.stop_requested()) continue;
    m_expired = true;
    m_deadline.reset();
    m_on_expire();
  }
}

}  // namespace kvsweep::http
