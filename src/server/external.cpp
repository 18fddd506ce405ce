#include "kvsweep/server/external.hpp"

#include <cstdlib>
#include <thread>

#include "kvsweep/http/client.hpp"
#include "kvsweep/server/llama_api.hpp"

namespace kvsweep::server {

namespace {

class ExternalInstance final : public Instance {
 public:
  ExternalInstance(std::shared_ptr<http::Client> client, EffectiveKv eff, nlohmann::json info)
      : m_api(std::move(client)), m_effective(std::move(eff)), m_info(std::move(info)) {}
  Api& api() override { return m_api; }
  bool alive() override { return true; }
  void stop() override {}
  EffectiveKv effective() const override { return m_effective; }
  double ready_seconds() const override { return 0; }
  nlohmann::json info() const override { return m_info; }
  std::string log_tail(std::size_t) const override { return "(external server: no log)"; }

 private:
  LlamaApi m_api;
  EffectiveKv m_effective;
  nlohmann::json m_info;
};

}  // namespace

std::expected<std::unique_ptr<Instance>, StartFailure> ExternalBackend::start(const CellSpec& spec,
                                                                             const std::atomic<bool>& cancel) {
  auto client = std::make_shared<http::Client>(m_options.url,
                                               http::Timeouts{std::chrono::milliseconds(2000), spec.request_timeout});
  if (!m_options.api_key_env.empty()) {
    const char* key = std::getenv(m_options.api_key_env.c_str());
    if (!key || !*key) {
      return std::unexpected(StartFailure{"load_failed",
                                          "environment variable " + m_options.api_key_env + " (server.api_key_env) is not set",
                                          ""});
    }
    client->set_bearer_token(key);
  }
  auto deadline = std::chrono::steady_clock::now() + spec.ready_timeout;
  for (;;) {
    if (cancel.load()) return std::unexpected(StartFailure{"cancelled", "interrupted", ""});
    auto r = client->get("/health");
    if (r && r->status == 200) break;
    if (std::chrono::steady_clock::now() > deadline) {
      return std::unexpected(StartFailure{"load_failed", "no 200 from " + m_options.url + "/health within the ready timeout",
                                          r ? "HTTP " + std::to_string(r->status) : r.error().message});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EffectiveKv eff;
  eff.declared = true;
  eff.type_k = spec.type_k;
  eff.type_v = spec.type_v;
  nlohmann::json info = {{"url", m_options.url}, {"kv_types", "declared by the user"}};
  if (auto props = client->get_json("/props")) info["build_info"] = props->value("build_info", "");
  return std::make_unique<ExternalInstance>(client, eff, info);
}

nlohmann::json ExternalBackend::describe() {
  // The URL may embed credentials in userinfo; keep only scheme://host:port.
  return {{"backend", "external"}, {"url", m_options.url}, {"api_key_env", m_options.api_key_env}};
}

}  // namespace kvsweep::server
