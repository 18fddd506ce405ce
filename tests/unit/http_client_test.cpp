// http::Client against a minimal HTTP/1.1 server on a real 127.0.0.1 socket in this process: the
// socket options only a socket shows (TCP_NODELAY: without it each POST waits ~45 ms
// for a delayed ACK), an answer whose headers never end, and LlamaApi's multi-prompt
// request. Plus the request trace's parsers.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/http/client.hpp"
#include "kvsweep/http/trace.hpp"
#include "kvsweep/server/llama/llama_api.hpp"

using ::testing::HasSubstr;

namespace {

using nlohmann::json;

/// A socket listening on 127.0.0.1 at a port the kernel picks (written to `port`).
int listen_on_loopback(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 4) != 0)
    throw std::runtime_error("cannot listen on 127.0.0.1");
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

/// An HTTP/1.1 server on 127.0.0.1 that answers every request, one connection at a time, with
/// 200 and `body` (Content-Length, kept alive), and keeps the request bodies it received.
class LocalServer {
 public:
  explicit LocalServer(std::string body) : m_body(std::move(body)), m_listen(listen_on_loopback(m_port)) {
    m_thread = std::thread([this] { serve(); });
  }
  ~LocalServer() {
    m_stopping = true;
    ::shutdown(m_listen, SHUT_RDWR);  // wakes accept()
    if (int c = m_conn.load(); c >= 0) ::shutdown(c, SHUT_RDWR);
    m_thread.join();
    ::close(m_listen);
  }
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  int port() const { return m_port; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  std::vector<std::string> bodies() {
    std::lock_guard lock(m_mutex);
    return m_bodies;
  }

 private:
  void serve() {
    while (!m_stopping) {
      const int c = ::accept(m_listen, nullptr, nullptr);
      if (c < 0) return;
      m_conn = c;
      std::string in;
      char buf[4096];
      for (;;) {
        const std::size_t head_end = in.find("\r\n\r\n");
        if (head_end != std::string::npos) {
          std::size_t length = 0;
          const std::size_t cl = in.find("Content-Length: ");
          if (cl != std::string::npos && cl < head_end) length = std::stoul(in.substr(cl + 16));
          if (in.size() >= head_end + 4 + length) {
            {
              std::lock_guard lock(m_mutex);
              m_bodies.push_back(in.substr(head_end + 4, length));
            }
            in.erase(0, head_end + 4 + length);
            const std::string out = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                    std::to_string(m_body.size()) + "\r\n\r\n" + m_body;
            if (::send(c, out.data(), out.size(), MSG_NOSIGNAL) < 0) break;
            continue;
          }
        }
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<std::size_t>(n));
      }
      m_conn = -1;
      ::close(c);
    }
  }

  std::string m_body;
  int m_port = 0;
  int m_listen = -1;
  std::atomic<int> m_conn{-1};
  std::atomic<bool> m_stopping{false};
  std::mutex m_mutex;
  std::vector<std::string> m_bodies;
  std::thread m_thread;
};

