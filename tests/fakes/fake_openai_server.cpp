// fake-openai-server: a FAKE vLLM and a FAKE SGLang. They are fakes because neither can run here: both
// need a CUDA (or ROCm) GPU and PyTorch, which these machines do not have. What kvsweep depends on of
// them is kept to the shapes their sources and docs give (shared/reference/other-servers.md): the
// launch command line of each preset, the readiness check, the confirmation endpoint, the OpenAI
// answers (legacy logprobs, no timings) and the error objects. The real llama-server covers the OpenAI
// path itself (tests/integration/openai_test.cpp); these cover what is specific to vLLM and SGLang.
//
// Launched as the presets launch them (other flags are accepted and ignored):
//   vLLM:    fake-openai-server serve MODEL --host H --port P --kv-cache-dtype T …
//   SGLang:  fake-openai-server -m sglang.launch_server --model-path MODEL --host H --port P --kv-cache-dtype T …
// A --host other than 127.0.0.1 or a dtype the server does not document exits 2 with argparse's message.
// It logs Uvicorn's `Uvicorn running on http://H:P (Press CTRL+C to quit)` once it holds the port, and serves
//   GET  /health                 200 (empty body)
//   GET  /metrics                vLLM: Prometheus text with vllm:cache_config_info{…,cache_dtype="T",…} 1.0
//   GET  /server_info            SGLang: the server args as JSON, "kv_cache_dtype": "T" among them
//   GET  /v1/models              {"object":"list","data":[{"id":MODEL,…}]}
//   POST /v1/completions, /v1/chat/completions: deterministic text in the prompt and the dtype (the fp8 and
//        fp4 types change it, auto/bf16 do not); `usage`, no `timings`; `logprobs: N` in the legacy shape
//        (vLLM with return_tokens_as_token_ids: tokens "token_id:N"); chat logprobs as content[].
//        vLLM's `prompt_logprobs: N` (a token-id prompt): choices[0].prompt_logprobs, [null, {"<id>":
//        {logprob, rank, decoded_token}, …}, …], each position's top N and its own token, from a fake
//        distribution of the prefix (the fp8 and fp4 types move its first two probabilities).
//   POST /generate               SGLang only: {input_ids | text, return_logprob, logprob_start_len: 0,
//        top_logprobs_num: N} → meta_info.input_token_logprobs / input_top_logprobs ([logprob, id, null]),
//        prompt_tokens, cached_tokens 0; a text prompt is tokenized one id per byte.
//   POST /tokenize, /detokenize  vLLM only.
// Errors, as both servers write them: {"object":"error","message":…,"type":…,"param":null,"code":N}:
//   a "model" other than MODEL → 404 NotFoundError "The model `X` does not exist."; logprobs above 20 →
//   400 BadRequestError; a body that is not JSON → 400.
//
// Test knobs (environment): FAKE_OPENAI_ALLOCATE=<T> reports T as the allocated dtype whatever was asked
// (a server that ignored the flag); FAKE_OPENAI_CONFIRM=none leaves the dtype out of /metrics and
// /server_info (a version that does not publish it).

#include <httplib.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

const std::vector<std::string> kWords = {"the", "cache", "holds", "keys", "and", "values", "for", "every", "token",
                                         "so", "attention", "reads", "them", "back", "at", "each", "step", "then"};

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string arg_after(const std::vector<std::string>& args, const std::string& flag, const std::string& fallback) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1];
  return fallback;
}

struct Fake {
  bool vllm = true;
  std::string model;
  std::string dtype;  // what /metrics or /server_info report

  std::string error(int code, const std::string& type, const std::string& message) const {
    return json{{"object", "error"}, {"message", message}, {"type", type}, {"param", nullptr}, {"code", code}}.dump();
  }

