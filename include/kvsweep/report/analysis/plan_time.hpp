#pragma once
/// Before a run: the plan's time as a previous run of the same model measured it, as one line.

#include <span>
#include <string>

#include "kvsweep/sweep/estimate/time_estimate.hpp"

namespace kvsweep::report {

/// What the line says besides the figures.
struct PlanTimeFacts {
  bool same_config = true;  // the previous run had the plan's config hash
  bool adaptive = false;    // the plan may stop cells early: the estimate is a ceiling
  int slots = 1;            // cells run at once
};

/// "time: ~4m10s (from run it-20261125T051200Z: 2.1 s/item for recall, 6.0 s to start and stop a
/// server)", with "another config" when the hashes differ, the probes without a rate named, and
/// "at most" for an adaptive plan.
std::string time_line(const sweep::TimeEstimate& estimate, const sweep::RunRates& rates,
                      std::span<const sweep::PlannedProbe> probes, const PlanTimeFacts& facts);

}  // namespace kvsweep::report