/// A hostile server on 127.0.0.1: to the first request it answers a status line, then
/// header lines without end until the client goes, counting the bytes it got out.
class EndlessHeaders {
 public:
  EndlessHeaders() : m_listen(listen_on_loopback(m_port)) { m_thread = std::thread([this] { serve(); }); }
  ~EndlessHeaders() {
    m_stopping = true;
    ::shutdown(m_listen, SHUT_RDWR);  // wakes accept()
    m_thread.join();
    ::close(m_listen);
  }
  EndlessHeaders(const EndlessHeaders&) = delete;
  EndlessHeaders& operator=(const EndlessHeaders&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  std::size_t sent() const { return m_sent; }

 private:
  void serve() {
    const int c = ::accept(m_listen, nullptr, nullptr);
    if (c < 0) return;
    char buf[4096];
    (void)::recv(c, buf, sizeof buf, 0);  // the request: a GET's head fits one read
    std::string lines;
    for (int i = 0; i < 1000; ++i) lines += "X-Padding-" + std::to_string(i) + ": 0123456789abcdef0123456789abcdef\r\n";
    std::string out = "HTTP/1.1 200 OK\r\n" + lines;
    while (!m_stopping) {
      const ssize_t n = ::send(c, out.data(), out.size(), MSG_NOSIGNAL);
      if (n <= 0) break;  // the client closed the connection
      m_sent += static_cast<std::size_t>(n);
      out = lines;  // a partial send only cuts a line short; the next lines follow whole
    }
    ::close(c);
  }

  int m_port = 0;
  int m_listen = -1;
  std::atomic<bool> m_stopping{false};
  std::atomic<std::size_t> m_sent{0};
  std::thread m_thread;
};

/// TCP_NODELAY of this process's socket connected to 127.0.0.1:`port`: 1 set, 0 not set,
/// -1 no such socket (found among the process's open file descriptors).
int nodelay_of_socket_to(int port) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0 || peer.sin_family != AF_INET) continue;
    if (ntohs(peer.sin_port) != port) continue;
    int value = 0;
    socklen_t value_len = sizeof value;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &value, &value_len) != 0) continue;
    return value != 0 ? 1 : 0;
  }
  return -1;
}

kvsweep::http::Timeouts short_timeouts() {
  return {std::chrono::milliseconds(2000), std::chrono::milliseconds(5000)};
}

TEST(HttpClient, PlainRequestsGoOutOnASocketWithTcpNodelay) {
  LocalServer server("{}");
  kvsweep::http::Client client(server.url(), short_timeouts());
  auto got = client.get("/health");
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->status, 200);
  // The kept-alive connection is still open: read the option back from it.
  EXPECT_EQ(nodelay_of_socket_to(server.port()), 1);
  auto posted = client.post_for_json("/completion", {{"prompt", "x"}});
  ASSERT_TRUE(posted) << posted.error().message;
  EXPECT_EQ(nodelay_of_socket_to(server.port()), 1);
}

TEST(HttpClient, StreamedRequestsGoOutOnASocketWithTcpNodelay) {
  LocalServer server("data: {}\n\n");
  kvsweep::http::Client client(server.url(), short_timeouts());
  int nodelay_while_streaming = -2;
  auto got = client.post_stream("/completion", {{"stream", true}}, [&](std::string_view) {
    nodelay_while_streaming = nodelay_of_socket_to(server.port());
    return true;
  });
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(nodelay_while_streaming, 1);
}

// A server sending header lines without end grew kvsweep by 1.85 GB in 12 s, until the
// request's deadline; the client now fails the request at the bound on an answer's header lines
// (cpp-httplib's CPPHTTPLIB_HEADER_MAX_COUNT), an oversize answer, long before its deadline.
TEST(HttpClient, EndlessResponseHeadersFailTheRequestInsteadOfGrowing) {
  EndlessHeaders server;
  kvsweep::http::Client client(server.url(), {std::chrono::milliseconds(2000), std::chrono::milliseconds(3000)});
  auto r = client.get("/health");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, kvsweep::core::ErrorKind::oversize) << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr("header lines")) << r.error().message;
  // What the client let in before it stopped: ~100 lines, plus what the sockets' buffers held.
  EXPECT_LT(server.sent(), 16u << 20) << r.error().message;
}

