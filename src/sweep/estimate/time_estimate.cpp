#include "kvsweep/sweep/estimate/time_estimate.hpp"

#include <algorithm>
#include <cmath>

namespace kvsweep::sweep {

RunRates rates_from_run(std::string run, const Manifest& manifest, std::span<const probe::Record> records,
                        const std::string& model) {
  RunRates rates;
  rates.run = std::move(run);
  rates.config_hash = manifest.config_hash.value_or("");
  double server_total = 0;
  for (const auto& c : manifest.cell_list()) {
    // A cell skipped (all recorded) or refused before ready started no server: ready_s 0.
    // A duration that is not one (negative, NaN, infinite: a doctored or torn file) is no rate.
    const double ready = c.ready_s.value_or(0.0);
    const double stop = c.stop_s.value_or(0.0);
    if (c.model != model || !(ready > 0) || !std::isfinite(ready) || !(stop >= 0) || !std::isfinite(stop)) continue;
    server_total += ready + stop;
    ++rates.cells;
  }
  if (rates.cells > 0) rates.server_s = server_total / static_cast<double>(rates.cells);

  std::map<std::string, std::pair<double, std::size_t>> sums;  // probe → (seconds, items)
  for (const auto& r : records) {
    if (!r.ok() || r.cell.model != model || !(r.wall_s >= 0) || !std::isfinite(r.wall_s)) continue;
    auto& [seconds, items] = sums[r.probe];
    seconds += r.wall_s;
    ++items;
  }
  for (const auto& [probe, sum] : sums) rates.item_s[probe] = sum.first / static_cast<double>(sum.second);
  return rates;
}

RunRates rates_from_run(std::string run, const nlohmann::json& manifest, std::span<const nlohmann::json> records,
                        const std::string& model) {
  const std::vector<probe::Record> read = probe::records_from_json({records.begin(), records.end()});
  return rates_from_run(std::move(run), Manifest::from_json(manifest).value_or(Manifest{}), read, model);
}

TimeEstimate estimate_time(const RunRates& rates, std::size_t cells, std::span<const PlannedProbe> probes, int slots) {
  TimeEstimate out;
  double per_cell = rates.server_s;
  for (const auto& p : probes) {
    const auto it = rates.item_s.find(p.name);
    if (it == rates.item_s.end()) {
      if (p.items > 0) out.unrated.push_back(p.name);
      continue;
    }
    per_cell += static_cast<double>(p.items) * it->second;
  }
  const std::size_t at_once = static_cast<std::size_t>(std::max(slots, 1));
  const std::size_t busiest = (cells + at_once - 1) / at_once;
  out.seconds = static_cast<double>(busiest) * per_cell;
  return out;
}

}  // namespace kvsweep::sweep
