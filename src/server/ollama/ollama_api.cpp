#include "kvsweep/server/ollama/ollama.hpp"

#include "kvsweep/server/ollama/ollama_load_options.hpp"
#include "kvsweep/server/token_logprobs.hpp"

// OllamaApi: the request for a completion, its answer parsed, and /api/embed.

namespace kvsweep::server {

namespace {

constexpr double kNsPerMs = 1e6;

double ns_to_ms(const nlohmann::json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_number()) return 0;
  return it->get<double>() / kNsPerMs;
}

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
  // num_ctx (and use_mmap) stay the cell's: a different value would reload the model mid-cell.
  options["num_ctx"] = model.num_ctx;
  if (model.use_mmap) options["use_mmap"] = *model.use_mmap;
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
    r.timings.requests = 1;
    if (body.contains("logprobs")) r.probs = read_token_logprobs(body["logprobs"]);  // Ollama gives no ids: each is -1
    return r;
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("unexpected Ollama ") + (chat ? "/api/chat" : "/api/generate") +
                                                  " answer: " + e.what());
  }
}

nlohmann::json ollama_load_options(const OllamaModelOptions& model) {
  nlohmann::json o = {{"num_ctx", model.num_ctx}};
  if (model.use_mmap) o["use_mmap"] = *model.use_mmap;
  return o;
}

nlohmann::json ollama_embed_body(const std::vector<std::string>& inputs, const OllamaModelOptions& model) {
  // truncate:false: an over-long input is an error, not an embedding of a silently cut text.
  return {{"model", model.model},
          {"input", inputs},
          {"truncate", false},
          {"keep_alive", model.keep_alive},
          {"options", ollama_load_options(model)}};
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

}  // namespace kvsweep::server