  /// n words, a function of the prompt and of whether the dtype is a low-precision one.
  std::vector<std::string> words(const std::string& prompt, int n) const {
    const bool low = dtype.rfind("fp8", 0) == 0 || dtype.rfind("fp4", 0) == 0 || dtype.rfind("nvfp4", 0) == 0;
    std::uint64_t h = fnv1a(prompt);
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) {
      h = fnv1a(std::to_string(i), h);
      // The low-precision types drift from the fourth word on.
      const std::uint64_t pick = low && i >= 3 ? h >> 7 : h;
      out.push_back(kWords[pick % kWords.size()]);
    }
    return out;
  }

  bool low() const { return dtype.rfind("fp8", 0) == 0 || dtype.rfind("fp4", 0) == 0 || dtype.rfind("nvfp4", 0) == 0; }

  /// The fake next-token distribution after a prefix with rolling hash `h`: ids base, base+1, … with
  /// probabilities halving from 0.5; a low-precision dtype moves 0.04 from the first to the second.
  std::vector<std::pair<int, double>> distribution(std::uint64_t h, int n) const {
    std::vector<std::pair<int, double>> out;
    const int base = static_cast<int>(h % 900);
    double p = 0.5;
    for (int j = 0; j < n; ++j, p /= 2) {
      double v = p;
      if (low() && j == 0) v -= 0.04;
      if (low() && j == 1) v += 0.04;
      out.emplace_back(base + j, v);
    }
    return out;
  }

  /// Per prompt position p >= 1: the top n after tokens [0, p) and the log-probability of token p itself.
  template <class Entry>
  json prompt_positions(const std::vector<int>& ids, int n, Entry entry) const {
    json out = json::array({nullptr});
    std::uint64_t h = 1469598103934665603ULL;
    for (std::size_t p = 1; p < ids.size(); ++p) {
      h = fnv1a(std::to_string(ids[p - 1]) + ",", h);
      const auto dist = distribution(h, n);
      double own = -12.0;
      for (const auto& [id, prob] : dist)
        if (id == ids[p]) own = std::log(prob);
      out.push_back(entry(dist, ids[p], own));
    }
    return out;
  }

  void generate(const httplib::Request& req, httplib::Response& res) const {
    const json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) {
      res.status = 400;
      res.set_content(error(400, "BadRequestError", "the request body is not JSON"), "application/json");
      return;
    }
    std::vector<int> ids;
    if (body.contains("input_ids")) ids = body["input_ids"].get<std::vector<int>>();
    else for (unsigned char c : body.value("text", std::string())) ids.push_back(c);
    json meta = {{"prompt_tokens", ids.size()}, {"completion_tokens", 1}, {"cached_tokens", 0}};
    if (body.value("return_logprob", false)) {
      const int n = body.value("top_logprobs_num", 0);
      json own = json::array({json::array({nullptr, ids.empty() ? 0 : ids[0], nullptr})});
      const json tops = prompt_positions(ids, n, [&](const auto& dist, int id, double lp) {
        own.push_back(json::array({lp, id, nullptr}));
        json top = json::array();
        for (const auto& [tid, prob] : dist) top.push_back(json::array({std::log(prob), tid, nullptr}));
        return top;
      });
      meta["input_token_logprobs"] = own;
      meta["input_top_logprobs"] = tops;
    }
    res.set_content(json{{"text", " the"}, {"meta_info", meta}}.dump(), "application/json");
  }

  json legacy_logprobs(const std::vector<std::string>& ws, int n, bool ids) const {
    json tokens = json::array(), values = json::array(), tops = json::array();
    for (std::size_t i = 0; i < ws.size(); ++i) {
      const std::size_t id = fnv1a(ws[i]) % 1000;
      tokens.push_back(ids ? "token_id:" + std::to_string(id) : " " + ws[i]);
      values.push_back(-0.1);
      json top = json::object();
      for (int j = 0; j < n; ++j)
        top[ids ? "token_id:" + std::to_string((id + static_cast<std::size_t>(j)) % 1000) : " " + kWords[(i + j) % kWords.size()]] =
            -0.1 - j;
      tops.push_back(top);
    }
    return {{"tokens", tokens}, {"token_logprobs", values}, {"top_logprobs", tops}, {"text_offset", json::array()}};
  }

  void answer(const httplib::Request& req, httplib::Response& res, bool chat) const {
    const json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) {
      res.status = 400;
      res.set_content(error(400, "BadRequestError", "the request body is not JSON"), "application/json");
      return;
    }
    if (body.value("model", "") != model) {
      res.status = 404;
      res.set_content(error(404, "NotFoundError", "The model `" + body.value("model", "") + "` does not exist."),
                      "application/json");
      return;
    }
    const int n_logprobs = chat ? (body.value("logprobs", false) ? body.value("top_logprobs", 0) : 0)
                                : body.value("logprobs", 0);
    if (n_logprobs > 20) {
      res.status = 400;
      res.set_content(error(400, "BadRequestError",
                            "Requested sample logprobs of " + std::to_string(n_logprobs) + ", which is greater than max allowed: 20"),
                      "application/json");
      return;
    }
    if (!chat && vllm && body.contains("prompt_logprobs") && !body["prompt_logprobs"].is_null()) {
      const int n = body["prompt_logprobs"].get<int>();
      if (n > 20) {
        res.status = 400;
        res.set_content(error(400, "BadRequestError", "Requested prompt logprobs of " + std::to_string(n) +
                                                          ", which is greater than max allowed: 20"),
                        "application/json");
        return;
      }
      const auto ids = body.value("prompt", json::array()).get<std::vector<int>>();
      const json list = prompt_positions(ids, n, [](const auto& dist, int id, double lp) {
        json entry = json::object();
        for (std::size_t r = 0; r < dist.size(); ++r)
          entry[std::to_string(dist[r].first)] = {{"logprob", std::log(dist[r].second)}, {"rank", r + 1}, {"decoded_token", "x"}};
        if (!entry.contains(std::to_string(id))) entry[std::to_string(id)] = {{"logprob", lp}, {"rank", 999}, {"decoded_token", "y"}};
        return entry;
      });
      json choice = {{"index", 0}, {"finish_reason", "length"}, {"text", " the"}, {"logprobs", nullptr}, {"prompt_logprobs", list}};
      res.set_content(json{{"id", "cmpl-fake"}, {"object", "text_completion"}, {"created", 0}, {"model", model},
                           {"choices", json::array({choice})},
                           {"usage", {{"prompt_tokens", ids.size()}, {"completion_tokens", 1}, {"total_tokens", ids.size() + 1}}}}
                          .dump(),
                      "application/json");
      return;
    }
    const std::string prompt = chat ? body.value("messages", json::array()).dump() : body.value("prompt", json()).dump();
    const int max_tokens = body.value("max_tokens", 16);
    const auto ws = words(prompt, max_tokens);
    std::string text;
    for (const auto& w : ws) text += " " + w;
    const json usage = {{"prompt_tokens", static_cast<int>(prompt.size() / 4 + 1)},
                        {"completion_tokens", max_tokens},
                        {"total_tokens", static_cast<int>(prompt.size() / 4 + 1) + max_tokens}};
    json choice = {{"index", 0}, {"finish_reason", "length"}, {"logprobs", nullptr}};
    if (chat) {
      choice["message"] = {{"role", "assistant"}, {"content", text}, {"tool_calls", json::array()}};
      if (n_logprobs > 0) {
        json content = json::array();
        for (const auto& w : ws) {
          json top = json::array();
          for (int j = 0; j < n_logprobs; ++j) top.push_back({{"token", kWords[static_cast<std::size_t>(j) % kWords.size()]}, {"logprob", -0.1 - j}});
          content.push_back({{"token", " " + w}, {"logprob", -0.1}, {"top_logprobs", top}});
        }
        choice["logprobs"] = {{"content", content}};
      }
    } else {
      choice["text"] = text;
      if (n_logprobs > 0) choice["logprobs"] = legacy_logprobs(ws, n_logprobs, vllm && body.value("return_tokens_as_token_ids", false));
    }
    const json answer = {{"id", "cmpl-fake"}, {"object", chat ? "chat.completion" : "text_completion"}, {"created", 0},
                         {"model", model},   {"choices", json::array({choice})}, {"usage", usage}};
    res.set_content(answer.dump(), "application/json");
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  Fake fake;
  fake.vllm = !args.empty() && args[0] == "serve";
  const bool sglang = args.size() >= 2 && args[0] == "-m" && args[1] == "sglang.launch_server";
  if (!fake.vllm && !sglang) {
    std::fprintf(stderr, "fake-openai-server: start as `serve MODEL …` (vLLM) or `-m sglang.launch_server …` (SGLang)\n");
    return 2;
  }
  fake.model = fake.vllm ? (args.size() > 1 ? args[1] : "") : arg_after(args, "--model-path", "");
  const std::string host = arg_after(args, "--host", "0.0.0.0");
  const int port = std::atoi(arg_after(args, "--port", "8000").c_str());
  const std::string asked = arg_after(args, "--kv-cache-dtype", "auto");
  const std::set<std::string> dtypes =
      fake.vllm ? std::set<std::string>{"auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "nvfp4"}
                : std::set<std::string>{"auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16", "fp4_e2m1"};
  if (!dtypes.contains(asked)) {
    std::fprintf(stderr, "error: argument --kv-cache-dtype: invalid choice: '%s'\n", asked.c_str());
    return 2;
  }
  if (host != "127.0.0.1") {
    std::fprintf(stderr, "fake-openai-server: --host %s: kvsweep must bind its servers to 127.0.0.1\n", host.c_str());
    return 2;
  }
  const char* allocate = std::getenv("FAKE_OPENAI_ALLOCATE");
  fake.dtype = allocate && *allocate ? allocate : asked;
  const bool publish = !(std::getenv("FAKE_OPENAI_CONFIRM") && std::string(std::getenv("FAKE_OPENAI_CONFIRM")) == "none");
  std::fprintf(stderr, "INFO: fake %s: model %s, kv cache dtype %s\n", fake.vllm ? "vLLM" : "SGLang", fake.model.c_str(),
               fake.dtype.c_str());

  httplib::Server server;
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.set_content("", "text/plain"); });
  server.Get("/v1/models", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(json{{"object", "list"}, {"data", {{{"id", fake.model}, {"object", "model"}, {"owned_by", "fake"}}}}}.dump(),
                    "application/json");
  });
  if (fake.vllm) {
    server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
      std::string text =
          "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
          "# TYPE vllm:num_requests_running gauge\n"
          "vllm:num_requests_running{engine=\"0\",model_name=\"" + fake.model + "\"} 0.0\n"
          "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
          "# TYPE vllm:cache_config_info gauge\n";
      text += "vllm:cache_config_info{block_size=\"16\",";
      if (publish) text += "cache_dtype=\"" + fake.dtype + "\",";
      text += "calculate_kv_scales=\"False\",enable_prefix_caching=\"False\",engine=\"0\",gpu_memory_utilization=\"0.9\"} 1.0\n";
      res.set_content(text, "text/plain; version=0.0.4");
    });
    server.Post("/tokenize", [&](const httplib::Request& req, httplib::Response& res) {
      const json body = json::parse(req.body, nullptr, false);
      json tokens = json::array();
      for (char c : body.value("prompt", std::string())) tokens.push_back(static_cast<unsigned char>(c));
      res.set_content(json{{"tokens", tokens}, {"count", tokens.size()}, {"max_model_len", 4096}}.dump(), "application/json");
    });
    server.Post("/detokenize", [&](const httplib::Request& req, httplib::Response& res) {
      const json body = json::parse(req.body, nullptr, false);
      std::string text;
      for (const auto& t : body.value("tokens", json::array())) text += static_cast<char>(t.get<int>());
      res.set_content(json{{"prompt", text}}.dump(), "application/json");
    });
  } else {
    server.Get("/server_info", [&](const httplib::Request&, httplib::Response& res) {
      json info = {{"model_path", fake.model}, {"host", host}, {"port", port}, {"disable_radix_cache", true},
                   {"context_length", std::atoi(arg_after(args, "--context-length", "0").c_str())},
                   {"version", "0.5.0-fake"}, {"internal_states", json::array()}};
      if (publish) info["kv_cache_dtype"] = fake.dtype;
      res.set_content(info.dump(), "application/json");
    });
  }
  if (!fake.vllm)
    server.Post("/generate", [&](const httplib::Request& req, httplib::Response& res) { fake.generate(req, res); });
  server.Post("/v1/completions", [&](const httplib::Request& req, httplib::Response& res) { fake.answer(req, res, false); });
  server.Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) { fake.answer(req, res, true); });

  if (!server.bind_to_port(host, port)) {
    std::fprintf(stderr, "ERROR: [Errno 98] error while attempting to bind on address ('%s', %d): address already in use\n",
                 host.c_str(), port);
    return 1;
  }
  std::fprintf(stderr, "INFO:     Uvicorn running on http://%s:%d (Press CTRL+C to quit)\n", host.c_str(), port);
  std::fflush(stderr);
  return server.listen_after_bind() ? 0 : 1;
}
