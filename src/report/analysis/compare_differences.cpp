#include "kvsweep/report/analysis/compare_differences.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace kvsweep::report {

std::map<std::string, std::set<std::string>> items_by_probe(const Summary& doc) {
  std::map<std::string, std::set<std::string>> out;
  for (const SummaryResult& r : doc.results) {
    auto& keys = out[r.probe];
    for (const SummaryMetric& m : r.metrics)
      for (const auto& [item, value] : m.finite_values()) keys.insert(item);
  }
  return out;
}

RunDifferences run_differences(const Summary& current, const Summary& baseline) {
  RunDifferences d;
  if (!current.config_hash.empty() && !baseline.config_hash.empty() && current.config_hash != baseline.config_hash) {
    d.config_differs = true;
    d.sentences.push_back("the configs differ: the baseline's hash is " + baseline.config_hash + ", this run's " +
                          current.config_hash + " (other grid, probes, items or server arguments)");
  }
  const auto now = items_by_probe(current);
  const auto before = items_by_probe(baseline);
  for (const auto& [probe, keys] : now) {
    const auto it = before.find(probe);
    if (it == before.end() || it->second == keys || keys.empty() || it->second.empty()) continue;
    const auto common = static_cast<std::size_t>(std::ranges::count_if(keys, [&](const std::string& k) {
      return it->second.contains(k);
    }));
    d.items_differ = true;
    d.sentences.push_back("probe " + probe + " has other items: the baseline " + std::to_string(it->second.size()) +
                          ", this run " + std::to_string(keys.size()) + ", " + std::to_string(common) +
                          " in common" + (common == 0 ? " (nothing to compare)" : " (only those are compared)"));
  }
  return d;
}

}  // namespace kvsweep::report
