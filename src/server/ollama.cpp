#include "kvsweep/server/ollama.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "kvsweep/process/child.hpp"

extern char** environ;

namespace kvsweep::server {

namespace {

constexpr double kNsPerMs = 1e6;

// The variables kvsweep owns per cell; the config refuses them in server.env.
constexpr const char* kOwnedEnv[] = {"OLLAMA_HOST", "OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_NUM_PARALLEL",
                                     "OLLAMA_CONTEXT_LENGTH"};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::vector<TopLogprob> parse_top(const nlohmann::json& arr) {
  std::vector<TopLogprob> out;
  if (!arr.is_array()) return out;
  for (const auto& t : arr) out.push_back({-1, t.value("token", ""), t.value("logprob", 0.0)});
  return out;
}

std::vector<TokenLogprob> parse_logprobs(const nlohmann::json& arr) {
  std::vector<TokenLogprob> out;
  if (!arr.is_array()) return out;
  for (const auto& e : arr) {
    TokenLogprob tp;
    tp.id = -1;  // Ollama gives no token ids
    tp.token = e.value("token", "");
    tp.logprob = e.value("logprob", 0.0);
    if (e.contains("top_logprobs")) tp.top = parse_top(e["top_logprobs"]);
    out.push_back(std::move(tp));
  }
  return out;
}

double ns_to_ms(const nlohmann::json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_number()) return 0;
  return it->get<double>() / kNsPerMs;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> environment_names() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    names.emplace_back(kv.substr(0, kv.find('=')));
  }
  return names;
}

enum class Mode { launched, attached };

class OllamaInstance final : public Instance {
 public:
  // Launched: `child` runs `ollama serve`; attached: child is empty and nothing is ever stopped.
  OllamaInstance(process::Child child, Mode mode, std::shared_ptr<http::Client> client, OllamaModelOptions model,
                 CellSpec spec, std::size_t log_offset)
      : m_child(std::move(child)), m_attached(mode == Mode::attached), m_api(client, std::move(model)), m_client(std::move(client)),
        m_spec(std::move(spec)), m_log_offset(log_offset) {}
  ~OllamaInstance() override { stop(); }

  Api& api() override { return m_api; }
  bool alive() override { return m_attached || m_child.running(); }
  void stop() override {
    if (!m_attached && m_child.pid() > 0 && !m_stopped) {
      m_exit = m_child.stop(m_spec.stop_grace).describe();
      m_stopped = true;
    }
  }
  EffectiveKv effective() const override { return m_effective; }
  double ready_seconds() const override { return m_ready_s; }
  nlohmann::json info() const override { return m_info; }
  std::string log_tail(std::size_t lines) const override {
    if (m_attached) return "(attached Ollama: no log)";
    return process::tail_file(m_spec.log_path, lines);
  }
  std::string exit_description() override {
    if (m_attached) return {};
    if (auto s = m_child.poll()) return s->describe();
    return m_exit;
  }

  std::string log_since_start() const {
    if (m_attached) return {};
    std::string all = read_file(m_spec.log_path);
    return m_log_offset < all.size() ? all.substr(m_log_offset) : std::string{};
  }

  // Filled by start().
  EffectiveKv m_effective;
  double m_ready_s = 0;
  nlohmann::json m_info;

 private:
  process::Child m_child;
  bool m_attached;
  OllamaApi m_api;
  std::shared_ptr<http::Client> m_client;
  CellSpec m_spec;
  std::size_t m_log_offset;
  bool m_stopped = false;
  std::string m_exit;
};

}  // namespace

