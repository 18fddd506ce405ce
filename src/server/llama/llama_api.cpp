#include "kvsweep/server/llama/llama_api.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kvsweep/server/stream_reader.hpp"
#include "kvsweep/server/token_logprobs.hpp"
#include "kvsweep/server/v1_embeddings.hpp"

namespace kvsweep::server {

nlohmann::json to_json(const Timings& t) {
  nlohmann::json j = {{"prompt_n", t.prompt_n}, {"cache_n", t.cache_n}, {"prompt_ms", t.prompt_ms},
                      {"predicted_n", t.predicted_n}, {"predicted_ms", t.predicted_ms}, {"requests", t.requests}};
  // Only when set: records of servers that report their timings stay as they were.
  if (t.client_measured) j["measured_by"] = "client";
  return j;
}

const std::vector<std::string>& completion_response_fields() {
  static const std::vector<std::string> fields = {"index", "content", "tokens", "stop", "stop_type", "timings",
                                                  "completion_probabilities"};
  return fields;
}

namespace {

/// How a token prompt goes into the body: as JSON nodes, or as a null that dump_with replaces.
enum class IdsIn { json, placeholder };

nlohmann::json body_of(const CompletionRequest& r, IdsIn ids) {
  nlohmann::json body = {
      {"n_predict", r.n_predict},   {"temperature", r.temperature}, {"seed", r.seed},
      {"top_k", r.top_k},           {"top_p", r.top_p},             {"min_p", r.min_p},
      {"typical_p", 1.0},           {"repeat_penalty", 1.0},        {"repeat_last_n", 0},
      {"presence_penalty", 0.0},    {"frequency_penalty", 0.0},     {"dry_multiplier", 0.0},
      {"xtc_probability", 0.0},     {"top_n_sigma", -1.0},          {"mirostat", 0},
      {"cache_prompt", r.cache_prompt}, {"stream", static_cast<bool>(r.stop_when)},
  };
  if (r.stop_when) body["timings_per_token"] = true;
  if (!r.stop.empty()) body["stop"] = r.stop;
  if (r.n_probs > 0) body["n_probs"] = r.n_probs;
  if (!r.messages.empty()) {
    nlohmann::json msgs = nlohmann::json::array();
    for (const auto& m : r.messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
    body["messages"] = msgs;
    body["max_tokens"] = r.n_predict;
    if (r.n_probs > 0) {
      body["logprobs"] = true;
      body["top_logprobs"] = r.n_probs;
    }
  } else {
    if (r.tokens.empty()) body["prompt"] = r.prompt;
    else if (ids == IdsIn::placeholder) body["prompt"] = nullptr;
    else body["prompt"] = r.tokens;
    body["return_tokens"] = true;
    // Only what parse_completion and CompletionStream read: the final answer otherwise echoes the
    // whole prompt, detokenized (a 430 KB corpus back with every answer, parsed again here).
    body["response_fields"] = completion_response_fields();
  }
  for (auto it = r.extra.begin(); it != r.extra.end(); ++it) body[it.key()] = it.value();
  return body;
}

}  // namespace

nlohmann::json completion_body(const CompletionRequest& r) { return body_of(r, IdsIn::json); }

std::string completion_body_text(const CompletionRequest& r, IdsJsonWriter& ids) {
  const bool spliced = !r.tokens.empty() && r.messages.empty() && !r.extra.contains("prompt");
  if (!spliced) return completion_body(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return dump_with(body_of(r, IdsIn::placeholder), "prompt", [&](std::string& out) { ids.append(out, r.tokens); });
}

std::string completion_body_text(const CompletionRequest& r, const std::vector<std::vector<std::int32_t>>& prompts) {
  IdsJsonWriter ids;  // each prompt shares most of its ids with the one before it
  return dump_with(body_of(r, IdsIn::placeholder), "prompt", [&](std::string& out) {
    out += '[';
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      if (i > 0) out += ',';
      ids.append(out, prompts[i]);
    }
    out += ']';
  });
}

std::size_t answer_limit(const CompletionRequest& r, std::size_t body_bytes, std::size_t answers) {
  if (r.n_predict <= 0) return http::kDefaultResponseLimit;  // no bound of its own
  // Generous: a streamed token with its timings is ~0.5 KiB, each top logprob ~0.1 KiB; the final
  // answer may echo the prompt (escaped) and the generation settings.
  const std::size_t per_token = 1024 + static_cast<std::size_t>(std::max(r.n_probs, 0)) * 256;
  return (std::size_t{1} << 20) + 8 * body_bytes + answers * static_cast<std::size_t>(r.n_predict) * per_token;
}

namespace {

/// A count or a time the server reports: a finite, non-negative number (a count: an integer
/// that fits an int). Anything else is an answer kvsweep cannot trust.
template <class T>
core::Expected<T> timing_field(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return T{};
  const bool count = std::is_integral_v<T>;
  if (!it->is_number() || (count && !it->is_number_integer() && !it->is_number_unsigned()))
    return core::fail(core::ErrorKind::parse, std::string("timings.") + key + " is " + it->dump() + ", not a " +
                                                  (count ? "count" : "time in ms"));
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0 || (count && v > std::numeric_limits<int>::max()))
    return core::fail(core::ErrorKind::parse, std::string("timings.") + key + " is " + it->dump() + ": impossible");
  return it->get<T>();
}

}  // namespace

core::Expected<Timings> parse_server_timings(const nlohmann::json& j) {
  Timings t;
  if (!j.is_object()) return t;
  auto prompt_n = timing_field<int>(j, "prompt_n");
  auto cache_n = timing_field<int>(j, "cache_n");
  auto prompt_ms = timing_field<double>(j, "prompt_ms");
  auto predicted_n = timing_field<int>(j, "predicted_n");
  auto predicted_ms = timing_field<double>(j, "predicted_ms");
  for (const core::Error* e : {prompt_n ? nullptr : &prompt_n.error(), cache_n ? nullptr : &cache_n.error(),
                               prompt_ms ? nullptr : &prompt_ms.error(), predicted_n ? nullptr : &predicted_n.error(),
                               predicted_ms ? nullptr : &predicted_ms.error()})
    if (e) return std::unexpected(*e);
  t.prompt_n = *prompt_n;
  t.cache_n = *cache_n;
  t.prompt_ms = *prompt_ms;
  t.predicted_n = *predicted_n;
  t.predicted_ms = *predicted_ms;
  t.requests = 1;
  return t;
}

namespace {

/// An answer that says it generated more tokens than the request allowed did not come from it.
core::Expected<CompletionResponse> within_bound(core::Expected<CompletionResponse> r, const CompletionRequest& request) {
  if (r && request.n_predict > 0 && r->timings.predicted_n > request.n_predict)
    return core::fail(core::ErrorKind::parse, "timings.predicted_n is " + std::to_string(r->timings.predicted_n) +
                                                  ", more than the request's " + std::to_string(request.n_predict) +
                                                  " tokens: impossible");
  return r;
}

}  // namespace

core::Expected<CompletionResponse> parse_completion(const nlohmann::json& body, bool chat) {
  try {
    CompletionResponse r;
    if (chat) {
      const auto& choice = body.at("choices").at(0);
      const auto& msg = choice.at("message");
      r.content = msg.contains("content") && msg["content"].is_string() ? msg["content"].get<std::string>() : "";
      if (msg.contains("reasoning_content") && msg["reasoning_content"].is_string())
        r.reasoning = msg["reasoning_content"].get<std::string>();
      if (msg.contains("tool_calls")) r.tool_calls = msg["tool_calls"];
      std::string finish = choice.value("finish_reason", "");
      r.stop_type = finish == "length" ? "limit" : (finish.empty() ? "none" : "eos");
      if (choice.contains("logprobs") && choice["logprobs"].is_object())
        r.probs = read_token_logprobs(choice["logprobs"].value("content", nlohmann::json::array()));
    } else {
      r.content = body.at("content").get<std::string>();
      r.stop_type = body.value("stop_type", "");
      if (body.contains("tokens") && body["tokens"].is_array())
        r.tokens = body["tokens"].get<std::vector<std::int32_t>>();
      if (body.contains("completion_probabilities")) r.probs = read_token_logprobs(body["completion_probabilities"]);
    }
    if (body.contains("timings")) {
      auto timings = parse_server_timings(body["timings"]);
      if (!timings) return std::unexpected(timings.error());
      r.timings = *timings;
    }
    if (r.tokens.empty() && !r.probs.empty()) {
      for (const auto& p : r.probs) r.tokens.push_back(p.id);
    }
    return r;
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("unexpected completion shape: ") + e.what());
  }
}

