#include "kvsweep/server/openai/openai_api.hpp"

#include <algorithm>

#include "kvsweep/server/llama/llama_api.hpp"

// An OpenAI answer read: a non-streamed completion, or a stream's chunks; the stop type, the
// log-probabilities, and the timings (the server's, else the client's with the usage counts).

namespace kvsweep::server {

namespace {

using nlohmann::json;

/// OpenAI's finish_reason as kvsweep's stop type: "length" ran out of tokens, anything else stopped.
std::string stop_type_of(const json& finish) {
  if (!finish.is_string()) return "";
  const std::string f = finish.get<std::string>();
  if (f == "length") return "limit";
  return f.empty() ? "none" : "eos";
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

}  // namespace kvsweep::server
