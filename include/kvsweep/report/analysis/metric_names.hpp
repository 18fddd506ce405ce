#pragma once
/// Checks the metric names a user types (`recommend --margin`, `compare --tolerance`, `compare
/// --metric`) against the metrics a run declares, so that a typo fails with a did-you-mean hint
/// instead of being ignored.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvsweep/probe/metric_spec.hpp"

namespace kvsweep::report {

/// A probe's name and its declared metrics.
using ProbeMetrics = std::pair<std::string, std::vector<probe::MetricSpec>>;

/// Whether a name may name a diagnostic metric too (compare --metric), or only quality ones (margins
/// and tolerances, which only gated metrics use).
enum class AcceptedRoles { quality_only, any };

/// Throws core::FatalError "<option> <spec>: no quality metric 'pased' in <where> (did you mean
/// 'passed'?)" unless `name` ("metric" or "probe.metric") names a metric of `probes` with an accepted
/// role; a diagnostic one under quality_only is named as such. Nothing is checked when `probes`
/// declares no metric at all (nothing to check against).
void check_metric_name(std::string_view option, std::string_view spec, const std::string& name,
                       const std::vector<ProbeMetrics>& probes, std::string_view where, AcceptedRoles roles);

}  // namespace kvsweep::report