core::Expected<void> CompletionStream::add(std::string_view data) {
  if (data == "[DONE]") return {};
  try {
    const auto j = nlohmann::json::parse(data);
    if (j.contains("error")) {
      return core::fail(core::ErrorKind::http_status, "stream: " + http::error_message(std::string(data)));
    }
    CompletionResponse& r = m_response;
    if (m_chat) {
      const auto& choices = j.at("choices");
      if (!choices.empty()) {
        const auto& choice = choices.at(0);
        if (choice.contains("delta") && choice["delta"].is_object()) {
          const auto& delta = choice["delta"];
          if (delta.contains("content") && delta["content"].is_string()) r.content += delta["content"].get<std::string>();
          if (delta.contains("reasoning_content") && delta["reasoning_content"].is_string())
            r.reasoning += delta["reasoning_content"].get<std::string>();
        }
        if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
          r.stop_type = choice["finish_reason"].get<std::string>() == "length" ? "limit" : "eos";
        }
        if (choice.contains("logprobs") && choice["logprobs"].is_object()) {
          for (auto& p : read_token_logprobs(choice["logprobs"].value("content", nlohmann::json::array())))
            r.probs.push_back(std::move(p));
        }
      }
    } else {
      if (j.contains("content") && j["content"].is_string()) r.content += j["content"].get<std::string>();
      if (j.contains("tokens") && j["tokens"].is_array()) {
        for (const auto& t : j["tokens"]) r.tokens.push_back(t.get<std::int32_t>());
      }
      if (j.contains("completion_probabilities")) {
        for (auto& p : read_token_logprobs(j["completion_probabilities"])) r.probs.push_back(std::move(p));
      }
      if (j.value("stop", false)) r.stop_type = j.value("stop_type", "none");
    }
    if (j.contains("timings")) {
      auto timings = parse_server_timings(j["timings"]);
      if (!timings) return std::unexpected(timings.error());
      r.timings = *timings;
    }
    return {};
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("unexpected stream chunk: ") + e.what());
  }
}

