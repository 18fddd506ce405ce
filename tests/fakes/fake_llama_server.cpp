// fake-llama-server: a fake, to inject HTTP faults the real llama-server will not produce on
// demand. Everything else kvsweep checks is real llama-server's shape (servers.md part A):
//
//   fake-llama-server --version               prints "version: 0 (fake)" and exits 0
//   fake-llama-server -m M --host H --port P -ctk K -ctv V …   (other arguments are ignored)
//     logs llama.cpp's `llama_kv_cache: size = … K (K): … MiB, V (V): … MiB` and `model loaded` lines on stderr,
//     then binds H:P, logs `listening on http://H:P` (or `couldn't bind …` and exits 1), and serves
//     GET /health and /props, and POST /completion (non-streamed only): the answer's content is
//     "echo: <prompt>".
//
// Faults, chosen by a marker in the prompt; each happens on the first request carrying it only
// (a marker file in $FAKE_FAULT_DIR remembers it), so a resumed run sees a healthy server:
//   FAULT-500      HTTP 500 with llama-server's error object
//   FAULT-NONJSON  HTTP 200 whose body is not JSON
//   FAULT-CUT      HTTP 200 whose body stops halfway and the connection closes
//   FAULT-STALL    nothing is sent for FAKE_STALL_MS (default 30000) ms
//   FAULT-TRICKLE  HTTP 200 whose body comes one byte per 100 ms, without end
//   FAULT-ENDLESS  HTTP 200 whose chunked body never ends (64 KiB per 10 ms)
//   FAULT-ECHOAUTH HTTP 500 whose message echoes the request's Authorization header and a Basic
//                  credential of its own (a proxy that logs what it got)
//   FAULT-TIMINGS  HTTP 200 whose timings are impossible (negative prompt_ms, predicted_n 2^63-1)
// FAKE_PROPS, when set, is the body GET /props answers (e.g. {"build_info": null}).
// Every /completion prompt is logged to stderr as `fake: completion "<prompt>"`.
// FAKE_NO_KV_LINE=1 leaves the KV cache line out of the log (a server that ignored -ctk silently).

#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace {

std::string arg_after(int argc, char** argv, const std::string& flag, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == flag) return argv[i + 1];
  return fallback;
}

/// True the first time `marker` is seen (per $FAKE_FAULT_DIR).
bool first_time(const std::string& marker) {
  const char* dir = std::getenv("FAKE_FAULT_DIR");
  if (!dir) return true;
  const auto seen = std::filesystem::path(dir) / marker;
  if (std::filesystem::exists(seen)) return false;
  std::ofstream(seen) << "seen\n";
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::fprintf(stderr, "version: 0 (fake)\nbuilt with fake-llama-server\n");
    return 0;
  }
  const std::string host = arg_after(argc, argv, "--host", "127.0.0.1");
  const int port = std::atoi(arg_after(argc, argv, "--port", "0").c_str());
  const std::string type_k = arg_after(argc, argv, "-ctk", "f16");
  const std::string type_v = arg_after(argc, argv, "-ctv", "f16");
  const long stall_ms = std::getenv("FAKE_STALL_MS") ? std::atol(std::getenv("FAKE_STALL_MS")) : 30000;
  if (!std::getenv("FAKE_NO_KV_LINE"))
    std::fprintf(stderr,
               "llama_kv_cache: size =    1.00 MiB (  1024 cells,   2 layers,  1/1 seqs), K (%s):    0.50 MiB, V (%s):    "
               "0.50 MiB\nllama_context: flash_attn = enabled\n",
               type_k.c_str(), type_v.c_str());
  std::fprintf(stderr, "srv  llama_server: model loaded\n");  // the line kvsweep waits for after /health
  std::fflush(stderr);

  httplib::Server server;
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });
  server.Get("/props", [](const httplib::Request&, httplib::Response& res) {
    const char* props = std::getenv("FAKE_PROPS");
    res.set_content(props ? props : R"({"build_info":"fake","model_path":"fake.gguf","total_slots":1})", "application/json");
  });
  server.Post("/completion", [&](const httplib::Request& req, httplib::Response& res) {
    const auto body = nlohmann::json::parse(req.body, nullptr, false);
    const std::string prompt = body.is_object() ? body.value("prompt", "") : "";
    std::fprintf(stderr, "fake: completion \"%s\"\n", prompt.c_str());
    std::fflush(stderr);
    auto has = [&](const char* marker) { return prompt.find(marker) != std::string::npos && first_time(marker); };
    const nlohmann::json answer = {{"content", "echo: " + prompt},
                                   {"stop_type", "limit"},
                                   {"tokens", {1, 2, 3}},
                                   {"timings", {{"prompt_n", 3}, {"predicted_n", 3}, {"prompt_ms", 1.0}, {"predicted_ms", 1.0}}}};
    if (has("FAULT-500")) {
      res.status = 500;
      res.set_content(R"({"error":{"code":500,"message":"fake: injected failure","type":"server_error"}})", "application/json");
    } else if (has("FAULT-NONJSON")) {
      res.set_content("<html>502 Bad Gateway (not JSON)</html>", "application/json");
    } else if (has("FAULT-CUT")) {
      const std::string text = answer.dump();
      // Promise the whole answer, send half of it, then drop the connection.
      res.set_content_provider(text.size(), "application/json", [text](std::size_t offset, std::size_t, httplib::DataSink& sink) {
        if (offset > 0) return false;
        sink.write(text.data(), text.size() / 2);
        return true;
      });
    } else if (has("FAULT-TRICKLE")) {
      res.set_chunked_content_provider("application/json", [](std::size_t, httplib::DataSink& sink) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return sink.write("{", 1);  // false once the client has gone
      });
    } else if (has("FAULT-ENDLESS")) {
      res.set_chunked_content_provider("application/json", [](std::size_t, httplib::DataSink& sink) {
        static const std::string block(65536, ' ');
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return sink.write(block.data(), block.size());
      });
    } else if (has("FAULT-ECHOAUTH")) {
      res.status = 500;
      const std::string message = "fake: refused Authorization: " + req.get_header_value("Authorization") +
                                  " (upstream said Authorization: Basic YWxpY2U6c2VjcmV0LXB3)";
      res.set_content(nlohmann::json{{"error", {{"code", 500}, {"message", message}, {"type", "server_error"}}}}.dump(),
                      "application/json");
    } else if (has("FAULT-TIMINGS")) {
      nlohmann::json impossible = answer;
      impossible["timings"] = {{"prompt_n", 3}, {"predicted_n", 9223372036854775807LL}, {"prompt_ms", -5.0}, {"predicted_ms", 1.0}};
      res.set_content(impossible.dump(), "application/json");
    } else if (has("FAULT-STALL")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(stall_ms));
      res.set_content(answer.dump(), "application/json");
    } else {
      res.set_content(answer.dump(), "application/json");
    }
  });
  // As llama-server: bind, say so with the port (kvsweep confirms its child by this line), then serve.
  if (!server.bind_to_port(host, port)) {
    std::fprintf(stderr, "srv  llama_server: couldn't bind HTTP server socket, hostname: %s, port: %d\n", host.c_str(), port);
    return 1;
  }
  std::fprintf(stderr, "srv  llama_server: listening on http://%s:%d\n", host.c_str(), port);
  std::fflush(stderr);
  return server.listen_after_bind() ? 0 : 1;
}
