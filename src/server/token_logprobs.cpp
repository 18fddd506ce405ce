#include "kvsweep/server/token_logprobs.hpp"

namespace kvsweep::server {

std::vector<TokenLogprob> read_token_logprobs(const nlohmann::json& entries) {
  std::vector<TokenLogprob> out;
  if (!entries.is_array()) return out;
  for (const auto& e : entries) {
    TokenLogprob tp;
    tp.id = e.value("id", -1);
    tp.token = e.value("token", "");
    tp.logprob = e.value("logprob", 0.0);
    if (const auto top = e.find("top_logprobs"); top != e.end() && top->is_array()) {
      for (const auto& t : *top) tp.top.push_back({t.value("id", -1), t.value("token", ""), t.value("logprob", 0.0)});
    }
    out.push_back(std::move(tp));
  }
  return out;
}

}  // namespace kvsweep::server
