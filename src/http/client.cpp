#include "kvsweep/http/client.hpp"

#include <httplib.h>

#include <cstdio>

#include "kvsweep/http/trace.hpp"
#include "kvsweep/http/watchdog.hpp"

namespace kvsweep::http {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", s);
  return buf;
}

/// What one request came to: its status and body (a plain answer, or a failed stream's error
/// body), and how it ended when it did not end well.
struct Exchange {
  bool ok = false;
  httplib::Error error = httplib::Error::Success;
  int status = 0;
  std::string body;
  bool stopped = false;   // the caller's on_bytes said stop
  bool expired = false;   // the whole-request deadline passed
  bool oversize = false;  // more bytes than the request's limit, or more header lines than httplib's bound
  bool endless_headers = false;  // the header lines passed CPPHTTPLIB_HEADER_MAX_COUNT
  double seconds = 0;
};

}  // namespace

struct Client::Impl {
  explicit Impl(const std::string& url) : cli(url), server(without_credentials(url)), watchdog([this] { cli.stop(); }) {}
  httplib::Client cli;
  std::string server;  // for the trace
  Watchdog watchdog;   // after cli: stopped (joined) before cli goes

  /// Sends `req`, reading at most `limit` bytes of answer within `deadline` in all. A 2xx body
  /// goes to `on_bytes` when given (a stream), else into the result; a non-2xx body is kept
  /// (its first 64 KiB) for the error message.
  Exchange send(httplib::Request& req, std::chrono::milliseconds deadline, std::size_t limit,
                const std::function<bool(std::string_view)>* on_bytes) {
    Exchange x;
    std::size_t received = 0;
    req.response_handler = [&](const httplib::Response& r) {
      x.status = r.status;
      return true;
    };
    req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
      received += n;
      if (received > limit) {
        x.oversize = true;
        return false;
      }
      if (x.status < 200 || x.status >= 300 || !on_bytes) {
        if (on_bytes && x.body.size() >= 65536) return true;
        x.body.append(data, n);
        return true;
      }
      if (!(*on_bytes)(std::string_view(data, n))) {
        x.stopped = true;
        return false;
      }
      return true;
    };
    const auto t0 = Clock::now();
    watchdog.arm(t0 + deadline);
    httplib::Response res;
    x.ok = cli.send(req, res, x.error);
    x.expired = watchdog.disarm();
    x.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (x.ok) x.status = res.status;
    // httplib stops reading headers at its bound (a Read error) with those it read kept: an answer
    // whose headers never end fails here, not at the deadline with all of them in memory.
    if (!x.ok && x.error == httplib::Error::Read && res.headers.size() >= CPPHTTPLIB_HEADER_MAX_COUNT)
      x.oversize = x.endless_headers = true;
    return x;
  }
};

namespace {

/// One plain (non-streamed) request in the trace, when tracing is on.
void trace_plain(const std::string& server, const char* method, const std::string& path, const Exchange& x,
                 Clock::time_point t0, bool fresh, std::size_t request_bytes = 0) {
  if (!trace_enabled()) return;
  TraceEntry e;
  e.request_bytes = request_bytes;
  e.method = method;
  e.server = server;
  e.path = path;
  e.fresh = fresh;
  e.ms = ms_since(t0);
  if (x.ok) {
    e.status = x.status;
    e.server_ms = server_ms_of(x.body);
  } else {
    e.error = x.expired ? "Deadline" : x.oversize ? "Oversize" : httplib::to_string(x.error);
  }
  trace(e);
}

core::Error from_httplib(httplib::Error e, const std::string& what) {
  using E = httplib::Error;
  switch (e) {
    case E::Connection:
      return {core::ErrorKind::connect, what + ": connection refused or failed", 0};
    case E::ConnectionTimeout:
      return {core::ErrorKind::connect, what + ": connect timed out", 0};
    default:
      return {core::ErrorKind::connect, what + ": " + httplib::to_string(e), 0};
  }
}

/// Why an exchange that did not complete failed.
core::Error exchange_error(const Exchange& x, const std::string& what, std::chrono::milliseconds deadline,
                           std::size_t limit) {
  if (x.expired)
    return {core::ErrorKind::timeout,
            what + ": no complete answer within " + seconds_text(std::chrono::duration<double>(deadline).count()) +
                " s (server.request_timeout_s bounds the whole request); stopped waiting",
            0};
  if (x.endless_headers)
    return {core::ErrorKind::oversize,
            what + ": the answer's header lines passed " + std::to_string(CPPHTTPLIB_HEADER_MAX_COUNT) +
                ", more than any server sends; stopped reading",
            0};
  if (x.oversize)
    return {core::ErrorKind::oversize,
            what + ": the answer passed " + std::to_string(limit) +
                " bytes, more than this request can need (its bound: max tokens and prompt); stopped reading",
            0};
  if (x.error == httplib::Error::Read)
    // The server closed the connection (or reset it) before the answer was whole, or sent one that
    // is not HTTP (a bad chunk size, headers without an end), well before the deadline: a malformed
    // answer, not a wait that ran out. The caller tells a dead server from a live one that cut its
    // answer; a live one goes on with the next item (never abandoned as wedged).
    return {core::ErrorKind::parse,
            what + ": the answer was cut or malformed: the connection closed after " + seconds_text(x.seconds) +
                " s, before a whole HTTP answer",
            0};
  return from_httplib(x.error, what);
}

/// httplib's own read timeout: past the deadline, so that the watchdog is what ends a slow answer.
std::chrono::microseconds idle_timeout(std::chrono::milliseconds deadline) {
  return std::chrono::duration_cast<std::chrono::microseconds>(deadline + std::chrono::seconds(1));
}

}  // namespace

