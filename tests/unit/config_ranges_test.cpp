// Config numbers are checked against the ranges they are used in, server URLs parsed whole, and a
// config file that is a directory or nested without end is refused by name.

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_error.hpp"
#include "kvsweep/config/config.hpp"
#include "kvsweep/core/error.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {

nlohmann::json minimal() {
  return {{"models", {{{"name", "m"}, {"path", "/nonexistent/m.gguf"}}}},
          {"grid", {{"k", {"f16"}}, {"v", "same-as-k"}}},
          {"probes", {{{"kind", "complete"}}}}};
}

std::string with_server(const nlohmann::json& server) {
  auto doc = minimal();
  doc["server"] = server;
  return kvsweep::testing::config_error(doc);
}

std::string load_error(const std::filesystem::path& file) {
  try {
    kvsweep::config::load(file);
  } catch (const kvsweep::core::FatalError& e) {
    return e.message;
  }
  return "";
}

}  // namespace

TEST(ConfigRanges, NumbersOutsideTheRangeTheyAreUsedInAreRefusedByKey) {
  const std::pair<nlohmann::json, std::string> cases[] = {
      {{{"ctx", 4294971392LL}}, "server.ctx: must be between 0 and 2147483392"},
      {{{"request_timeout_s", 1e300}}, "server.request_timeout_s: must be greater than 0 and at most 604800"},
      {{{"ready_timeout_s", 1e30}}, "server.ready_timeout_s: must be greater than 0 and at most 604800"},
      {{{"ready_timeout_s", 0}}, "server.ready_timeout_s: must be greater than 0"},
      {{{"stop_grace_s", -10}}, "server.stop_grace_s: must be at least 0"},
  };
  for (const auto& [server, expected] : cases) {
    const std::string error = with_server(server);
    EXPECT_THAT(error, HasSubstr(expected)) << server.dump() << " → " << error;
  }
  EXPECT_EQ(with_server({{"ctx", 2147483392LL}, {"stop_grace_s", 0}, {"request_timeout_s", 604800}}), "");
}

TEST(ConfigRanges, AServerUrlIsParsedWholeBeforeAnythingStarts) {
  const std::pair<std::string, std::string> bad[] = {
      {"http://127.0.0.1:notaport", "port 'notaport' is not a number"},
      {"http://127.0.0.1:70000", "port 70000 is not in 1-65535"},
      {"ftp://127.0.0.1:8080", "scheme 'ftp'"},
      {"127.0.0.1:8080", "not a URL (no scheme://)"},
      {"http://:8080", "no host"},
  };
  for (const auto& [url, expected] : bad) {
    const std::string error = with_server({{"backend", "external"}, {"url", url}});
    EXPECT_THAT(error, HasSubstr("server.url: " + expected)) << url << " → " << error;
  }
  for (const std::string url : {"http://127.0.0.1:8080", "https://example.org/v1", "http://[::1]:8080", "http://host"})
    EXPECT_EQ(with_server({{"backend", "external"}, {"url", url}}), "") << url;
  // A userinfo with a '/' it should have encoded is still userinfo, and never shown.
  const std::string error = with_server({{"backend", "external"}, {"url", "http://alice:se/cret@127.0.0.1:x"}});
  EXPECT_THAT(error, HasSubstr("server.url: port 'x'")) << error;
  EXPECT_THAT(error, Not(HasSubstr("se/cret"))) << error;
}

TEST(ConfigRanges, ADirectoryOrADocumentNestedWithoutEndIsRefusedByName) {
  const auto dir = kvsweep::testing::temp_file(".d");
  std::filesystem::create_directories(dir);
  EXPECT_THAT(load_error(dir), HasSubstr("is a directory, not a config file")) << load_error(dir);
  std::filesystem::remove_all(dir);

  const auto deep = kvsweep::testing::temp_file(".json");
  std::ofstream(deep) << std::string(100000, '[') << std::string(100000, ']');
  const std::string error = load_error(deep);
  std::filesystem::remove(deep);
  EXPECT_THAT(error, HasSubstr("nested deeper than")) << error.substr(0, 300);
}
