#include "kvsweep/core/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace kvsweep::core {

void setup_logging(Verbosity verbosity) {
  auto logger = spdlog::stderr_color_mt("kvsweep");
  logger->set_pattern("%^%l%$: %v");
  switch (verbosity) {
    case Verbosity::quiet: logger->set_level(spdlog::level::warn); break;
    case Verbosity::normal: logger->set_level(spdlog::level::info); break;
    case Verbosity::verbose: logger->set_level(spdlog::level::debug); break;
  }
  spdlog::set_default_logger(logger);
}

}  // namespace kvsweep::core
