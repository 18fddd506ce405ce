#include <algorithm>
#include <chrono>

#include "kvsweep/server/openai/openai_api.hpp"
#include "kvsweep/server/token_logprobs.hpp"

namespace kvsweep::server {

namespace {

using nlohmann::json;

core::Expected<double> logprob_at(const json& v, const std::string& where) {
  if (!v.is_number()) return core::fail(core::ErrorKind::parse, where + " is " + v.dump() + ", not a log-probability");
  const double lp = v.get<double>();
  if (const std::string why = impossible_logprob(lp); !why.empty())
    return core::fail(core::ErrorKind::parse, where + " is " + v.dump() + ": " + why);
  return lp;
}

void sort_top(TokenLogprob& tp) {
  std::stable_sort(tp.top.begin(), tp.top.end(), [](const TopLogprob& a, const TopLogprob& b) { return a.logprob > b.logprob; });
}

/// SGLang's [logprob, id, text] triple.
core::Expected<TopLogprob> sglang_entry(const json& e, const std::string& where) {
  if (!e.is_array() || e.size() < 2 || !e[1].is_number_integer())
    return core::fail(core::ErrorKind::parse, where + " is " + e.dump() + ", not [logprob, token id, text]");
  auto lp = logprob_at(e[0], where + "[0]");
  if (!lp) return std::unexpected(lp.error());
  return TopLogprob{e[1].get<std::int32_t>(), e.size() > 2 && e[2].is_string() ? e[2].get<std::string>() : "", *lp};
}

}  // namespace

std::optional<PromptLogprobsApi> parse_prompt_logprobs_api(std::string_view name) {
  if (name == "none") return PromptLogprobsApi::none;
  if (name == "vllm") return PromptLogprobsApi::vllm;
  if (name == "sglang") return PromptLogprobsApi::sglang;
  return std::nullopt;
}

core::Expected<PromptLogprobs> parse_vllm_prompt_logprobs(const json& body, const std::vector<std::int32_t>& tokens) {
  const json choices = body.is_object() ? body.value("choices", json()) : json();
  if (!choices.is_array() || choices.empty() || !choices[0].is_object())
    return core::fail(core::ErrorKind::parse, "the answer has no choices[0]");
  const json list = choices[0].value("prompt_logprobs", json());
  if (!list.is_array())
    return core::fail(core::ErrorKind::parse, "choices[0].prompt_logprobs is " + list.dump().substr(0, 80) +
                                                  ": the server ignored prompt_logprobs (is it vLLM?)");
  if (list.size() != tokens.size())
    return core::fail(core::ErrorKind::parse, "choices[0].prompt_logprobs has " + std::to_string(list.size()) +
                                                  " entries for a prompt of " + std::to_string(tokens.size()) + " tokens");
  PromptLogprobs out;
  for (std::size_t p = 0; p < list.size(); ++p) {
    TokenLogprob tp;
    tp.id = tokens[p];
    const json& entry = list[p];
    if (p == 0 || entry.is_null()) {
      out.positions.push_back(std::move(tp));
      continue;
    }
    if (!entry.is_object())
      return core::fail(core::ErrorKind::parse, "prompt_logprobs[" + std::to_string(p) + "] is not an object");
    bool own = false;
    for (auto it = entry.begin(); it != entry.end(); ++it) {
      const std::string where = "prompt_logprobs[" + std::to_string(p) + "][\"" + it.key() + "\"].logprob";
      std::int32_t id = -1;
      try {
        std::size_t used = 0;
        const long long v = std::stoll(it.key(), &used);
        if (used == it.key().size() && v >= 0 && v <= INT32_MAX) id = static_cast<std::int32_t>(v);
      } catch (const std::exception&) {
      }
      if (id < 0) return core::fail(core::ErrorKind::parse, "prompt_logprobs[" + std::to_string(p) + "] has a key '" +
                                                                it.key() + "' that is not a token id");
      auto lp = logprob_at(it->is_object() ? it->value("logprob", json()) : json(), where);
      if (!lp) return std::unexpected(lp.error());
      tp.top.push_back({id, it->is_object() ? it->value("decoded_token", "") : "", *lp});
      if (id == tp.id) {
        tp.logprob = *lp;
        own = true;
      }
    }
    if (!own)
      return core::fail(core::ErrorKind::parse, "prompt_logprobs[" + std::to_string(p) + "] lacks the prompt's own token " +
                                                    std::to_string(tp.id));
    sort_top(tp);
    out.positions.push_back(std::move(tp));
  }
  return out;
}

core::Expected<PromptLogprobs> parse_sglang_prompt_logprobs(const json& body) {
  const json meta = body.is_object() ? body.value("meta_info", json()) : json();
  const json own = meta.is_object() ? meta.value("input_token_logprobs", json()) : json();
  const json tops = meta.is_object() ? meta.value("input_top_logprobs", json()) : json();
  if (!own.is_array() || !tops.is_array())
    return core::fail(core::ErrorKind::parse, "meta_info lacks input_token_logprobs / input_top_logprobs: the server "
                                              "ignored return_logprob (is it SGLang?)");
  if (own.size() != tops.size())
    return core::fail(core::ErrorKind::parse, "meta_info.input_token_logprobs has " + std::to_string(own.size()) +
                                                  " entries but input_top_logprobs " + std::to_string(tops.size()));
  PromptLogprobs out;
  for (std::size_t p = 0; p < own.size(); ++p) {
    const json& e = own[p];
    if (!e.is_array() || e.size() < 2 || !e[1].is_number_integer())
      return core::fail(core::ErrorKind::parse, "input_token_logprobs[" + std::to_string(p) + "] is not [logprob, id, text]");
    TokenLogprob tp;
    tp.id = e[1].get<std::int32_t>();
    if (p > 0) {
      auto lp = logprob_at(e[0], "input_token_logprobs[" + std::to_string(p) + "][0]");
      if (!lp) return std::unexpected(lp.error());
      tp.logprob = *lp;
      if (!tops[p].is_array())
        return core::fail(core::ErrorKind::parse, "input_top_logprobs[" + std::to_string(p) + "] is not a list");
      for (std::size_t i = 0; i < tops[p].size(); ++i) {
        auto t = sglang_entry(tops[p][i], "input_top_logprobs[" + std::to_string(p) + "][" + std::to_string(i) + "]");
        if (!t) return std::unexpected(t.error());
        tp.top.push_back(std::move(*t));
      }
      sort_top(tp);
    }
    out.positions.push_back(std::move(tp));
  }
  return out;
}

core::Expected<PromptLogprobs> OpenAiApi::prompt_logprobs(const PromptLogprobsRequest& request) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto wall = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  switch (m_options.prompt_logprobs) {
    case PromptLogprobsApi::none: break;
    case PromptLogprobsApi::vllm: {
      if (request.tokens.empty())
        return core::fail(core::ErrorKind::unsupported, "vLLM's prompt_logprobs are asked with token ids (tokenize first)");
      const auto asked = model();
      if (!asked) return std::unexpected(asked.error());
      json body = {{"model", *asked},    {"prompt", request.tokens}, {"max_tokens", 1},
                   {"temperature", 0.0}, {"prompt_logprobs", request.top_n}};
      auto answer = m_client->post_for_json("/v1/completions", body);
      if (!answer) return std::unexpected(answer.error());
      auto out = parse_vllm_prompt_logprobs(*answer, request.tokens);
      if (!out) return std::unexpected(out.error());
      auto t = client_timings(answer->value("usage", json()), wall(), wall());
      if (!t) return std::unexpected(t.error());
      out->timings = *t;
      return out;
    }
    case PromptLogprobsApi::sglang: {
      json body = {{"sampling_params", {{"max_new_tokens", 1}, {"temperature", 0.0}}},
                   {"return_logprob", true},
                   {"logprob_start_len", 0},
                   {"top_logprobs_num", request.top_n}};
      if (request.tokens.empty()) body["text"] = request.text;
      else body["input_ids"] = request.tokens;
      auto answer = m_client->post_for_json("/generate", body);
      if (!answer) return std::unexpected(answer.error());
      auto out = parse_sglang_prompt_logprobs(*answer);
      if (!out) return std::unexpected(out.error());
      // SGLang's own counts: meta_info.prompt_tokens and cached_tokens.
      const json meta = answer->value("meta_info", json::object());
      json usage = {{"prompt_tokens", meta.value("prompt_tokens", json())},
                    {"completion_tokens", meta.value("completion_tokens", json())},
                    {"prompt_tokens_details", {{"cached_tokens", meta.value("cached_tokens", json())}}}};
      auto t = client_timings(usage, wall(), wall());
      if (!t) return std::unexpected(t.error());
      out->timings = *t;
      return out;
    }
  }
  return Api::prompt_logprobs(request);
}

}  // namespace kvsweep::server
