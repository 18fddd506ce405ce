#pragma once
/// Logging setup: spdlog to stderr; results never go through the logger.

namespace kvsweep::core {
enum class Verbosity { quiet, normal, verbose };
void setup_logging(Verbosity verbosity);
}  // namespace kvsweep::core
