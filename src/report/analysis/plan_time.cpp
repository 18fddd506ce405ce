#include "kvsweep/report/analysis/plan_time.hpp"

#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

/// Two significant figures, never an exponent: 0.043, 2.1, 12.
std::string seconds_text(double s) { return fixed(s, s >= 10 ? 0 : s >= 1 ? 1 : s >= 0.1 ? 2 : 3); }

}  // namespace

std::string time_line(const sweep::TimeEstimate& estimate, const sweep::RunRates& rates,
                      std::span<const sweep::PlannedProbe> probes, const PlanTimeFacts& facts) {
  std::string out = std::string("time: ") + (facts.adaptive ? "at most " : "") + "~" + duration_text(estimate.seconds);
  out += " (from run " + rates.run + (facts.same_config ? "" : ", another config") + ":";
  std::string sep = " ";
  for (const auto& p : probes) {
    const auto it = rates.item_s.find(p.name);
    if (it == rates.item_s.end()) continue;
    out += sep + seconds_text(it->second) + " s/item for " + p.name;
    sep = ", ";
  }
  out += sep + seconds_text(rates.server_s) + " s to start and stop a server";
  if (facts.slots > 1) out += "; " + std::to_string(facts.slots) + " cells at once";
  out += ")";
  if (!estimate.unrated.empty()) {
    out += "; not counted, no rate in that run:";
    for (std::size_t i = 0; i < estimate.unrated.size(); ++i) out += (i ? ", " : " ") + estimate.unrated[i];
  }
  return out;
}

}  // namespace kvsweep::report
