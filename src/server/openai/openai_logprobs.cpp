#include "kvsweep/server/openai/openai_api.hpp"

#include <algorithm>

#include "kvsweep/server/token_logprobs.hpp"

// Per-token log-probabilities in both shapes OpenAI servers answer with (see openai_api.hpp).

namespace kvsweep::server {

namespace {

using nlohmann::json;

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

/// {token, logprob, id?}: an entry of `logprobs.content[]` and each of its alternatives (`what` names
/// which in the message).
core::Expected<TopLogprob> token_logprob(const json& e, const std::string& what) {
  TopLogprob t;
  t.token = e.value("token", "");
  t.id = e.contains("id") && e["id"].is_number_integer() ? e["id"].get<std::int32_t>() : id_of_token_text(t.token);
  auto lp = logprob_of(e.value("logprob", json()), what + " of '" + t.token + "'");
  if (!lp) return std::unexpected(lp.error());
  t.logprob = *lp;
  return t;
}

/// One entry of `logprobs.content[]`: {token, logprob, id?, top_logprobs[{token, logprob, id?}]}.
core::Expected<TokenLogprob> content_entry(const json& e) {
  auto own = token_logprob(e, "logprob");
  if (!own) return std::unexpected(own.error());
  TokenLogprob tp;
  tp.id = own->id;
  tp.token = std::move(own->token);
  tp.logprob = own->logprob;
  for (const auto& t : e.value("top_logprobs", json::array())) {
    auto top = token_logprob(t, "top logprob");
    if (!top) return std::unexpected(top.error());
    tp.top.push_back(std::move(*top));
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

}  // namespace

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

}  // namespace kvsweep::server