Client::Client(std::string base_url, Timeouts timeouts)
    : m_base_url(std::move(base_url)), m_timeouts(timeouts), m_impl(std::make_unique<Impl>(m_base_url)) {
  auto& c = m_impl->cli;
  c.set_keep_alive(true);
  // Without TCP_NODELAY a POST (headers and body go out in two writes) waits for the server's
  // delayed ACK of the first before Nagle lets the second go: 40-50 ms per request on Linux,
  // measured at 50 ms against llama-server (2 ms with it; issue 21). Every request of every
  // Client (plain, streamed, health polls, the embedder, Ollama) goes out on a socket made here.
  c.set_tcp_nodelay(true);
  c.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeouts.connect));
  c.set_read_timeout(idle_timeout(timeouts.read));
  c.set_write_timeout(std::chrono::seconds(60));
}

Client::~Client() = default;

void Client::set_bearer_token(std::string key) {
  m_token = std::move(key);
  m_impl->cli.set_bearer_token_auth(m_token);
}

void Client::set_basic_auth(const std::string& user, const std::string& password) {
  m_impl->cli.set_basic_auth(user, password);
}

void Client::set_read_timeout(std::chrono::milliseconds read) {
  m_timeouts.read = read;
  m_impl->cli.set_read_timeout(idle_timeout(read));
}

core::Expected<Response> Client::get(const std::string& path, std::size_t limit) {
  const bool fresh = m_impl->cli.is_socket_open() == 0;
  const auto t0 = Clock::now();
  httplib::Request req;
  req.method = "GET";
  req.path = path;
  const Exchange x = m_impl->send(req, m_timeouts.read, limit, nullptr);
  trace_plain(m_impl->server, "GET", path, x, t0, fresh);
  if (!x.ok) {
    if (x.expired || x.oversize) m_impl->cli.stop();  // never reuse a connection left mid-answer
    return std::unexpected(exchange_error(x, "GET " + m_base_url + path, m_timeouts.read, limit));
  }
  return Response{x.status, x.body};
}

