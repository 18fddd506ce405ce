#include "kvsweep/server/token_logprobs.hpp"

#include <cmath>

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

std::string impossible_logprob(double logprob) {
  // A server's float rounding can put log(1) a hair above 0; 1e-4 is far above rounding, far below +50.
  constexpr double kAboveZero = 1e-4;
  if (std::isnan(logprob)) return "not a number: a log-probability is finite and at most 0";
  if (!std::isfinite(logprob)) return "infinite: a log-probability is finite and at most 0";
  if (logprob > kAboveZero) return "above 0: a log-probability is at most 0 (a probability at most 1)";
  return {};
}

}  // namespace kvsweep::server