core::Expected<OllamaRequest> ollama_completion_request(const CompletionRequest& r, const OllamaModelOptions& model) {
  if (!r.tokens.empty() && r.messages.empty()) {
    return core::fail(core::ErrorKind::unsupported,
                      "a token-array prompt is not supported by this backend (Ollama takes text prompts only)");
  }
  if (r.n_probs > kOllamaMaxTopLogprobs) {
    return core::fail(core::ErrorKind::unsupported, "Ollama returns at most " + std::to_string(kOllamaMaxTopLogprobs) +
                                                        " log-probabilities per token; " + std::to_string(r.n_probs) +
                                                        " were asked for");
  }
  nlohmann::json options = {
      {"temperature", r.temperature}, {"seed", r.seed},   {"num_ctx", model.num_ctx}, {"num_predict", r.n_predict},
      {"top_k", r.top_k},             {"top_p", r.top_p}, {"min_p", r.min_p},
  };
  if (!r.stop.empty()) options["stop"] = r.stop;
  OllamaRequest out;
  nlohmann::json& body = out.body;
  body = {{"model", model.model}, {"stream", false}, {"think", model.think}, {"keep_alive", model.keep_alive}};
  if (!r.messages.empty()) {
    out.path = "/api/chat";
    nlohmann::json msgs = nlohmann::json::array();
    for (const auto& m : r.messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
    body["messages"] = msgs;
  } else {
    out.path = "/api/generate";
    body["prompt"] = r.prompt;
    // raw: the prompt is the whole input, as llama-server's /completion takes it.
    body["raw"] = true;
  }
  if (r.n_probs > 0) {
    body["logprobs"] = true;
    body["top_logprobs"] = r.n_probs;
  }
  // extra is written for llama-server; carry over what has an Ollama meaning.
  for (auto it = r.extra.begin(); it != r.extra.end(); ++it) {
    if (it.key() == "chat_template_kwargs") {
      if (it->is_object() && it->contains("enable_thinking") && (*it)["enable_thinking"].is_boolean())
        body["think"] = (*it)["enable_thinking"];
    } else if (it.key() == "options" && it->is_object()) {
      for (auto o = it->begin(); o != it->end(); ++o) options[o.key()] = o.value();
    } else {
      body[it.key()] = it.value();  // tools, format, system, think, …; unknown fields are ignored by Ollama
    }
  }
  // num_ctx stays the cell's: a different value would reload the model mid-cell.
  options["num_ctx"] = model.num_ctx;
  body["options"] = options;
  return out;
}

core::Expected<CompletionResponse> parse_ollama_completion(const nlohmann::json& body, bool chat) {
  try {
    CompletionResponse r;
    if (chat) {
      const auto& msg = body.at("message");
      if (msg.contains("content") && msg["content"].is_string()) r.content = msg["content"].get<std::string>();
      if (msg.contains("thinking") && msg["thinking"].is_string()) r.reasoning = msg["thinking"].get<std::string>();
      if (msg.contains("tool_calls")) r.tool_calls = msg["tool_calls"];
    } else {
      r.content = body.at("response").get<std::string>();
      if (body.contains("thinking") && body["thinking"].is_string()) r.reasoning = body["thinking"].get<std::string>();
    }
    // Ollama says "length" only for llama-server's stop_type "limit"; every other end is "stop".
    std::string reason = body.value("done_reason", "");
    r.stop_type = reason == "length" ? "limit" : (reason == "stop" ? "eos" : "none");
    // prompt_eval_count counts cached prompt tokens too (>= 0.30); the cached share is not reported.
    r.timings.prompt_n = body.value("prompt_eval_count", 0);
    r.timings.cache_n = 0;
    r.timings.prompt_ms = ns_to_ms(body, "prompt_eval_duration");
    r.timings.predicted_n = body.value("eval_count", 0);
    r.timings.predicted_ms = ns_to_ms(body, "eval_duration");
    if (body.contains("logprobs")) r.probs = parse_logprobs(body["logprobs"]);
    return r;
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("unexpected Ollama ") + (chat ? "/api/chat" : "/api/generate") +
                                                  " answer: " + e.what());
  }
}

nlohmann::json ollama_embed_body(const std::vector<std::string>& inputs, const OllamaModelOptions& model) {
  // truncate:false: an over-long input is an error, not an embedding of a silently cut text.
  return {{"model", model.model},
          {"input", inputs},
          {"truncate", false},
          {"keep_alive", model.keep_alive},
          {"options", {{"num_ctx", model.num_ctx}}}};
}

core::Expected<std::vector<std::vector<float>>> parse_ollama_embed(const nlohmann::json& body, std::size_t n_inputs) {
  try {
    auto out = body.at("embeddings").get<std::vector<std::vector<float>>>();
    if (out.size() != n_inputs) {
      return core::fail(core::ErrorKind::parse, "/api/embed: " + std::to_string(out.size()) + " embeddings for " +
                                                    std::to_string(n_inputs) + " inputs");
    }
    return out;
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("/api/embed: ") + e.what());
  }
}

