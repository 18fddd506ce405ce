#include "kvsweep/server/openai_api.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "kvsweep/server/llama_api.hpp"
#include "kvsweep/server/stream_reader.hpp"
#include "kvsweep/server/token_logprobs.hpp"

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

/// OpenAI's finish_reason as kvsweep's stop type: "length" ran out of tokens, anything else stopped.
std::string stop_type_of(const json& finish) {
  if (!finish.is_string()) return "";
  const std::string f = finish.get<std::string>();
  if (f == "length") return "limit";
  return f.empty() ? "none" : "eos";
}

/// A token's id from vLLM's "token_id:N" spelling (return_tokens_as_token_ids); -1 otherwise.
std::int32_t id_of_token_text(const std::string& token) {
  constexpr std::string_view prefix = "token_id:";
  if (token.rfind(prefix, 0) != 0) return -1;
  try {
    std::size_t used = 0;
    const long long id = std::stoll(token.substr(prefix.size()), &used);
    if (used != token.size() - prefix.size() || id < 0 || id > INT32_MAX) return -1;
    return static_cast<std::int32_t>(id);
  } catch (const std::exception&) {
    return -1;
  }
}

/// A logprob the server wrote: a number (a null or a string is a server that lost it), and a possible
/// one (finite, at most 0): 1e308 or +50 scored would read as two identical distributions.
core::Expected<double> logprob_of(const json& v, const std::string& where) {
  if (!v.is_number()) return core::fail(core::ErrorKind::parse, "logprobs: " + where + " is " + v.dump() + ", not a number");
  const double lp = v.get<double>();
  if (const std::string why = impossible_logprob(lp); !why.empty())
    return core::fail(core::ErrorKind::parse, "logprobs: " + where + " is " + v.dump() + ": " + why);
  return lp;
}

/// One entry of `logprobs.content[]`: {token, logprob, id?, top_logprobs[{token, logprob, id?}]}.
core::Expected<TokenLogprob> content_entry(const json& e) {
  TokenLogprob tp;
  tp.token = e.value("token", "");
  tp.id = e.contains("id") && e["id"].is_number_integer() ? e["id"].get<std::int32_t>() : id_of_token_text(tp.token);
  auto lp = logprob_of(e.value("logprob", json()), "logprob of '" + tp.token + "'");
  if (!lp) return std::unexpected(lp.error());
  tp.logprob = *lp;
  for (const auto& t : e.value("top_logprobs", json::array())) {
    TopLogprob top;
    top.token = t.value("token", "");
    top.id = t.contains("id") && t["id"].is_number_integer() ? t["id"].get<std::int32_t>() : id_of_token_text(top.token);
    auto tlp = logprob_of(t.value("logprob", json()), "top logprob of '" + top.token + "'");
    if (!tlp) return std::unexpected(tlp.error());
    top.logprob = *tlp;
    tp.top.push_back(std::move(top));
  }
  return tp;
}

/// The legacy completions shape: parallel arrays, each step's alternatives a {text: logprob} map.
core::Expected<std::vector<TokenLogprob>> legacy_logprobs(const json& lp) {
  const json tokens = lp.value("tokens", json::array());
  const json values = lp.value("token_logprobs", json::array());
  const json tops = lp.value("top_logprobs", json::array());
  if (!tokens.is_array() || !values.is_array() || values.size() != tokens.size() ||
      (!tops.is_null() && tops.is_array() && !tops.empty() && tops.size() != tokens.size()))
    return core::fail(core::ErrorKind::parse, "logprobs: tokens, token_logprobs and top_logprobs differ in length");
  std::vector<TokenLogprob> out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    TokenLogprob tp;
    tp.token = tokens[i].is_string() ? tokens[i].get<std::string>() : "";
    tp.id = id_of_token_text(tp.token);
    auto v = logprob_of(values[i], "token_logprobs[" + std::to_string(i) + "]");
    if (!v) return std::unexpected(v.error());
    tp.logprob = *v;
    if (tops.is_array() && i < tops.size() && tops[i].is_object()) {
      for (auto it = tops[i].begin(); it != tops[i].end(); ++it) {
        auto t = logprob_of(it.value(), "top_logprobs[" + std::to_string(i) + "]['" + it.key() + "']");
        if (!t) return std::unexpected(t.error());
        tp.top.push_back({id_of_token_text(it.key()), it.key(), *t});
      }
      // A JSON object has no order: most likely first, as every other shape gives them.
      std::ranges::stable_sort(tp.top, [](const TopLogprob& a, const TopLogprob& b) { return a.logprob > b.logprob; });
    }
    out.push_back(std::move(tp));
  }
  return out;
}

