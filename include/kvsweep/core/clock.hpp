#pragma once
/// Time stamps as the run format writes them (ISO-8601 UTC) and monotonic durations in seconds.

#include <chrono>
#include <string>

namespace kvsweep::core {

/// ISO-8601 UTC with seconds, e.g. 2026-11-22T10:00:00Z.
std::string iso8601(std::chrono::system_clock::time_point t);
/// ISO-8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.250Z (ordering events within a second).
std::string iso8601_ms(std::chrono::system_clock::time_point t);

/// Seconds between two steady time points.
inline double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace kvsweep::core