core::Expected<CompletionResponse> OllamaApi::complete(const CompletionRequest& request) {
  auto req = ollama_completion_request(request, m_model);
  if (!req) return std::unexpected(req.error());
  auto body = m_client->post_for_json(req->path, req->body);
  if (!body) return std::unexpected(body.error());
  return parse_ollama_completion(*body, req->path == "/api/chat");
}

core::Expected<std::vector<std::int32_t>> OllamaApi::tokenize(const std::string&, bool) {
  return core::fail(core::ErrorKind::unsupported, "tokenize is not supported by this backend (Ollama has no endpoint for it)");
}

core::Expected<std::string> OllamaApi::detokenize(const std::vector<std::int32_t>&) {
  return core::fail(core::ErrorKind::unsupported,
                    "detokenize is not supported by this backend (Ollama has no endpoint for it)");
}

core::Expected<std::vector<std::vector<float>>> OllamaApi::embed(const std::vector<std::string>& inputs) {
  auto body = m_client->post_for_json("/api/embed", ollama_embed_body(inputs, m_model));
  if (!body) return std::unexpected(body.error());
  return parse_ollama_embed(*body, inputs.size());
}

OllamaEnv ollama_launch_env(const CellSpec& spec, int port, const std::vector<std::string>& inherited) {
  OllamaEnv env;
  env.set = {
      {"OLLAMA_HOST", "127.0.0.1:" + std::to_string(port)},
      {"OLLAMA_KV_CACHE_TYPE", spec.type_k},
      {"OLLAMA_FLASH_ATTENTION", "1"},
      {"OLLAMA_NUM_PARALLEL", "1"},
      {"OLLAMA_CONTEXT_LENGTH", std::to_string(spec.n_ctx)},
  };
  auto owned = [](const std::string& name) {
    for (const char* o : kOwnedEnv)
      if (name == o) return true;
    return false;
  };
  for (const auto& [k, v] : spec.env)
    if (!owned(k)) env.set.emplace_back(k, v);
  for (const auto& name : inherited) {
    if (!starts_with(name, "OLLAMA_") && !starts_with(name, "LLAMA_ARG_")) continue;
    bool kept = false;
    for (const auto& [k, v] : env.set) kept = kept || k == name;
    if (!kept) env.unset.push_back(name);
  }
  return env;
}

EffectiveKv ollama_effective_kv(const std::string& log, const CellSpec& spec) {
  EffectiveKv e = parse_effective_kv(log);
  if (e.found) return e;
  // Before 0.30 Ollama fell back to f16 with one of these warnings instead of failing.
  for (const char* fallback : {"unsupported OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION must be enabled",
                               "quantized kv cache requested but flash attention disabled"}) {
    if (log.find(fallback) != std::string::npos) {
      e.found = true;
      e.type_k = e.type_v = "f16";
      return e;
    }
  }
  e.declared = true;
  e.type_k = spec.type_k;
  e.type_v = spec.type_v;
  return e;
}