TEST(LlamaApi, CompleteEachSendsTheTokenPromptsInOneRequestAndKeepsTheirOrder) {
  const json answers = json::array({
      {{"index", 0}, {"content", "a"}, {"stop_type", "limit"}, {"timings", {{"prompt_ms", 2.0}, {"predicted_ms", 1.0}}}},
      {{"index", 1}, {"content", "b"}, {"stop_type", "eos"}, {"timings", {{"prompt_ms", 0.5}, {"predicted_ms", 1.0}}}},
  });
  LocalServer server(answers.dump());
  kvsweep::server::LlamaApi api(std::make_shared<kvsweep::http::Client>(server.url(), short_timeouts()));
  kvsweep::server::CompletionRequest request;
  request.n_predict = 1;
  request.n_probs = 5;
  request.cache_prompt = false;
  auto got = api.complete_each(request, {{1, 2, 3}, {1, 2, 3, 4}});
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].content, "a");
  EXPECT_EQ((*got)[1].content, "b");
  EXPECT_EQ((*got)[1].stop_type, "eos");
  EXPECT_DOUBLE_EQ((*got)[0].timings.prompt_ms, 2.0);
  const auto bodies = server.bodies();
  ASSERT_EQ(bodies.size(), 1u);
  const json body = json::parse(bodies[0]);
  EXPECT_EQ(body["prompt"], json::parse("[[1,2,3],[1,2,3,4]]"));
  EXPECT_EQ(body["n_probs"], 5);
  EXPECT_EQ(body["n_predict"], 1);
  EXPECT_EQ(body["cache_prompt"], false);
  EXPECT_EQ(body["response_fields"], json(kvsweep::server::completion_response_fields()));  // no prompt echoed
}

TEST(LlamaApi, CompleteEachRejectsAnAnswerOfTheWrongShape) {
  LocalServer server(R"([{"index":0,"content":"a"}])");
  kvsweep::server::LlamaApi api(std::make_shared<kvsweep::http::Client>(server.url(), short_timeouts()));
  auto got = api.complete_each({}, {{1}, {1, 2}});
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().kind, kvsweep::core::ErrorKind::parse);
  EXPECT_THAT(got.error().message, HasSubstr("expected an array of 2 answers")) << got.error().message;

  LocalServer swapped(R"([{"index":1,"content":"b"},{"index":0,"content":"a"}])");
  kvsweep::server::LlamaApi api2(std::make_shared<kvsweep::http::Client>(swapped.url(), short_timeouts()));
  auto out_of_order = api2.complete_each({}, {{1}, {1, 2}});
  ASSERT_FALSE(out_of_order);
  EXPECT_THAT(out_of_order.error().message, HasSubstr("says index 1")) << out_of_order.error().message;
}

TEST(HttpTrace, ServerTimeOfAnAnswer) {
  using kvsweep::http::server_ms_of;
  EXPECT_DOUBLE_EQ(*server_ms_of(R"({"content":"x","timings":{"prompt_ms":1.5,"predicted_ms":2.25}})"), 3.75);
  // A multi-prompt answer: the sum over its elements.
  EXPECT_DOUBLE_EQ(*server_ms_of(R"([{"timings":{"prompt_ms":1,"predicted_ms":2}},{"timings":{"prompt_ms":3}}])"), 6.0);
  EXPECT_FALSE(server_ms_of(R"({"tokens":[1,2]})"));
  EXPECT_FALSE(server_ms_of("not json"));
}

TEST(HttpTrace, ServerTimeOfAStreamIsTheLastEventWithTimings) {
  using kvsweep::http::server_ms_of_stream;
  const std::string tail = "ings\":{\"prompt_ms\":9}}\n\n"  // cut by the start of the tail: skipped
                           "data: {\"content\":\"a\",\"timings\":{\"prompt_ms\":1,\"predicted_ms\":1}}\r\n\r\n"
                           "data: {\"content\":\"b\",\"timings\":{\"prompt_ms\":1,\"predicted_ms\":4}}\n\n"
                           "data: [DONE]\n\n";
  EXPECT_DOUBLE_EQ(*server_ms_of_stream(tail), 5.0);
  EXPECT_FALSE(server_ms_of_stream("data: {\"content\":\"a\"}\n\n"));
  EXPECT_FALSE(server_ms_of_stream(""));
}

TEST(HttpTrace, ServerNamesCarryNoCredentials) {
  using kvsweep::http::without_credentials;
  EXPECT_EQ(without_credentials("https://user:secret@example.com:8443"), "https://example.com:8443");
  EXPECT_EQ(without_credentials("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
  EXPECT_EQ(without_credentials("http://host/a@b"), "http://host/a@b");
}

}  // namespace
