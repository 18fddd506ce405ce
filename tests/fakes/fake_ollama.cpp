// fake-ollama: a fake, kept only for what the real Ollama will not do on demand.
//
// The Ollama backend is proven against the real Ollama (v0.30.1, built by scripts/ollama;
// tests/integration/ollama_real_test.cpp). This fake stays for the faults and contracts a real
// `ollama serve` cannot be made to show: a server that exits at start, starts slowly or never
// gets ready, an Ollama older than 0.30 that ignores the KV type it is given (we build 0.30.1
// only), an attached server whose KV type is declared, and the per-cell environment checked from
// inside the process (it refuses to start on a violation). It keeps to the contract kvsweep's
// Ollama backend is written against (../shared/reference/servers.md part B, Ollama 0.33):
//
// Environment (checked at start; a violation prints why and exits 1):
//   OLLAMA_HOST=127.0.0.1:<port>   (loopback only, explicit port)
//   OLLAMA_KV_CACHE_TYPE           set, one of f32 f16 bf16 q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1
//   OLLAMA_FLASH_ATTENTION=1, OLLAMA_NUM_PARALLEL=1, OLLAMA_CONTEXT_LENGTH=<positive integer>
//   none of OLLAMA_KEEP_ALIVE OLLAMA_LOAD_TIMEOUT OLLAMA_MAX_LOADED_MODELS OLLAMA_SCHED_SPREAD
//   OLLAMA_GPU_OVERHEAD OLLAMA_LLM_LIBRARY OLLAMA_NEW_ENGINE OLLAMA_MULTIUSER_CACHE, nor any
//   LLAMA_ARG_* (they would change the cell; kvsweep must not let them leak from its own environment)
//
// API: GET / , GET /api/version, GET /api/tags, POST /api/show, /api/generate, /api/chat, /api/embed.
// Tags: "tiny:latest" (completion, thinking) and "tiny-embed:latest" (embedding); others are
// 404 {"error":"model '<tag>' not found"}. Requests must say "stream": false (streaming is not
// faked) and carry options.num_ctx (400 otherwise); top_logprobs outside 0–20 is 400
// `top_logprobs must be between 0 and 20`, as in Ollama. Text is deterministic in the prompt,
// the seed (when temperature > 0) and the KV type: the 4-bit types (q4_0, q4_1, iq4_nl) change it,
// the others do not. Durations are exact: 1 ms per prompt token, 2.5 ms per generated token.
// A model loads on its first request (or when num_ctx changes) and then logs llama.cpp's
// `llama_kv_cache: size = … K (T): … MiB, V (T): … MiB` line to stderr, as Ollama >= 0.30 does.
//
// Test knobs (environment): FAKE_OLLAMA_EXIT_AT_START=<code> exits at once with that code;
// FAKE_OLLAMA_STARTUP_DELAY_MS delays listening; FAKE_OLLAMA_LOAD_DELAY_MS delays each model load;
// FAKE_OLLAMA_LEGACY=1 behaves like Ollama < 0.30 (no KV line; types other than f16/q8_0/q4_0
// are logged as unsupported and run as f16).

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace {

using nlohmann::json;

const char* kVersion = "0.33.0-fake";
constexpr int kMaxTopLogprobs = 20;
constexpr std::int64_t kPromptNsPerToken = 1'000'000;
constexpr std::int64_t kEvalNsPerToken = 2'500'000;

struct Model {
  std::string tag;
  std::vector<std::string> capabilities;
};
const std::vector<Model> kModels = {{"tiny:latest", {"completion", "thinking"}}, {"tiny-embed:latest", {"embedding"}}};

const std::vector<std::string> kWords = {"the", "water", "boils", "pasta", "sauce", "drain", "serve", "minutes",
                                         "agent", "step", "then", "add", "next", "message", "pot", "salt",
                                         "stir", "heat", "cook", "plate", "and", "with", "for", "eight"};

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// splitmix64 (Steele, Lea, Flood 2014): a small deterministic stream.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

void log_line(const std::string& s) {
  std::fprintf(stderr, "%s\n", s.c_str());
  std::fflush(stderr);
}

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

[[noreturn]] void contract_violation(const std::string& why) {
  log_line("fake-ollama: environment contract violated: " + why);
  std::exit(1);
}

std::string env_or(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v ? std::string(v) : fallback;
}

double bytes_per_element(const std::string& type) {
  if (type == "f32") return 4;
  if (type == "f16" || type == "bf16") return 2;
  if (type == "q8_0") return 34.0 / 32;
  if (type == "q5_1") return 24.0 / 32;
  if (type == "q5_0") return 22.0 / 32;
  if (type == "q4_1") return 20.0 / 32;
  return 18.0 / 32;  // q4_0, iq4_nl
}

class FakeOllama {
 public:
  FakeOllama(std::string kv_type, bool legacy) : m_legacy(legacy) {
    m_kv_type = kv_type;
    if (legacy && kv_type != "f16" && kv_type != "q8_0" && kv_type != "q4_0") {
      log_line("time=" + now_iso() + " level=WARN source=server.go msg=\"unsupported OLLAMA_KV_CACHE_TYPE\" type=" + kv_type);
      m_kv_type = "f16";
    }
  }

  void install(httplib::Server& svr) {
    svr.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content("Ollama is running", "text/plain"); });
    svr.Get("/api/version", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(json{{"version", kVersion}}.dump(), "application/json");
    });
    svr.Get("/api/tags", [](const httplib::Request&, httplib::Response& res) {
      json models = json::array();
      for (const auto& m : kModels) models.push_back({{"name", m.tag}, {"model", m.tag}, {"capabilities", m.capabilities}});
      res.set_content(json{{"models", models}}.dump(), "application/json");
    });
    svr.Post("/api/show", [this](const httplib::Request& req, httplib::Response& res) { handle(req, res, &FakeOllama::show); });
    svr.Post("/api/generate",
             [this](const httplib::Request& req, httplib::Response& res) { handle(req, res, &FakeOllama::generate); });
    svr.Post("/api/chat", [this](const httplib::Request& req, httplib::Response& res) { handle(req, res, &FakeOllama::chat); });
    svr.Post("/api/embed", [this](const httplib::Request& req, httplib::Response& res) { handle(req, res, &FakeOllama::embed); });
    svr.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      log_line("[GIN] " + now_iso() + " | " + std::to_string(res.status) + " | " + req.method + " \"" + req.path + "\"");
    });
  }

 private:
  struct HttpError {
    int status;
    std::string message;
  };
  using Handler = json (FakeOllama::*)(const json&);

  void handle(const httplib::Request& req, httplib::Response& res, Handler h) {
    // OLLAMA_NUM_PARALLEL=1: one request at a time.
    std::lock_guard lock(m_mutex);
    try {
      json body;
      try {
        body = json::parse(req.body);
      } catch (const std::exception&) {
        throw HttpError{400, "invalid JSON body"};
      }
      if (!body.is_object()) throw HttpError{400, "request body must be a JSON object"};
      res.set_content((this->*h)(body).dump(), "application/json");
    } catch (const HttpError& e) {
      res.status = e.status;
      res.set_content(json{{"error", e.message}}.dump(), "application/json");
    }
  }

  static std::string normalise(std::string tag) {
    if (tag.find(':') == std::string::npos) tag += ":latest";
    return tag;
  }

  static const Model& find_model(const json& body) {
    std::string name = body.value("model", body.value("name", ""));
    if (name.empty()) throw HttpError{400, "model is required"};
    std::string tag = normalise(name);
    for (const auto& m : kModels)
      if (m.tag == tag) return m;
    throw HttpError{404, "model '" + name + "' not found"};
  }

  static bool has(const Model& m, const std::string& cap) {
    for (const auto& c : m.capabilities)
      if (c == cap) return true;
    return false;
  }

  // Checks the option types Ollama would reject and returns num_ctx, which kvsweep must always send.
  static int check_options(const json& body) {
    json options = body.value("options", json::object());
    if (!options.is_object()) throw HttpError{400, "options must be an object"};
    for (const char* key : {"temperature", "top_p", "min_p"})
      if (options.contains(key) && !options[key].is_number()) throw HttpError{400, std::string("option \"") + key + "\" must be of type number"};
    for (const char* key : {"seed", "num_predict", "top_k", "num_ctx"})
      if (options.contains(key) && !options[key].is_number_integer())
        throw HttpError{400, std::string("option \"") + key + "\" must be of type integer"};
    if (!options.contains("num_ctx")) throw HttpError{400, "fake-ollama: options.num_ctx is required (kvsweep always sends it)"};
    int num_ctx = options["num_ctx"].get<int>();
    if (num_ctx <= 0) throw HttpError{400, "options.num_ctx must be positive"};
    return num_ctx;
  }

  static void check_common(const json& body) {
    if (!body.contains("stream") || body["stream"] != false)
      throw HttpError{400, "fake-ollama: streaming is not faked; send \"stream\": false"};
    if (body.contains("top_logprobs")) {
      const auto& t = body["top_logprobs"];
      if (!t.is_number_integer() || t.get<int>() < 0 || t.get<int>() > kMaxTopLogprobs)
        throw HttpError{400, "top_logprobs must be between 0 and 20"};
    }
  }

  // Loads (or reloads, when num_ctx changed) the model, logging what llama-server would.
  std::int64_t ensure_loaded(const Model& m, int num_ctx) {
    if (m_loaded == m.tag && m_loaded_ctx == num_ctx) return 0;
    auto t0 = std::chrono::steady_clock::now();
    if (int delay = std::atoi(env_or("FAKE_OLLAMA_LOAD_DELAY_MS", "0").c_str()); delay > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    log_line("time=" + now_iso() + " level=INFO source=server.go msg=\"loading model\" model=" + m.tag +
             " num_ctx=" + std::to_string(num_ctx));
    if (!m_legacy) {
      // Two layers, 128 KV values per token and layer: sizes scale with the type as in llama.cpp.
      const int layers = 2, n_embd_kv = 128;
      double k_mib = static_cast<double>(num_ctx) * layers * n_embd_kv * bytes_per_element(m_kv_type) / (1024.0 * 1024.0);
      char line[256];
      std::snprintf(line, sizeof line,
                    "llama_kv_cache: size = %7.2f MiB (%6d cells, %3d layers,  1/1 seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB",
                    2 * k_mib, num_ctx, layers, m_kv_type.c_str(), k_mib, m_kv_type.c_str(), k_mib);
      log_line(line);
      log_line("llama_context: flash_attn    = enabled");
    }
    m_loaded = m.tag;
    m_loaded_ctx = num_ctx;
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  }

  json show(const json& body) {
    const Model& m = find_model(body);
    return {{"modelfile", "# fake\nFROM " + m.tag},
            {"parameters", ""},
            {"template", "{{ .Prompt }}"},
            {"details", {{"format", "gguf"}, {"family", "llama"}, {"parameter_size", "1M"}, {"quantization_level", "F16"}}},
            {"model_info", {{"general.architecture", "llama"}, {"llama.context_length", 131072}}},
            {"capabilities", m.capabilities},
            {"modified_at", "2026-08-21T10:00:00Z"}};
  }

  // The shared part of /api/generate and /api/chat: a deterministic answer to `prompt`.
  json answer(const json& body, const Model& m, const std::string& prompt, bool raw, std::int64_t load_ns) {
    json options = body.value("options", json::object());
    double temperature = options.value("temperature", 0.8);
    std::uint64_t seed = options.value("seed", -1LL) < 0 ? 0 : options.value("seed", 0ULL);
    int num_predict = options.value("num_predict", -1);
    bool low_bits = m_kv_type == "q4_0" || m_kv_type == "q4_1" || m_kv_type == "iq4_nl";
    std::uint64_t h = fnv1a(prompt);
    if (temperature > 0) h = fnv1a(std::to_string(seed), h);
    if (low_bits) h = fnv1a("kv:" + m_kv_type, h);
    Rng rng{h};
    int natural = 6 + static_cast<int>(rng.next() % 20);
    int n = num_predict >= 0 && num_predict < natural ? num_predict : natural;
    bool want_logprobs = body.value("logprobs", false);
    int top_n = body.value("top_logprobs", 0);
    std::string text;
    json logprobs = json::array();
    json context = json::array();
    for (int i = 0; i < n; ++i) {
      std::size_t w = rng.next() % kWords.size();
      std::string token = " " + kWords[w];
      text += token;
      context.push_back(static_cast<int>(1000 + w));
      double lp = -static_cast<double>(rng.next() % 1000) / 500.0;
      if (want_logprobs) {
        json entry = {{"token", token}, {"logprob", lp}, {"bytes", std::vector<int>(token.begin(), token.end())}};
        if (top_n > 0) {
          json top = json::array();
          top.push_back({{"token", token}, {"logprob", lp}});
          for (int k = 1; k < top_n; ++k)
            top.push_back({{"token", " " + kWords[(w + static_cast<std::size_t>(k)) % kWords.size()]}, {"logprob", lp - k}});
          entry["top_logprobs"] = top;
        }
        logprobs.push_back(entry);
      }
    }
    int prompt_tokens = 1;  // BOS
    for (std::size_t i = 0; i < prompt.size(); ++i)
      if (prompt[i] == ' ' || prompt[i] == '\n' || i == 0) ++prompt_tokens;
    json out = {{"model", m.tag},
                {"created_at", now_iso()},
                {"done", true},
                {"done_reason", n < natural ? "length" : "stop"},
                {"total_duration", load_ns + prompt_tokens * kPromptNsPerToken + n * kEvalNsPerToken},
                {"load_duration", load_ns},
                {"prompt_eval_count", prompt_tokens},
                {"prompt_eval_duration", prompt_tokens * kPromptNsPerToken},
                {"eval_count", n},
                {"eval_duration", n * kEvalNsPerToken},
                {"response", text}};
    if (want_logprobs) out["logprobs"] = logprobs;
    if (!raw) out["context"] = context;
    // A thinking model thinks unless told not to (`think` omitted means true).
    bool think = !body.contains("think") || body["think"] != false;
    if (think && has(m, "thinking") && !raw) out["thinking"] = "fake reasoning about" + text.substr(0, 16);
    return out;
  }

  json generate(const json& body) {
    const Model& m = find_model(body);
    check_common(body);
    int num_ctx = check_options(body);
    if (!has(m, "completion")) throw HttpError{400, "\"" + m.tag + "\" does not support generate"};
    bool raw = body.value("raw", false);
    if (raw && (body.contains("template") || body.contains("system") || body.contains("context")))
      throw HttpError{400, "raw mode does not support template, system, or context"};
    if (body.contains("think") && body["think"] == true && !has(m, "thinking"))
      throw HttpError{400, "\"" + m.tag + "\" does not support thinking"};
    std::int64_t load_ns = ensure_loaded(m, num_ctx);
    std::string prompt = body.value("prompt", "");
    if (prompt.empty()) {
      // Load (or unload) only.
      bool unload = body.contains("keep_alive") && body["keep_alive"] == 0;
      if (unload) m_loaded.clear();
      return {{"model", m.tag}, {"created_at", now_iso()}, {"response", ""}, {"done", true},
              {"done_reason", unload ? "unload" : "load"}};
    }
    return answer(body, m, prompt, raw, load_ns);
  }

  json chat(const json& body) {
    const Model& m = find_model(body);
    check_common(body);
    int num_ctx = check_options(body);
    if (!has(m, "completion")) throw HttpError{400, "\"" + m.tag + "\" does not support chat"};
    if (!body.contains("messages") || !body["messages"].is_array()) throw HttpError{400, "messages must be an array"};
    std::string prompt;
    for (const auto& msg : body["messages"]) {
      if (!msg.is_object() || !msg.contains("role") || !msg.contains("content"))
        throw HttpError{400, "each message needs role and content"};
      prompt += msg["role"].get<std::string>() + ": " + msg["content"].get<std::string>() + "\n";
    }
    std::int64_t load_ns = ensure_loaded(m, num_ctx);
    if (body["messages"].empty())
      return {{"model", m.tag}, {"created_at", now_iso()}, {"message", {{"role", "assistant"}, {"content", ""}}},
              {"done", true}, {"done_reason", "load"}};
    json out = answer(body, m, prompt, false, load_ns);
    json message = {{"role", "assistant"}, {"content", out["response"]}};
    if (out.contains("thinking")) message["thinking"] = out["thinking"];
    out.erase("response");
    out.erase("context");
    out.erase("thinking");
    out["message"] = message;
    return out;
  }

  json embed(const json& body) {
    const Model& m = find_model(body);
    int num_ctx = check_options(body);
    // >= 0.30 passes llama-server's 501 through for models without an embedding head.
    if (!has(m, "embedding")) throw HttpError{501, "this model does not support embeddings"};
    std::vector<std::string> inputs;
    const json& input = body.value("input", json());
    if (input.is_string()) inputs.push_back(input.get<std::string>());
    else if (input.is_array())
      for (const auto& s : input) inputs.push_back(s.get<std::string>());
    else throw HttpError{400, "input must be a string or an array of strings"};
    bool truncate = body.value("truncate", true);
    std::int64_t load_ns = ensure_loaded(m, num_ctx);
    json embeddings = json::array();
    int tokens = 0;
    for (const auto& text : inputs) {
      int words = 1 + static_cast<int>(std::count(text.begin(), text.end(), ' '));
      if (!truncate && words > num_ctx) throw HttpError{400, "the input length exceeds the context length"};
      tokens += words;
      Rng rng{fnv1a(text)};
      std::vector<double> v(16);
      double norm = 0;
      for (auto& x : v) {
        x = static_cast<double>(rng.next() % 2001) / 1000.0 - 1.0;
        norm += x * x;
      }
      norm = std::sqrt(norm);
      for (auto& x : v) x /= norm;  // Ollama always L2-normalises
      embeddings.push_back(v);
    }
    return {{"model", m.tag}, {"embeddings", embeddings}, {"total_duration", load_ns + tokens * kPromptNsPerToken},
            {"load_duration", load_ns}, {"prompt_eval_count", tokens}};
  }

  std::mutex m_mutex;
  std::string m_kv_type;
  bool m_legacy;
  std::string m_loaded;
  int m_loaded_ctx = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "-v") == 0)) {
    std::printf("ollama version is %s\n", kVersion);
    return 0;
  }
  if (argc != 2 || std::strcmp(argv[1], "serve") != 0) {
    std::fprintf(stderr, "usage: %s serve   (a fake ollama for kvsweep's tests)\n", argv[0]);
    return 2;
  }
  if (const char* code = std::getenv("FAKE_OLLAMA_EXIT_AT_START")) {
    log_line("Error: fake-ollama told to fail at start (FAKE_OLLAMA_EXIT_AT_START)");
    return std::atoi(code);
  }

  // The environment contract.
  static const std::regex host_re(R"(^127\.0\.0\.1:([0-9]{1,5})$)");
  std::smatch m;
  std::string host = env_or("OLLAMA_HOST");
  if (!std::regex_match(host, m, host_re)) contract_violation("OLLAMA_HOST must be 127.0.0.1:<port>, got '" + host + "'");
  int port = std::stoi(m[1].str());
  if (port <= 0 || port > 65535) contract_violation("OLLAMA_HOST port out of range: " + host);
  static const std::set<std::string> types = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"};
  std::string kv = env_or("OLLAMA_KV_CACHE_TYPE");
  if (!types.count(kv)) contract_violation("OLLAMA_KV_CACHE_TYPE must be a llama.cpp cache type, got '" + kv + "'");
  if (env_or("OLLAMA_FLASH_ATTENTION") != "1")
    contract_violation("OLLAMA_FLASH_ATTENTION must be 1, got '" + env_or("OLLAMA_FLASH_ATTENTION") + "'");
  if (env_or("OLLAMA_NUM_PARALLEL") != "1")
    contract_violation("OLLAMA_NUM_PARALLEL must be 1, got '" + env_or("OLLAMA_NUM_PARALLEL") + "'");
  std::string ctx = env_or("OLLAMA_CONTEXT_LENGTH");
  if (ctx.empty() || ctx.find_first_not_of("0123456789") != std::string::npos || std::atoi(ctx.c_str()) <= 0)
    contract_violation("OLLAMA_CONTEXT_LENGTH must be a positive integer, got '" + ctx + "'");
  for (char** e = environ; *e; ++e) {
    std::string name(*e, std::strchr(*e, '=') ? std::strchr(*e, '=') : *e + std::strlen(*e));
    static const std::set<std::string> leaks = {"OLLAMA_KEEP_ALIVE",   "OLLAMA_LOAD_TIMEOUT", "OLLAMA_MAX_LOADED_MODELS",
                                                "OLLAMA_SCHED_SPREAD", "OLLAMA_GPU_OVERHEAD", "OLLAMA_LLM_LIBRARY",
                                                "OLLAMA_NEW_ENGINE",   "OLLAMA_MULTIUSER_CACHE"};
    if (leaks.count(name) || name.rfind("LLAMA_ARG_", 0) == 0)
      contract_violation(name + " is set; it would change the cell");
  }

  if (int delay = std::atoi(env_or("FAKE_OLLAMA_STARTUP_DELAY_MS", "0").c_str()); delay > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));

  bool legacy = env_or("FAKE_OLLAMA_LEGACY") == "1";
  log_line("time=" + now_iso() + " level=INFO source=routes.go msg=\"server config\" env=\"map[OLLAMA_HOST:" + host +
           " OLLAMA_KV_CACHE_TYPE:" + kv + " OLLAMA_FLASH_ATTENTION:true OLLAMA_NUM_PARALLEL:1 OLLAMA_CONTEXT_LENGTH:" + ctx +
           "]\"");
  FakeOllama fake(kv, legacy);
  httplib::Server svr;
  fake.install(svr);
  // As Ollama: listen, then say so (kvsweep confirms its child by this line).
  if (!svr.bind_to_port("127.0.0.1", port)) {
    log_line("Error: listen tcp " + host + ": bind: address already in use");
    return 1;
  }
  log_line("time=" + now_iso() + " level=INFO source=routes.go msg=\"Listening on " + host + " (version " + kVersion + ")\"");
  return svr.listen_after_bind() ? 0 : 1;
}
