#include "kvsweep/report/analysis/metric_names.hpp"

#include <algorithm>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/core/error.hpp"

namespace kvsweep::report {

void check_metric_name(std::string_view option, std::string_view spec, const std::string& name,
                       const std::vector<ProbeMetrics>& probes, std::string_view where, AcceptedRoles roles) {
  std::vector<std::string> accepted, diagnostics;
  for (const auto& [probe_name, metrics] : probes) {
    for (const auto& m : metrics) {
      const bool ok = roles == AcceptedRoles::any || m.is_judged();
      auto& into = ok ? accepted : diagnostics;
      for (const std::string& key : {m.name, probe_name + "." + m.name})
        if (std::ranges::find(into, key) == into.end()) into.push_back(key);
    }
  }
  if (accepted.empty() && diagnostics.empty()) return;
  if (std::ranges::find(accepted, name) != accepted.end()) return;
  const std::string head = std::string(option) + " " + std::string(spec) + ": ";
  if (std::ranges::find(diagnostics, name) != diagnostics.end()) {
    throw core::FatalError(head + "'" + name + "' is a diagnostic metric of " + std::string(where) +
                           " (reported only, never gated); give a quality metric" +
                           config::did_you_mean_or_list(name, accepted));
  }
  const std::string kind = roles == AcceptedRoles::any ? "metric" : "quality metric";
  throw core::FatalError(head + "no " + kind + " '" + name + "' in " + std::string(where) +
                         config::did_you_mean_or_list(name, accepted));
}

}  // namespace kvsweep::report
