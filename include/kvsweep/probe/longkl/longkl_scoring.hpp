#pragma once
/// The longkl probe's records: a window's positions scored against the reference's lists, and the
/// response read back (by the probe for the reference's lists, by the report for its figure).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/top_list.hpp"

namespace kvsweep::probe {

/// One top list per answer (its single generated token's), checked (top_list_of).
core::Expected<TopList> top_list(const server::CompletionResponse& answer);

/// A window's response as recorded: per position its KL lower bound, the reference top-1's Δp,
/// whether the top-1 agreed, how many of the reference's ids the cell's list lacked; the lists.
struct LongKlResponse {
  std::string tokens_sha256;
  std::vector<int> positions;
  std::vector<TopList> lists;
  std::vector<double> kl;
  std::vector<double> dp;
  std::vector<int> same_top1;
  std::vector<int> outside;
  int evaluated = 0;         // tokens the window's own requests evaluated (the server's prompt_n)
  int replayed_tokens = 0;   // tokens evaluated again for earlier windows (a resumed or restarted cell)
  /// Fails (parse) naming the missing or mistyped field; the per-position arrays must be as long as positions.
  static core::Expected<LongKlResponse> from_json(const nlohmann::json& response);
};

/// The reference cell's ok record of `key`, read.
core::Expected<LongKlResponse> read_longkl_reference(const std::vector<Record>* records, const std::string& key);

/// The window's result: each position's cell list scored against the reference's (score::top_kl_bound),
/// the response (positions, lists, per-position values) and the metrics mean_kl, max_kl,
/// same_top1_rate, mean_dp, outside.
ItemResult score_window(const std::vector<TopList>& reference, const std::vector<TopList>& cell,
                        const std::vector<int>& positions);

}  // namespace kvsweep::probe
