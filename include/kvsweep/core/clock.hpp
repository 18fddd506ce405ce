#pragma once
/// Wall-clock and monotonic time behind one small interface, so tests can swap it.

#include <chrono>
#include <string>

namespace kvsweep::core {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point now() const = 0;
  virtual std::chrono::system_clock::time_point wall() const = 0;
};

class SystemClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() const override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point wall() const override { return std::chrono::system_clock::now(); }
};

/// ISO-8601 UTC with seconds, e.g. 2026-11-22T10:00:00Z.
std::string iso8601(std::chrono::system_clock::time_point t);
/// ISO-8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.250Z (ordering events within a second).
std::string iso8601_ms(std::chrono::system_clock::time_point t);

/// Seconds between two steady time points.
inline double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace kvsweep::core
