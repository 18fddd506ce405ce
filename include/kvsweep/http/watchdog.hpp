#pragma once
/// A request's deadline: armed when a request starts and disarmed when it ends; if the deadline
/// passes first, it calls `on_expire` once from its own thread (the client shuts its socket,
/// which ends a read blocked on a silent or trickling server). One request at a time.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>

namespace kvsweep::http {

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Watchdog(std::function<void()> on_expire);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(Clock::time_point deadline);
  /// Ends the watch; true when the deadline passed before (on_expire was called).
  bool disarm();

 private:
  void loop(const std::stop_token& stop);
  std::function<void()> m_on_expire;
  std::mutex m_mutex;
  std::condition_variable_any m_cv;
  std::optional<Clock::time_point> m_deadline;
  std::uint64_t m_generation = 0;  // one per arm: a re-arm is a new watch
  bool m_expired = false;
  std::jthread m_thread;  // started by the first arm
};

}  // namespace kvsweep::http
