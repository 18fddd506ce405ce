#pragma once
/// One look at a server the run attaches to (the external backend), before any cell: does anything
/// answer HTTP at its URL? A dead URL then fails the run once, instead of once per cell after each
/// cell's ready timeout.

#include <chrono>
#include <string>

#include "kvsweep/core/error.hpp"

namespace kvsweep::server {

struct UrlCheck {
  std::string url;       // the base URL, without userinfo
  std::string path = "/health";
  std::string user;      // basic auth, when the URL had userinfo
  std::string password;
  std::string api_key;   // bearer token, when the config names api_key_env
  std::chrono::milliseconds timeout{5000};  // connect and read
};

/// Ok when the server answers `path` with any HTTP status (a 503 while it loads a model, a 401 without
/// a key: something is there); the error of the request (connect refused, timeout) otherwise.
core::Expected<void> check_answers(const UrlCheck& check);

}  // namespace kvsweep::server
