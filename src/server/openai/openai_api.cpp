#include "kvsweep/server/openai/openai_api.hpp"

#include <algorithm>
#include <chrono>

#include "kvsweep/server/llama/llama_api.hpp"
#include "kvsweep/server/stream_reader.hpp"
#include "kvsweep/server/v1_embeddings.hpp"

// The request body, the model a request asks for, and OpenAiApi's endpoints (the answers are read in
// openai_answer.cpp).

namespace kvsweep::server {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::array<std::pair<TokenizerApi, std::string_view>, 4> kTokenizerNames = {{
    {TokenizerApi::none, "none"},
    {TokenizerApi::llama_server, "llama-server"},
    {TokenizerApi::vllm, "vllm"},
    {TokenizerApi::tabbyapi, "tabbyapi"},
}};

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

/// An answer that says it generated more tokens than asked for did not come from the request.
core::Expected<CompletionResponse> within_request(core::Expected<CompletionResponse> r, const CompletionRequest& request) {
  if (r && request.n_predict > 0 && r->timings.predicted_n > request.n_predict)
    return core::fail(core::ErrorKind::parse, "the answer counts " + std::to_string(r->timings.predicted_n) +
                                                  " generated tokens, more than the request's " +
                                                  std::to_string(request.n_predict) + ": impossible");
  return r;
}

}  // namespace

std::optional<TokenizerApi> parse_tokenizer_api(std::string_view name) {
  for (const auto& [api, n] : kTokenizerNames)
    if (n == name) return api;
  return std::nullopt;
}

std::string_view to_string(TokenizerApi api) {
  for (const auto& [a, n] : kTokenizerNames)
    if (a == api) return n;
  return "none";
}

