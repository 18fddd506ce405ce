#include "kvsweep/cli/attach_check.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "kvsweep/core/error.hpp"
#include "kvsweep/server/lifecycle/url_check.hpp"

namespace kvsweep::cli {

namespace {

/// The server at `url` must answer `path` (llama-server's `/health`, Ollama's `/api/version`, an OpenAI
/// server's readiness path).
void check_one(const config::Config& config, const std::string& key, const std::string& url, const std::string& path,
               const std::string& user, const std::string& password, const std::string& api_key_env) {
  server::UrlCheck check;
  check.url = url;
  check.path = path;
  check.user = user;
  check.password = password;
  if (!api_key_env.empty()) {
    if (const char* key_value = std::getenv(api_key_env.c_str())) check.api_key = key_value;
  }
  auto ok = server::check_answers(check);
  if (ok) return;
  throw core::FatalError(config.file.string() + ": " + key + " " + check.url + ": nothing answers at " + check.url +
                         check.path + " (" + ok.error().message + "); start that server first, or fix " + key +
                         " (the external backend attaches to a running server, it starts none)");
}

}  // namespace

void check_attached_servers(const config::Config& config) {
  const auto& s = config.server;
  if (s.backend == "external")
    check_one(config, "server.url", s.url,
              s.api == "ollama" ? "/api/version" : s.api == "openai" ? s.command.ready_path : "/health", s.url_user,
              s.url_password, s.api_key_env);
  // The log that vouches for the attached server's K/V types: unreadable is a setup error, not N failed cells.
  if (!s.log.empty()) {
    std::ifstream in(s.log);
    if (!in)
      throw core::FatalError(config.file.string() + ": server.log '" + s.log + "': " + std::strerror(errno) +
                             " (the file the attached llama-server logs to, read for its K/V types)");
  }
  if (config.embedder && !config.embedder->url.empty() &&
      (config.embedder->backend == "external" || config.embedder->backend == "ollama")) {
    const auto& e = *config.embedder;
    check_one(config, "embedder.url", e.url, e.backend == "ollama" ? "/api/version" : "/health", e.url_user,
              e.url_password, e.api_key_env);
  }
}

}  // namespace kvsweep::cli
