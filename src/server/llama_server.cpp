#include "kvsweep/server/llama_server.hpp"

#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "kvsweep/http/client.hpp"
#include "kvsweep/process/child.hpp"
#include "kvsweep/server/llama_api.hpp"

namespace kvsweep::server {

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class LlamaServerInstance final : public Instance {
 public:
  LlamaServerInstance(process::Child child, std::shared_ptr<http::Client> client, CellSpec spec,
                      std::size_t log_offset)
      : m_child(std::move(child)), m_api(client), m_client(std::move(client)), m_spec(std::move(spec)),
        m_log_offset(log_offset) {}
  ~LlamaServerInstance() override { stop(); }

  Api& api() override { return m_api; }
  bool alive() override { return m_child.running(); }
  void stop() override {
    if (m_child.pid() > 0 && !m_stopped) {
      m_exit = m_child.stop(m_spec.stop_grace).describe();
      m_stopped = true;
    }
  }
  EffectiveKv effective() const override { return m_effective; }
  double ready_seconds() const override { return m_ready_s; }
  nlohmann::json info() const override { return m_info; }
  std::string log_tail(std::size_t lines) const override { return process::tail_file(m_spec.log_path, lines); }
  std::string exit_description() override {
    if (auto s = m_child.poll()) return s->describe();
    return m_exit;
  }

  // Filled by start().
  EffectiveKv m_effective;
  double m_ready_s = 0;
  nlohmann::json m_info;

  std::string log_since_start() const {
    std::string all = read_file(m_spec.log_path);
    return m_log_offset < all.size() ? all.substr(m_log_offset) : std::string{};
  }

 private:
  process::Child m_child;
  LlamaApi m_api;
  std::shared_ptr<http::Client> m_client;
  CellSpec m_spec;
  std::size_t m_log_offset;
  bool m_stopped = false;
  std::string m_exit;
};

}  // namespace

std::vector<std::string> llama_server_argv(const LlamaServerOptions& options, const CellSpec& spec, int port) {
  std::vector<std::string> argv = {
      options.binary, "-m", spec.model_path, "--host", "127.0.0.1", "--port", std::to_string(port),
      "-ctk", spec.type_k, "-ctv", spec.type_v, "-np", "1", "-c", std::to_string(spec.n_ctx),
      // -lv 4 prints the KV cache and flash-attention lines we verify the cell with.
      "-lv", "4", "--no-webui", "--log-colors", "off"};
  if (options.embeddings) {
    argv.insert(argv.end(), {"--embeddings", "--pooling", options.pooling});
  }
  argv.insert(argv.end(), spec.extra_args.begin(), spec.extra_args.end());
  return argv;
}

std::expected<std::unique_ptr<Instance>, StartFailure> LlamaServerBackend::start(const CellSpec& spec,
                                                                                const std::atomic<bool>& cancel) {
  std::error_code ec;
  std::size_t log_offset = std::filesystem::exists(spec.log_path, ec) ? std::filesystem::file_size(spec.log_path, ec) : 0;
  int port = free_port();
  auto argv = llama_server_argv(m_options, spec, port);
  {
    std::ofstream log(spec.log_path, std::ios::app);
    log << "# kvsweep: launching:";
    for (const auto& a : argv) log << " " << a;
    log << "\n";
  }
  log_offset = std::filesystem::file_size(spec.log_path, ec);
  process::LaunchSpec launch;
  launch.argv = argv;
  launch.env = spec.env;
  // Environment variables that would silently change the cell (CLI wins, but warn-free is better).
  launch.unset_env = {"LLAMA_ARG_CACHE_TYPE_K", "LLAMA_ARG_CACHE_TYPE_V", "LLAMA_ARG_MODEL", "LLAMA_ARG_CTX_SIZE",
                      "LLAMA_ARG_N_PARALLEL", "LLAMA_API_KEY"};
  launch.log_path = spec.log_path;
  auto t0 = std::chrono::steady_clock::now();
  auto child = process::Child::spawn(launch);
  if (!child) return std::unexpected(StartFailure{"load_failed", child.error().message, ""});

  auto client = std::make_shared<http::Client>("http://127.0.0.1:" + std::to_string(port),
                                               http::Timeouts{std::chrono::milliseconds(2000), spec.request_timeout});
  http::Client health("http://127.0.0.1:" + std::to_string(port),
                      http::Timeouts{std::chrono::milliseconds(200), std::chrono::milliseconds(2000)});
  auto instance = std::make_unique<LlamaServerInstance>(std::move(*child), client, spec, log_offset);

  auto deadline = t0 + spec.ready_timeout;
  for (;;) {
    if (cancel.load()) {
      instance->stop();
      return std::unexpected(StartFailure{"cancelled", "interrupted while waiting for the server", ""});
    }
    if (!instance->alive()) {
      std::string log = instance->log_since_start();
      std::string outcome = classify_load_failure(log);
      return std::unexpected(StartFailure{outcome, "llama-server " + instance->exit_description() + " before it was ready",
                                          instance->log_tail(25)});
    }
    auto r = health.get("/health");
    if (r && r->status == 200) break;
    if (std::chrono::steady_clock::now() > deadline) {
      instance->stop();
      return std::unexpected(StartFailure{"load_failed", "not ready within the ready timeout (" +
                                                             std::to_string(spec.ready_timeout.count() / 1000) + " s)",
                                          instance->log_tail(25)});
    }
    // 20 ms between polls: readiness is noticed within ~50 ms without busy-looping.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  instance->m_ready_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  instance->m_effective = parse_effective_kv(instance->log_since_start());
  nlohmann::json info = {{"port", port}, {"argv", argv}};
  if (auto props = client->get_json("/props")) {
    info["build_info"] = props->value("build_info", "");
    info["model_path"] = props->value("model_path", "");
    if (props->contains("default_generation_settings"))
      info["n_ctx"] = (*props)["default_generation_settings"].value("n_ctx", 0);
    info["total_slots"] = props->value("total_slots", 0);
  }
  instance->m_info = info;
  return instance;
}

nlohmann::json LlamaServerBackend::describe() {
  if (!m_description.is_null()) return m_description;
  // `llama-server --version` prints "version: N (sha)" and "built with …" on stderr.
  auto tmp = std::filesystem::temp_directory_path() / ("kvsweep-version-" + std::to_string(::getpid()) + ".txt");
  process::LaunchSpec spec{{m_options.binary, "--version"}, {}, {}, tmp};
  std::string text;
  if (auto child = process::Child::spawn(spec)) {
    for (int i = 0; i < 500 && child->running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    child->stop(std::chrono::milliseconds(100));
    text = read_file(tmp);
  }
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  nlohmann::json d = {{"backend", "llama-server"}, {"binary", process::which(m_options.binary)}};
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("version:", 0) == 0) d["version"] = line.substr(9);
    if (line.rfind("built with", 0) == 0) d["built_with"] = line;
  }
  m_description = d;
  return d;
}

}  // namespace kvsweep::server
