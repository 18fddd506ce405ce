#include "kvsweep/http/client.hpp"

#include <httplib.h>

#include "kvsweep/http/trace.hpp"

namespace kvsweep::http {

struct Client::Impl {
  explicit Impl(const std::string& url) : cli(url), server(without_credentials(url)) {}
  httplib::Client cli;
  std::string server;  // for the trace
};

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// One plain (non-streamed) request in the trace, when tracing is on.
void trace_plain(const std::string& server, const char* method, const std::string& path, const httplib::Result& res,
                 Clock::time_point t0, bool fresh, std::size_t request_bytes = 0) {
  if (!trace_enabled()) return;
  TraceEntry e;
  e.request_bytes = request_bytes;
  e.method = method;
  e.server = server;
  e.path = path;
  e.fresh = fresh;
  e.ms = ms_since(t0);
  if (res) {
    e.status = res->status;
    e.server_ms = server_ms_of(res->body);
  } else {
    e.error = httplib::to_string(res.error());
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
    case E::Read:
      // A read timeout and a peer that closed mid-answer both land here; the
      // caller tells them apart by checking whether the server is still alive.
      return {core::ErrorKind::timeout, what + ": no (complete) answer: " + httplib::to_string(e), 0};
    default:
      return {core::ErrorKind::connect, what + ": " + httplib::to_string(e), 0};
  }
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
  c.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeouts.read));
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
  m_impl->cli.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(read));
}

core::Expected<Response> Client::get(const std::string& path) {
  const bool fresh = m_impl->cli.is_socket_open() == 0;
  const auto t0 = Clock::now();
  auto res = m_impl->cli.Get(path);
  trace_plain(m_impl->server, "GET", path, res, t0, fresh);
  if (!res) return std::unexpected(from_httplib(res.error(), "GET " + m_base_url + path));
  return Response{res->status, res->body};
}

core::Expected<Response> Client::post_json(const std::string& path, const nlohmann::json& body) {
  const bool fresh = m_impl->cli.is_socket_open() == 0;
  const auto t0 = Clock::now();
  const std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto res = m_impl->cli.Post(path, text, "application/json");
  trace_plain(m_impl->server, "POST", path, res, t0, fresh, text.size());
  if (!res) return std::unexpected(from_httplib(res.error(), "POST " + m_base_url + path));
  return Response{res->status, res->body};
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

core::Expected<nlohmann::json> Client::post_for_json(const std::string& path, const nlohmann::json& body) {
  return to_json_result(post_json(path, body), "POST " + path);
}

core::Expected<nlohmann::json> Client::get_json(const std::string& path) {
  return to_json_result(get(path), "GET " + path);
}

core::Expected<Client::StreamResult> Client::post_stream(const std::string& path, const nlohmann::json& body,
                                                         const std::function<bool(std::string_view)>& on_bytes) {
  const bool fresh = m_impl->cli.is_socket_open() == 0;
  const auto t0 = Clock::now();
  const bool tracing = trace_enabled();
  std::string tail;  // the last bytes of the answer, for the trace's server time
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers.emplace("Content-Type", "application/json");
  req.headers.emplace("Accept", "text/event-stream");
  req.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  int status = 0;
  std::string error_body;
  bool stopped = false;
  req.response_handler = [&](const httplib::Response& r) {
    status = r.status;
    return true;
  };
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    if (status < 200 || status >= 300) {
      if (error_body.size() < 65536) error_body.append(data, n);
      return true;
    }
    if (tracing) {
      tail.append(data, n);
      if (tail.size() > 32768) tail.erase(0, tail.size() - 16384);
    }
    if (!on_bytes(std::string_view(data, n))) {
      stopped = true;
      return false;
    }
    return true;
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  const bool ok = m_impl->cli.send(req, res, err);
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
    e.status = ok || stopped ? status : 0;
    e.stream = true;
    e.cancelled = stopped;
    e.fresh = fresh;
    e.ms = ms_since(t0);
    e.request_bytes = req.body.size();
    e.server_ms = server_ms_of_stream(tail);
    if (!ok && !stopped) e.error = httplib::to_string(err);
    trace(e);
  }
  if (stopped) return StreamResult{status, true};
  if (!ok) return std::unexpected(from_httplib(err, "POST " + m_base_url + path));
  status = res.status;
  if (status < 200 || status >= 300) {
    if (error_body.empty()) error_body = res.body;
    return std::unexpected(status_error("POST " + path, status, error_body));
  }
  return StreamResult{status, false};
}

std::string error_message(const std::string& body) {
  try {
    auto j = nlohmann::json::parse(body);
    if (j.contains("error")) {
      const auto& e = j["error"];
      if (e.is_object() && e.contains("message")) return e["message"].get<std::string>();
      if (e.is_string()) return e.get<std::string>();
    }
  } catch (...) {
  }
  if (body.size() > 300) return body.substr(0, 300) + "…";
  return body;
}

}  // namespace kvsweep::http
