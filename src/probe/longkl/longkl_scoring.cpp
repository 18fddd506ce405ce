#include "kvsweep/probe/longkl/longkl_scoring.hpp"

#include <algorithm>

#include "kvsweep/score/top_kl.hpp"

namespace kvsweep::probe {

using nlohmann::json;

core::Expected<TopList> top_list(const server::CompletionResponse& answer) {
  if (answer.probs.empty())
    return core::fail(core::ErrorKind::parse, "a one-token request returned no completion_probabilities");
  return top_list_of(answer.probs.front(), "longkl");
}

core::Expected<LongKlResponse> LongKlResponse::from_json(const json& r) {
  try {
    LongKlResponse out;
    out.tokens_sha256 = r.at("tokens_sha256").get<std::string>();
    out.positions = r.at("positions").get<std::vector<int>>();
    out.lists = tops_from_json(r.at("top"));
    out.kl = r.at("kl").get<std::vector<double>>();
    out.dp = r.at("dp").get<std::vector<double>>();
    out.same_top1 = r.at("same_top1").get<std::vector<int>>();
    out.outside = r.at("outside").get<std::vector<int>>();
    out.evaluated = r.value("evaluated", 0);
    out.replayed_tokens = r.value("replayed_tokens", 0);
    const std::size_t n = out.positions.size();
    if (out.lists.size() != n || out.kl.size() != n || out.dp.size() != n || out.same_top1.size() != n ||
        out.outside.size() != n)
      return core::fail(core::ErrorKind::parse, "a longkl response's per-position arrays differ in length from its " +
                                                    std::to_string(n) + " positions");
    return out;
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("a longkl response lacks a field or has it mistyped (") +
                                                  e.what() + ")");
  }
}

core::Expected<LongKlResponse> read_longkl_reference(const std::vector<Record>* records, const std::string& key) {
  if (records) {
    for (const auto& r : *records) {
      if (r.item != key || !r.ok()) continue;
      auto read = LongKlResponse::from_json(r.response);
      if (!read) return core::fail(read.error().kind, "the reference record of " + key + ": " + read.error().message);
      return read;
    }
  }
  return core::fail(core::ErrorKind::invalid, "no ok record of the reference cell for item " + key +
                                                  " (did its longkl item fail?); nothing to compare with");
}

ItemResult score_window(const std::vector<TopList>& reference, const std::vector<TopList>& cell,
                        const std::vector<int>& positions) {
  ItemResult out;
  std::vector<double> kl, dp;
  std::vector<int> same, outside;
  for (std::size_t i = 0; i < cell.size() && i < reference.size(); ++i) {
    const score::TopKlBound b = score::top_kl_bound(reference[i], cell[i]);
    kl.push_back(b.kl);
    dp.push_back(b.dp);
    same.push_back(b.same_top1 ? 1 : 0);
    outside.push_back(b.outside);
  }
  double sum_kl = 0, max_kl = 0, sum_dp = 0;
  int agree = 0, missing = 0;
  for (std::size_t i = 0; i < kl.size(); ++i) {
    sum_kl += kl[i];
    max_kl = std::max(max_kl, kl[i]);
    sum_dp += dp[i];
    agree += same[i];
    missing += outside[i];
  }
  const double n = static_cast<double>(std::max<std::size_t>(kl.size(), 1));
  out.metrics = {{"mean_kl", sum_kl / n}, {"max_kl", max_kl}, {"same_top1_rate", agree / n},
                 {"mean_dp", sum_dp / n}, {"outside", missing}};
  out.response = {{"positions", positions}, {"top", tops_to_json(cell)}, {"kl", kl},
                  {"dp", dp},               {"same_top1", same},         {"outside", outside}};
  return out;
}

}  // namespace kvsweep::probe
