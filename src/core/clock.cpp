#include "kvsweep/core/clock.hpp"

#include <cstdio>
#include <ctime>

namespace kvsweep::core {

std::string iso8601(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string iso8601_ms(std::chrono::system_clock::time_point t) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
  std::string s = iso8601(std::chrono::time_point_cast<std::chrono::seconds>(t));
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03lld", static_cast<long long>(ms < 0 ? ms + 1000 : ms));
  return s.insert(s.size() - 1, frac);
}

}  // namespace kvsweep::core
