#pragma once
/// Every exit code kvsweep returns, in one place.

namespace kvsweep::core::exit_code {
inline constexpr int ok = 0;
inline constexpr int regression = 1;     // compare: a metric regressed; run: some cells failed
inline constexpr int error = 2;          // bad input, setup failure
inline constexpr int interrupted = 130;  // SIGINT (128 + 2)
inline constexpr int terminated = 143;   // SIGTERM (128 + 15)
}  // namespace kvsweep::core::exit_code