/// One count of `usage` (a JSON object): a non-negative integer; absent, negative or fractional is an
/// error, never 0 tokens.
core::Expected<int> usage_count(const json& usage, const char* key) {
  const json v = usage.is_object() ? usage.value(key, json()) : json();
  if (v.is_number_integer() && v.get<long long>() >= 0 && v.get<long long>() <= INT32_MAX) return v.get<int>();
  if (v.is_null()) return core::fail(core::ErrorKind::parse, std::string("the answer's usage has no ") + key +
                                                                 " (its token counts are unknown)");
  return core::fail(core::ErrorKind::parse, std::string("the answer's usage.") + key + " is " + v.dump() +
                                                ", not a count of tokens");
}

}  // namespace

core::Expected<Timings> client_timings(const json& usage, double first_ms, double wall_ms) {
  if (!usage.is_object())
    return core::fail(core::ErrorKind::parse, "the answer carries neither timings nor usage: its token counts are unknown");
  Timings t;
  t.requests = 1;
  t.client_measured = true;
  const auto prompt = usage_count(usage, "prompt_tokens");
  if (!prompt) return std::unexpected(prompt.error());
  const auto predicted = usage_count(usage, "completion_tokens");
  if (!predicted) return std::unexpected(predicted.error());
  int cached = 0;
  if (const json details = usage.value("prompt_tokens_details", json()); details.is_object() && details.contains("cached_tokens") &&
                                                                         !details["cached_tokens"].is_null()) {
    const auto c = usage_count(details, "cached_tokens");
    if (!c) return std::unexpected(c.error());
    if (*c > *prompt)
      return core::fail(core::ErrorKind::parse, "the answer's usage counts " + std::to_string(*c) + " cached of " +
                                                    std::to_string(*prompt) + " prompt tokens: impossible");
    cached = *c;
  }
  t.cache_n = cached;
  t.prompt_n = *prompt - cached;
  t.predicted_n = *predicted;
  t.prompt_ms = first_ms;
  t.predicted_ms = std::max(0.0, wall_ms - first_ms);
  return t;
}