namespace {

core::Expected<CompletionResponse> complete_streamed(http::Client& client, const CompletionRequest& request,
                                                     std::string body, bool chat) {
  CompletionStream stream(chat);
  const std::size_t limit = answer_limit(request, body.size(), 1);
  auto end = read_stream(client, chat ? "/v1/chat/completions" : "/completion", std::move(body), limit, stream,
                         request.stop_when);
  if (!end) return std::unexpected(end.error());
  CompletionResponse response = stream.take();
  if (*end == StreamEnd::caller) {
    response.stop_type = "cancel";
  } else if (response.stop_type.empty()) {
    return core::fail(core::ErrorKind::parse, "stream ended before its final chunk (a cut or malformed answer)");
  }
  return response;
}

}  // namespace

core::Expected<CompletionResponse> LlamaApi::complete(const CompletionRequest& request) {
  bool chat = !request.messages.empty();
  std::string sent;
  {
    std::lock_guard lock(m_ids_mutex);
    sent = completion_body_text(request, m_ids);
  }
  if (request.stop_when) return within_bound(complete_streamed(*m_client, request, std::move(sent), chat), request);
  const std::size_t limit = answer_limit(request, sent.size(), 1);
  auto body = m_client->post_text_for_json(chat ? "/v1/chat/completions" : "/completion", std::move(sent), limit);
  if (!body) return std::unexpected(body.error());
  return within_bound(parse_completion(*body, chat), request);
}

core::Expected<std::vector<CompletionResponse>> LlamaApi::complete_each(
    const CompletionRequest& request, const std::vector<std::vector<std::int32_t>>& prompts) {
  if (prompts.size() < 2 || request.stop_when || !request.messages.empty()) return Api::complete_each(request, prompts);
  // "prompt" as an array of token arrays: one task per prompt, one answer each.
  std::string body = completion_body_text(request, prompts);
  const std::size_t limit = answer_limit(request, body.size(), prompts.size());
  auto answer = m_client->post_text_for_json("/completion", std::move(body), limit);
  if (!answer) return std::unexpected(answer.error());
  const std::string what = "/completion with " + std::to_string(prompts.size()) + " prompts: ";
  if (!answer->is_array() || answer->size() != prompts.size())
    return core::fail(core::ErrorKind::parse, what + "expected an array of " + std::to_string(prompts.size()) +
                                                  " answers, got " + std::string(answer->type_name()) +
                                                  (answer->is_array() ? " of " + std::to_string(answer->size()) : ""));
  // The server orders the answers by prompt; each also says its own index, which is checked.
  std::vector<CompletionResponse> out(prompts.size());
  for (std::size_t i = 0; i < answer->size(); ++i) {
    const auto& one = (*answer)[i];
    if (one.is_object() && one.contains("index") && one["index"] != i)
      return core::fail(core::ErrorKind::parse, what + "answer " + std::to_string(i) + " says index " + one["index"].dump());
    auto parsed = within_bound(parse_completion(one, false), request);
    if (!parsed) return std::unexpected(parsed.error());
    out[i] = std::move(*parsed);
  }
  return out;
}

core::Expected<std::vector<std::int32_t>> LlamaApi::tokenize(const std::string& text, bool add_special) {
  auto body = m_client->post_for_json("/tokenize", {{"content", text}, {"add_special", add_special}});
  if (!body) return std::unexpected(body.error());
  try {
    return body->at("tokens").get<std::vector<std::int32_t>>();
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("/tokenize: ") + e.what());
  }
}

core::Expected<std::string> LlamaApi::detokenize(const std::vector<std::int32_t>& tokens) {
  auto body = m_client->post_for_json("/detokenize", {{"tokens", tokens}});
  if (!body) return std::unexpected(body.error());
  return body->value("content", "");
}

core::Expected<std::vector<std::vector<float>>> LlamaApi::embed(const std::vector<std::string>& inputs) {
  return v1_embeddings(*m_client, inputs, "");
}

}  // namespace kvsweep::server