std::expected<std::unique_ptr<Instance>, StartFailure> OllamaBackend::start(const CellSpec& spec,
                                                                           const std::atomic<bool>& cancel) {
  const bool attached = !m_options.url.empty();
  if (spec.type_k != spec.type_v) {
    // The config rejects such grids; a direct caller gets the same reason.
    return std::unexpected(StartFailure{"unsupported",
                                        "Ollama has one KV cache type for K and V (OLLAMA_KV_CACHE_TYPE); K=" + spec.type_k +
                                            " V=" + spec.type_v + " cannot be run",
                                        ""});
  }
  OllamaModelOptions model{spec.model_path, spec.n_ctx, attached ? nlohmann::json("30m") : nlohmann::json(-1), false};
  auto t0 = std::chrono::steady_clock::now();
  auto deadline = t0 + spec.ready_timeout;

  process::Child child;
  std::string base_url = m_options.url;
  std::size_t log_offset = 0;
  nlohmann::json info = nlohmann::json::object();
  std::string token;
  if (attached) {
    while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
    info["url"] = base_url;
    info["kv_types"] = "declared by the user";
    if (!m_options.api_key_env.empty()) {
      const char* key = std::getenv(m_options.api_key_env.c_str());
      if (!key || !*key) {
        return std::unexpected(StartFailure{
            "load_failed", "environment variable " + m_options.api_key_env + " (server.api_key_env) is not set", ""});
      }
      token = key;
    }
  } else {
    int port = free_port();
    base_url = "http://127.0.0.1:" + std::to_string(port);
    OllamaEnv env = ollama_launch_env(spec, port, environment_names());
    {
      // Names only for the user's variables: their values may be secrets.
      std::ofstream log(spec.log_path, std::ios::app);
      log << "# kvsweep: launching: " << m_options.binary << " serve with";
      for (std::size_t i = 0; i < env.set.size(); ++i)
        log << " " << env.set[i].first << (i < std::size(kOwnedEnv) ? "=" + env.set[i].second : std::string{});
      if (!env.unset.empty()) {
        log << "; removed from the environment:";
        for (const auto& u : env.unset) log << " " << u;
      }
      log << "\n";
    }
    std::error_code ec;
    log_offset = std::filesystem::file_size(spec.log_path, ec);
    process::LaunchSpec launch;
    launch.argv = {m_options.binary, "serve"};
    launch.env = env.set;
    launch.unset_env = env.unset;
    launch.log_path = spec.log_path;
    auto spawned = process::Child::spawn(launch);
    if (!spawned) return std::unexpected(StartFailure{"load_failed", spawned.error().message, ""});
    child = std::move(*spawned);
    info["port"] = port;
    info["argv"] = launch.argv;
    nlohmann::json owned = nlohmann::json::object();
    for (std::size_t i = 0; i < std::size(kOwnedEnv); ++i) owned[env.set[i].first] = env.set[i].second;
    info["env"] = owned;
  }

  auto client = std::make_shared<http::Client>(base_url, http::Timeouts{std::chrono::milliseconds(2000), spec.request_timeout});
  http::Client probe(base_url, http::Timeouts{std::chrono::milliseconds(200), std::chrono::milliseconds(2000)});
  if (!token.empty()) {
    client->set_bearer_token(token);
    probe.set_bearer_token(token);
  }
  auto instance = std::make_unique<OllamaInstance>(std::move(child), attached ? Mode::attached : Mode::launched, client,
                                                   model, spec, log_offset);
  const std::string who = attached ? "Ollama at " + base_url : "ollama serve";
  auto died = [&](const std::string& when) {
    std::string log = instance->log_since_start();
    return std::unexpected(StartFailure{classify_load_failure(log), who + " " + instance->exit_description() + " " + when,
                                        instance->log_tail(25)});
  };

  // 1. Ready: GET /api/version answers 200.
  for (;;) {
    if (cancel.load()) {
      instance->stop();
      return std::unexpected(StartFailure{"cancelled", "interrupted while waiting for the server", ""});
    }
    if (!instance->alive()) return died("before it was ready");
    auto r = probe.get("/api/version");
    if (r && r->status == 200) {
      try {
        info["version"] = nlohmann::json::parse(r->body).value("version", "");
      } catch (const std::exception&) {
        info["version"] = "";
      }
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      instance->stop();
      std::string last = r ? "HTTP " + std::to_string(r->status) : r.error().message;
      return std::unexpected(StartFailure{"load_failed",
                                          who + ": GET /api/version not ready within the ready timeout (" +
                                              std::to_string(spec.ready_timeout.count() / 1000) + " s; last: " + last + ")",
                                          instance->log_tail(25)});
    }
    // 20 ms between polls: readiness is noticed within ~50 ms without busy-looping.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  // 2. The tag exists.
  auto show = client->post_for_json("/api/show", {{"model", model.model}});
  if (!show) {
    if (!instance->alive()) return died("while answering /api/show");
    std::string msg = "model '" + model.model + "': " + show.error().message;
    if (show.error().http_status == 404) {
      msg += attached ? "; pull it on that server (ollama pull " + model.model + ")"
                      : "; pull it (ollama pull " + model.model +
                            "), or set server.env.OLLAMA_MODELS to the model store that holds it";
    }
    instance->stop();
    return std::unexpected(StartFailure{"load_failed", msg, instance->log_tail(25)});
  }
  info["model"] = model.model;
  info["details"] = show->value("details", nlohmann::json::object());
  info["capabilities"] = show->value("capabilities", nlohmann::json::array());
  if (show->contains("modified_at")) info["modified_at"] = (*show)["modified_at"];

  // 3. Warm: models load lazily; load it now, with the num_ctx every request will send, so no
  //    timed request pays for the load and none triggers a reload.
  auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  client->set_read_timeout(std::max(remaining, std::chrono::milliseconds(1000)));
  // An embedding-only model refuses /api/generate ("does not support generate"): load it with a
  // one-line /api/embed instead (an empty input may answer without loading).
  bool completion = true;
  if (const auto caps = info["capabilities"]; caps.is_array() && !caps.empty()) {
    completion = std::find(caps.begin(), caps.end(), "completion") != caps.end() ||
                 std::find(caps.begin(), caps.end(), "embedding") == caps.end();
  }
  auto warm = completion ? client->post_for_json("/api/generate", {{"model", model.model},
                                                                   {"stream", false},
                                                                   {"keep_alive", model.keep_alive},
                                                                   {"options", {{"num_ctx", model.num_ctx}}}})
                         : client->post_for_json("/api/embed", ollama_embed_body({"kvsweep warm-up"}, model));
  client->set_read_timeout(spec.request_timeout);
  if (!warm) {
    if (!instance->alive()) return died("while loading " + model.model);
    std::string log = instance->log_since_start();
    instance->stop();
    return std::unexpected(StartFailure{classify_load_failure(log),
                                        "loading " + model.model + " failed: " + warm.error().message,
                                        instance->log_tail(25)});
  }
  instance->m_ready_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // 4. What the server allocated.
  if (attached) {
    instance->m_effective.declared = true;
    instance->m_effective.type_k = spec.type_k;
    instance->m_effective.type_v = spec.type_v;
  } else {
    instance->m_effective = ollama_effective_kv(instance->log_since_start(), spec);
    info["kv_types"] = instance->m_effective.declared ? "declared (no KV cache line in the log)" : "from the server log";
  }
  instance->m_info = info;
  return instance;
}

nlohmann::json OllamaBackend::describe() {
  if (!m_options.url.empty()) {
    nlohmann::json d = {{"backend", "external"}, {"api", "ollama"}, {"url", m_options.url},
                        {"api_key_env", m_options.api_key_env}};
    http::Client c(m_options.url, http::Timeouts{std::chrono::milliseconds(1000), std::chrono::milliseconds(2000)});
    if (const char* key = m_options.api_key_env.empty() ? nullptr : std::getenv(m_options.api_key_env.c_str()); key && *key)
      c.set_bearer_token(key);
    if (auto v = c.get_json("/api/version")) d["version"] = v->value("version", "");
    return d;
  }
  if (!m_description.is_null()) return m_description;
  // `ollama --version` also asks the server at OLLAMA_HOST for its version; point it at a port
  // nobody listens on so the answer is the binary's own ("client version is X" when no server answers).
  auto tmp = std::filesystem::temp_directory_path() / ("kvsweep-ollama-version-" + std::to_string(::getpid()) + ".txt");
  process::LaunchSpec launch{{m_options.binary, "--version"},
                             {{"OLLAMA_HOST", "127.0.0.1:" + std::to_string(free_port())}},
                             {},
                             tmp};
  std::string text;
  if (auto child = process::Child::spawn(launch)) {
    for (int i = 0; i < 500 && child->running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    child->stop(std::chrono::milliseconds(100));
    text = read_file(tmp);
  }
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  nlohmann::json d = {{"backend", "ollama"}, {"binary", process::which(m_options.binary)}};
  static const std::regex version_re(R"(version is (\S+))");
  std::smatch m;
  if (std::regex_search(text, m, version_re)) d["version"] = m[1].str();
  m_description = d;
  return d;
}

}  // namespace kvsweep::server