core::Expected<json> openai_body(const CompletionRequest& r, const OpenAiOptions& options, const std::string& model) {
  const bool chat = !r.messages.empty();
  if (chat && !options.capabilities.has(Capability::chat))
    return core::fail(core::ErrorKind::unsupported, "this server has no chat completions (capability chat)");
  if (!chat && !r.tokens.empty() && !options.capabilities.has(Capability::token_prompts))
    return core::fail(core::ErrorKind::unsupported, "this server takes no token-id prompts (capability token_prompts)");
  if (r.n_probs > 0 && !options.capabilities.has(Capability::logprobs))
    return core::fail(core::ErrorKind::unsupported, "this server gives no per-token log-probabilities (capability logprobs)");
  json body = {{"model", model},
               {"max_tokens", r.n_predict},
               {"temperature", r.temperature},
               {"top_p", r.top_p},
               {"top_k", r.top_k},
               {"min_p", r.min_p},
               {"seed", r.seed},
               {"presence_penalty", 0.0},
               {"frequency_penalty", 0.0},
               {"n", 1},
               {"stream", static_cast<bool>(r.stop_when)}};
  if (r.stop_when) body["stream_options"] = {{"include_usage", true}};
  if (options.cache_prompt) body["cache_prompt"] = r.cache_prompt;
  if (!r.stop.empty()) body["stop"] = r.stop;
  if (chat) {
    json msgs = json::array();
    for (const auto& m : r.messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
    body["messages"] = std::move(msgs);
    if (r.n_probs > 0) {
      body["logprobs"] = true;
      body["top_logprobs"] = r.n_probs;
    }
  } else {
    if (r.tokens.empty()) body["prompt"] = r.prompt;
    else body["prompt"] = r.tokens;
    if (r.n_probs > 0) body["logprobs"] = r.n_probs;
  }
  for (auto it = options.extra.begin(); it != options.extra.end(); ++it) body[it.key()] = it.value();
  for (auto it = r.extra.begin(); it != r.extra.end(); ++it) body[it.key()] = it.value();
  return body;
}

std::string model_stem(std::string_view id) {
  id = id.substr(id.find_last_of('/') == std::string_view::npos ? 0 : id.find_last_of('/') + 1);
  if (id.size() > 5 && id.substr(id.size() - 5) == ".gguf") id.remove_suffix(5);
  return std::string(id);
}

core::Expected<std::string> choose_model(const std::vector<std::string>& ids, const OpenAiOptions& options) {
  if (!options.model.empty()) return options.model;
  if (ids.empty()) return options.fallback_model;
  // A served name or a path ("/models/Qwen3-8B.gguf", "org/Qwen3-8B"): the launched model's file name.
  const std::string launched = model_stem(options.fallback_model);
  for (const auto& id : ids)
    if (id == options.fallback_model) return id;
  for (const auto& id : ids)
    if (!launched.empty() && model_stem(id) == launched) return id;
  if (ids.size() == 1) return ids.front();
  std::string listed;
  for (const auto& id : ids) listed += (listed.empty() ? "" : ", ") + id;
  return core::fail(core::ErrorKind::invalid, "GET /v1/models lists " + std::to_string(ids.size()) + " models (" + listed +
                                                  ") and none of them is the launched model '" + options.fallback_model +
                                                  "': set server.openai.model to the one to ask");
}

core::Expected<std::string> OpenAiApi::model() {
  std::lock_guard lock(m_model_mutex);
  if (!m_model) {
    // A server without /v1/models (or a failed answer): the launched model is asked for by name.
    const auto ids = m_options.model.empty() ? models() : std::vector<std::string>{};
    m_model = choose_model(ids.value_or(std::vector<std::string>{}), m_options);
  }
  return *m_model;
}

core::Expected<std::vector<std::string>> OpenAiApi::models() {
  auto body = m_client->get_json("/v1/models");
  if (!body) return std::unexpected(body.error());
  std::vector<std::string> out;
  if (body->is_object() && body->contains("data") && (*body)["data"].is_array())
    for (const auto& m : (*body)["data"])
      if (m.is_object() && m.contains("id") && m["id"].is_string()) out.push_back(m["id"].get<std::string>());
  return out;
}

core::Expected<CompletionResponse> OpenAiApi::complete(const CompletionRequest& request) {
  const bool chat = !request.messages.empty();
  const auto asked = model();
  if (!asked) return std::unexpected(asked.error());
  auto body = openai_body(request, m_options, *asked);
  if (!body) return std::unexpected(body.error());
  const std::string path = chat ? "/v1/chat/completions" : "/v1/completions";
  std::string text = body->dump(-1, ' ', false, json::error_handler_t::replace);
  const std::size_t limit = answer_limit(request, text.size(), 1);
  const auto t0 = Clock::now();
  if (!request.stop_when) {
    auto answer = m_client->post_text_for_json(path, std::move(text), limit);
    if (!answer) return std::unexpected(answer.error());
    return within_request(parse_openai_completion(*answer, chat, ms_since(t0)), request);
  }
  OpenAiStream stream(chat);
  double first_ms = -1;
  auto end = read_stream(*m_client, path, std::move(text), limit, stream, request.stop_when, [&] {
    if (first_ms < 0) first_ms = ms_since(t0);
  });
  if (!end) return std::unexpected(end.error());
  const bool ended = !stream.response().stop_type.empty();
  if (*end != StreamEnd::caller && !ended) return core::fail(core::ErrorKind::timeout, "stream ended before its finish_reason");
  auto response = stream.take(std::max(first_ms, 0.0), ms_since(t0));
  if (response && *end == StreamEnd::caller) response->stop_type = "cancel";
  return within_request(std::move(response), request);
}

core::Expected<std::vector<std::int32_t>> OpenAiApi::tokenize(const std::string& text, bool add_special) {
  json request;
  std::string path;
  switch (m_options.tokenizer) {
    case TokenizerApi::none:
      return core::fail(core::ErrorKind::unsupported, "this server has no tokenizer endpoint (capability tokenize)");
    case TokenizerApi::llama_server:
      path = "/tokenize";
      request = {{"content", text}, {"add_special", add_special}};
      break;
    case TokenizerApi::vllm: {
      const auto asked = model();
      if (!asked) return std::unexpected(asked.error());
      path = "/tokenize";
      request = {{"model", *asked}, {"prompt", text}, {"add_special_tokens", add_special}};
      break;
    }
    case TokenizerApi::tabbyapi:
      path = "/v1/token/encode";
      request = {{"text", text}, {"add_bos_token", add_special}};
      break;
  }
  auto body = m_client->post_for_json(path, request);
  if (!body) return std::unexpected(body.error());
  try {
    return body->at("tokens").get<std::vector<std::int32_t>>();
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, "POST " + path + ": " + e.what());
  }
}

core::Expected<std::string> OpenAiApi::detokenize(const std::vector<std::int32_t>& tokens) {
  json request;
  std::string path;
  std::string field;
  switch (m_options.tokenizer) {
    case TokenizerApi::none:
      return core::fail(core::ErrorKind::unsupported, "this server has no detokenizer endpoint (capability tokenize)");
    case TokenizerApi::llama_server:
      path = "/detokenize";
      request = {{"tokens", tokens}};
      field = "content";
      break;
    case TokenizerApi::vllm: {
      const auto asked = model();
      if (!asked) return std::unexpected(asked.error());
      path = "/detokenize";
      request = {{"model", *asked}, {"tokens", tokens}};
      field = "prompt";
      break;
    }
    case TokenizerApi::tabbyapi:
      path = "/v1/token/decode";
      request = {{"tokens", tokens}};
      field = "text";
      break;
  }
  auto body = m_client->post_for_json(path, request);
  if (!body) return std::unexpected(body.error());
  if (!body->is_object() || !body->contains(field) || !(*body)[field].is_string())
    return core::fail(core::ErrorKind::parse, "POST " + path + ": no \"" + field + "\" text in the answer");
  return (*body)[field].get<std::string>();
}

core::Expected<std::vector<std::vector<float>>> OpenAiApi::embed(const std::vector<std::string>& inputs) {
  if (!m_options.capabilities.has(Capability::embeddings))
    return core::fail(core::ErrorKind::unsupported, "this server serves no embeddings (capability embeddings)");
  const auto asked = model();
  if (!asked) return std::unexpected(asked.error());
  return v1_embeddings(*m_client, inputs, *asked);
}

}  // namespace kvsweep::server
