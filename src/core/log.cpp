#include "kvsweep/core/log.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <mutex>
#include <string>

#include "kvsweep/core/redact.hpp"

namespace kvsweep::core {

namespace {

/// Hands every message, redacted (core/redact.hpp), to the coloured stderr sink.
class RedactingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit RedactingSink(spdlog::sink_ptr inner) : m_inner(std::move(inner)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string clean = redact(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy(msg.time, msg.source, msg.logger_name, msg.level, clean);
    m_inner->log(copy);
  }
  void flush_() override { m_inner->flush(); }
  void set_pattern_(const std::string& pattern) override { m_inner->set_pattern(pattern); }
  void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override { m_inner->set_formatter(std::move(formatter)); }

 private:
  spdlog::sink_ptr m_inner;
};

}  // namespace

void setup_logging(Verbosity verbosity) {
  auto sink = std::make_shared<RedactingSink>(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  auto logger = std::make_shared<spdlog::logger>("kvsweep", sink);
  spdlog::register_logger(logger);
  logger->set_pattern("%^%l%$: %v");
  switch (verbosity) {
    case Verbosity::quiet: logger->set_level(spdlog::level::warn); break;
    case Verbosity::normal: logger->set_level(spdlog::level::info); break;
    case Verbosity::verbose: logger->set_level(spdlog::level::debug); break;
  }
  spdlog::set_default_logger(logger);
}

}  // namespace kvsweep::core