namespace {
std::string dump(const nlohmann::json& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

core::Expected<Response> Client::post_json(const std::string& path, const nlohmann::json& body, std::size_t limit) {
  return post_text(path, dump(body), limit);
}

core::Expected<Response> Client::post_text(const std::string& path, std::string json_text, std::size_t limit) {
  const bool fresh = m_impl->cli.is_socket_open() == 0;
  const auto t0 = Clock::now();
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers.emplace("Content-Type", "application/json");
  req.body = std::move(json_text);
  const Exchange x = m_impl->send(req, m_timeouts.read, limit, nullptr);
  trace_plain(m_impl->server, "POST", path, x, t0, fresh, req.body.size());
  if (!x.ok) {
    if (x.expired || x.oversize) m_impl->cli.stop();
    return std::unexpected(exchange_error(x, "POST " + m_base_url + path, m_timeouts.read, limit));
  }
  return Response{x.status, x.body};
}

namespace {
/// A non-2xx answer as an http_status error carrying the server's own message.
core::Error status_error(const std::string& what, int status, const std::string& body) {
  return {core::ErrorKind::http_status, what + ": HTTP " + std::to_string(status) + ": " + error_message(body), status};
}

core::Expected<nlohmann::json> to_json_result(core::Expected<Response> r, const std::string& what) {
  if (!r) return std::unexpected(r.error());
  if (r->status < 200 || r->status >= 300) return std::unexpected(status_error(what, r->status, r->body));
  try {
    return nlohmann::json::parse(r->body);
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, what + ": body is not JSON: " + e.what());
  }
}
}  // namespace

core::Expected<nlohmann::json> Client::post_for_json(const std::string& path, const nlohmann::json& body,
                                                     std::size_t limit) {
  return to_json_result(post_json(path, body, limit), "POST " + path);
}

core::Expected<nlohmann::json> Client::post_text_for_json(const std::string& path, std::string json_text,
                                                          std::size_t limit) {
  return to_json_result(post_text(path, std::move(json_text), limit), "POST " + path);
}

core::Expected<nlohmann::json> Client::get_json(const std::string& path, std::size_t limit) {
  return to_json_result(get(path, limit), "GET " + path);
}

core::Expected<Client::StreamResult> Client::post_stream(const std::string& path, const nlohmann::json& body,
                                                         const std::function<bool(std::string_view)>& on_bytes,
                                                         std::size_t limit) {
  return post_text_stream(path, dump(body), on_bytes, limit);
}

core::Expected<Client::StreamResult> Client::post_text_stream(const std::string& path, std::string json_text,
                                                              const std::function<bool(std::string_view)>& on_bytes,
                                                              std::size_t limit) {
  const bool fresh = m_impl->cli.is_socket_open() == 0;
  const auto t0 = Clock::now();
  const bool tracing = trace_enabled();
  std::string tail;  // the last bytes of the answer, for the trace's server time
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers.emplace("Content-Type", "application/json");
  req.headers.emplace("Accept", "text/event-stream");
  req.body = std::move(json_text);
  const std::function<bool(std::string_view)> forward = [&](std::string_view bytes) {
    if (tracing) {
      tail.append(bytes);
      if (tail.size() > 32768) tail.erase(0, tail.size() - 16384);
    }
    return on_bytes(bytes);
  };
  const Exchange x = m_impl->send(req, m_timeouts.read, limit, &forward);
  // Never reuse a streamed connection: after a cancel the server may still be writing to it,
  // and after a complete stream a reused keep-alive socket was seen to fail the next request
  // (a /tokenize right after a stream got a Read error once in 24 answers). A fresh connection
  // per streamed answer costs one local connect.
  m_impl->cli.stop();
  if (tracing) {
    TraceEntry e;
    e.method = "POST";
    e.server = m_impl->server;
    e.path = path;
    e.status = x.ok || x.stopped ? x.status : 0;
    e.stream = true;
    e.cancelled = x.stopped;
    e.fresh = fresh;
    e.ms = ms_since(t0);
    e.request_bytes = req.body.size();
    e.server_ms = server_ms_of_stream(tail);
    if (!x.ok && !x.stopped) e.error = x.expired ? "Deadline" : x.oversize ? "Oversize" : httplib::to_string(x.error);
    trace(e);
  }
  if (x.stopped) return StreamResult{x.status, true};
  if (!x.ok) return std::unexpected(exchange_error(x, "POST " + m_base_url + path, m_timeouts.read, limit));
  if (x.status < 200 || x.status >= 300) return std::unexpected(status_error("POST " + path, x.status, x.body));
  return StreamResult{x.status, false};
}

std::string error_message(const std::string& body) {
  try {
    auto j = nlohmann::json::parse(body);
    if (j.is_object() && j.contains("error")) {
      const auto& e = j["error"];
      if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
      if (e.is_string()) return e.get<std::string>();
    }
    // vLLM and SGLang: {"object":"error","message":…,"type":…,"code":…}; FastAPI: {"detail":…}.
    if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
    if (j.is_object() && j.contains("detail")) return j["detail"].is_string() ? j["detail"].get<std::string>() : j["detail"].dump();
  } catch (...) {
  }
  if (body.size() > 300) return body.substr(0, 300) + "…";
  return body;
}

}  // namespace kvsweep::http