namespace {

/// An answer that says it generated more tokens than asked for did not come from the request.
core::Expected<CompletionResponse> within_request(core::Expected<CompletionResponse> r, const CompletionRequest& request) {
  if (r && request.n_predict > 0 && r->timings.predicted_n > request.n_predict)
    return core::fail(core::ErrorKind::parse, "the answer counts " + std::to_string(r->timings.predicted_n) +
                                                  " generated tokens, more than the request's " +
                                                  std::to_string(request.n_predict) + ": impossible");
  return r;
}

/// Token ids of the generated tokens when every one of them came with its id.
void ids_from_probs(CompletionResponse& r) {
  if (!r.tokens.empty() || r.probs.empty()) return;
  for (const auto& p : r.probs) {
    if (p.id < 0) {
      r.tokens.clear();
      return;
    }
    r.tokens.push_back(p.id);
  }
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

core::Expected<std::vector<TokenLogprob>> parse_openai_logprobs(const json& lp) {
  if (lp.is_null()) return std::vector<TokenLogprob>{};
  if (!lp.is_object()) return core::fail(core::ErrorKind::parse, "logprobs is " + std::string(lp.type_name()) + ", not an object");
  if (lp.contains("content") && lp["content"].is_array()) {
    std::vector<TokenLogprob> out;
    for (const auto& e : lp["content"]) {
      auto tp = content_entry(e);
      if (!tp) return std::unexpected(tp.error());
      out.push_back(std::move(*tp));
    }
    return out;
  }
  return legacy_logprobs(lp);
}

core::Expected<CompletionResponse> parse_openai_completion(const json& body, bool chat, double wall_ms) {
  try {
    CompletionResponse r;
    const auto& choice = body.at("choices").at(0);
    if (chat) {
      const auto& msg = choice.at("message");
      r.content = msg.contains("content") && msg["content"].is_string() ? msg["content"].get<std::string>() : "";
      // llama-server and SGLang say reasoning_content, vLLM reasoning.
      for (const char* key : {"reasoning_content", "reasoning"})
        if (r.reasoning.empty() && msg.contains(key) && msg[key].is_string()) r.reasoning = msg[key].get<std::string>();
      if (msg.contains("tool_calls") && !msg["tool_calls"].is_null()) r.tool_calls = msg["tool_calls"];
    } else {
      r.content = choice.at("text").get<std::string>();
    }
    r.stop_type = stop_type_of(choice.value("finish_reason", json()));
    if (r.stop_type.empty()) r.stop_type = "none";
    auto probs = parse_openai_logprobs(choice.value("logprobs", json()));
    if (!probs) return std::unexpected(probs.error());
    r.probs = std::move(*probs);
    ids_from_probs(r);
    if (body.contains("timings") && body["timings"].is_object()) {
      auto t = parse_server_timings(body["timings"]);
      if (!t) return std::unexpected(t.error());
      r.timings = *t;
    } else {
      auto t = client_timings(body.value("usage", json()), 0.0, wall_ms);
      if (!t) return std::unexpected(t.error());
      r.timings = *t;
    }
    return r;
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("unexpected OpenAI completion shape: ") + e.what());
  }
}

core::Expected<void> OpenAiStream::add(std::string_view data) {
  if (data == "[DONE]") {
    m_finished = true;
    return {};
  }
  try {
    const auto j = json::parse(data);
    if (j.contains("error") || j.value("object", "") == "error")
      return core::fail(core::ErrorKind::http_status, "stream: " + http::error_message(std::string(data)));
    CompletionResponse& r = m_response;
    const json choices = j.value("choices", json::array());
    if (choices.is_array() && !choices.empty()) {
      const auto& choice = choices.at(0);
      if (m_chat) {
        const json delta = choice.value("delta", json::object());
        if (delta.contains("content") && delta["content"].is_string()) r.content += delta["content"].get<std::string>();
        for (const char* key : {"reasoning_content", "reasoning"})
          if (delta.contains(key) && delta[key].is_string()) r.reasoning += delta[key].get<std::string>();
      } else if (choice.contains("text") && choice["text"].is_string()) {
        r.content += choice["text"].get<std::string>();
      }
      auto probs = parse_openai_logprobs(choice.value("logprobs", json()));
      if (!probs) return std::unexpected(probs.error());
      for (auto& p : *probs) r.probs.push_back(std::move(p));
      if (const std::string stop = stop_type_of(choice.value("finish_reason", json())); !stop.empty()) r.stop_type = stop;
    }
    if (j.contains("usage") && j["usage"].is_object()) m_usage = j["usage"];
    if (j.contains("timings") && j["timings"].is_object()) {
      auto t = parse_server_timings(j["timings"]);
      if (!t) return std::unexpected(t.error());
      r.timings = *t;
      m_server_timings = true;
    }
    return {};
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("unexpected OpenAI stream chunk: ") + e.what());
  }
}

core::Expected<CompletionResponse> OpenAiStream::take(double first_ms, double wall_ms) {
  CompletionResponse r = std::move(m_response);
  if (!m_server_timings) {
    auto t = client_timings(m_usage, first_ms, wall_ms);
    if (!t) return std::unexpected(t.error());
    r.timings = *t;
  }
  ids_from_probs(r);
  return r;
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
  auto body = m_client->post_for_json("/v1/embeddings", {{"model", *asked}, {"input", inputs}, {"encoding_format", "float"}});
  if (!body) return std::unexpected(body.error());
  try {
    std::vector<std::vector<float>> out(inputs.size());
    for (const auto& d : body->at("data")) {
      const auto idx = d.at("index").get<std::size_t>();
      if (idx >= out.size()) return core::fail(core::ErrorKind::parse, "/v1/embeddings: index out of range");
      out[idx] = d.at("embedding").get<std::vector<float>>();
    }
    return out;
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("/v1/embeddings: ") + e.what());
  }
}

}  // namespace kvsweep::server
