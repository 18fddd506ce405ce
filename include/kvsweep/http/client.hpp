#pragma once
/// The HTTP client: the only code that includes cpp-httplib. Failures are values
/// (connect, timeout, status, parse), never exceptions.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"

namespace kvsweep::http {

struct Response {
  int status = 0;
  std::string body;
};

struct Timeouts {
  std::chrono::milliseconds connect{2000};
  /// The whole request, from connect to the last byte, streamed or not: a server that trickles
  /// or streams without end is cut off here (ErrorKind::timeout).
  std::chrono::milliseconds read{600000};
};

/// The most bytes of an answer read when a request sets no bound of its own (/props, /tokenize,
/// embeddings, Ollama's control calls); more is ErrorKind::oversize.
inline constexpr std::size_t kDefaultResponseLimit = std::size_t{64} << 20;

/// One server at a base URL ("http://127.0.0.1:8080"); keep-alive across requests.
class Client {
 public:
  Client(std::string base_url, Timeouts timeouts);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Adds `Authorization: Bearer <key>` to every request. The key is never logged.
  void set_bearer_token(std::string key);
  /// Adds `Authorization: Basic …` (a URL's user:password) to every request. Never logged.
  void set_basic_auth(const std::string& user, const std::string& password);
  void set_read_timeout(std::chrono::milliseconds read);

  /// Every request is bounded by the read timeout as a whole (ErrorKind::timeout) and reads at
  /// most `limit` bytes of answer (ErrorKind::oversize); either closes the connection.
  core::Expected<Response> get(const std::string& path, std::size_t limit = kDefaultResponseLimit);
  core::Expected<Response> post_json(const std::string& path, const nlohmann::json& body,
                                     std::size_t limit = kDefaultResponseLimit);
  /// POST and parse the body as JSON; a non-2xx status is an http_status error carrying
  /// the server's own message.
  core::Expected<nlohmann::json> post_for_json(const std::string& path, const nlohmann::json& body,
                                               std::size_t limit = kDefaultResponseLimit);
  /// As post_json and post_for_json with the body already written as JSON text (a large prompt
  /// spliced in as text, never built as JSON nodes: server::IdsJsonWriter).
  core::Expected<Response> post_text(const std::string& path, std::string json_text,
                                     std::size_t limit = kDefaultResponseLimit);
  core::Expected<nlohmann::json> post_text_for_json(const std::string& path, std::string json_text,
                                                    std::size_t limit = kDefaultResponseLimit);
  core::Expected<nlohmann::json> get_json(const std::string& path, std::size_t limit = kDefaultResponseLimit);

  /// POSTs JSON and hands the response body to `on_bytes` piece by piece as it arrives (a
  /// streamed answer). `on_bytes` returns false to stop reading: the connection is closed,
  /// which tells the server to stop generating, and the result has `cancelled` set.
  /// A non-2xx answer is not streamed: it is an http_status error with the server's message.
  struct StreamResult {
    int status = 0;
    bool cancelled = false;
  };
  core::Expected<StreamResult> post_stream(const std::string& path, const nlohmann::json& body,
                                           const std::function<bool(std::string_view)>& on_bytes,
                                           std::size_t limit = kDefaultResponseLimit);
  /// As post_stream with the body already written as JSON text.
  core::Expected<StreamResult> post_text_stream(const std::string& path, std::string json_text,
                                                const std::function<bool(std::string_view)>& on_bytes,
                                                std::size_t limit = kDefaultResponseLimit);

  const std::string& base_url() const { return m_base_url; }

 private:
  struct Impl;
  std::string m_base_url;
  Timeouts m_timeouts;
  std::string m_token;
  std::unique_ptr<Impl> m_impl;
};

/// Extracts a readable message from a server error body ({"error":{"message":…}}, vLLM's and SGLang's
/// {"object":"error","message":…}, FastAPI's {"detail":…}, or text).
std::string error_message(const std::string& body);

}  // namespace kvsweep::http
