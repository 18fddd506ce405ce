#include "kvsweep/probe/top_list.hpp"

#include <string>

#include "kvsweep/server/token_logprobs.hpp"

namespace kvsweep::probe {

core::Expected<TopList> top_list_of(const server::TokenLogprob& tp, std::string_view probe) {
  if (tp.top.empty())
    return core::fail(core::ErrorKind::parse, "the answer carries no top log-probabilities (was n_probs ignored?)");
  TopList out;
  out.reserve(tp.top.size());
  for (const auto& t : tp.top) {
    if (t.id < 0)
      return core::fail(core::ErrorKind::unsupported,
                        "the server reports top log-probabilities without token ids; " + std::string(probe) +
                            " needs them (llama-server's /completion gives them)");
    if (const std::string why = server::impossible_logprob(t.logprob); !why.empty())
      return core::fail(core::ErrorKind::parse, "the server reports a top log-probability of " +
                                                    std::to_string(t.logprob) + " for token " + std::to_string(t.id) +
                                                    ": " + why);
    out.push_back({t.id, t.logprob});
  }
  return out;
}

nlohmann::json tops_to_json(const std::vector<TopList>& tops) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& top : tops) {
    nlohmann::json step = nlohmann::json::array();
    for (const auto& t : top) step.push_back(nlohmann::json::array({t.id, t.logprob}));
    out.push_back(std::move(step));
  }
  return out;
}

std::vector<TopList> tops_from_json(const nlohmann::json& tops) {
  std::vector<TopList> out;
  for (const auto& step : tops) {
    TopList top;
    for (const auto& e : step) top.push_back({e.at(0).get<std::int32_t>(), e.at(1).get<double>()});
    out.push_back(std::move(top));
  }
  return out;
}

}  // namespace kvsweep::probe
