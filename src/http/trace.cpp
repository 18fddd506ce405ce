#include "kvsweep/http/trace.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <nlohmann/json.hpp>

#include "kvsweep/core/redact.hpp"

namespace kvsweep::http {

namespace {

struct Sink {
  Sink() {
    const char* path = std::getenv("KVSWEEP_HTTP_TRACE");
    if (path != nullptr && *path != '\0') file = std::fopen(path, "a");
  }
  std::mutex mutex;
  std::FILE* file = nullptr;
};

Sink& sink() {
  // Opened once, for the whole process, and never closed: every line is flushed as written.
  static Sink s;
  return s;
}

std::optional<double> timings_ms(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("timings") || !j["timings"].is_object()) return std::nullopt;
  const auto& t = j["timings"];
  return t.value("prompt_ms", 0.0) + t.value("predicted_ms", 0.0);
}

}  // namespace

bool trace_enabled() { return sink().file != nullptr; }

void trace(const TraceEntry& e) {
  Sink& s = sink();
  if (s.file == nullptr) return;
  nlohmann::json line = {
      {"t", std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()},
      {"method", e.method},
      {"server", e.server},
      {"path", e.path},
      {"status", e.status},
      {"stream", e.stream},
      {"fresh", e.fresh},
      {"ms", e.ms},
      {"request_bytes", e.request_bytes},
      {"server_ms", e.server_ms ? nlohmann::json(*e.server_ms) : nlohmann::json(nullptr)},
  };
  if (e.cancelled) line["cancelled"] = true;
  if (!e.error.empty()) line["error"] = e.error;
  const std::string text = core::redact(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) + "\n";
  std::lock_guard lock(s.mutex);
  std::fwrite(text.data(), 1, text.size(), s.file);
  std::fflush(s.file);
}

std::string without_credentials(std::string_view base_url) {
  const std::size_t scheme = base_url.find("://");
  const std::size_t host = scheme == std::string_view::npos ? 0 : scheme + 3;
  const std::size_t end = base_url.find('/', host);
  const std::size_t at = base_url.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < host) return std::string(base_url);
  return std::string(base_url.substr(0, host)) + std::string(base_url.substr(at + 1));
}

std::optional<double> server_ms_of(std::string_view body) {
  const auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_array()) {
    std::optional<double> sum;
    for (const auto& e : j) {
      if (auto ms = timings_ms(e)) sum = sum.value_or(0.0) + *ms;
    }
    return sum;
  }
  return timings_ms(j);
}

std::optional<double> server_ms_of_stream(std::string_view tail) {
  // Walk the lines backwards; a line cut by the start of the tail fails to parse and is skipped.
  std::size_t end = tail.size();
  while (end > 0) {
    const std::size_t start = tail.rfind('\n', end - 1);
    const std::size_t from = start == std::string_view::npos ? 0 : start + 1;
    std::string_view line = tail.substr(from, end - from);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with("data:")) {
      line.remove_prefix(5);
      if (auto ms = timings_ms(nlohmann::json::parse(line, nullptr, false))) return ms;
    }
    if (start == std::string_view::npos) break;
    end = start;
  }
  return std::nullopt;
}

}  // namespace kvsweep::http
