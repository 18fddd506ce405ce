#pragma once
/// Checks a `--only` filter against the config before anything starts: every value names something
/// the grid has (with a did-you-mean hint), and the filter selects at least one cell and one probe.

#include <string>
#include <vector>

#include "kvsweep/config/config.hpp"
#include "kvsweep/sweep/plan/plan.hpp"

namespace kvsweep::sweep {

/// Throws core::FatalError when a term's value names no model, variant, K type, V type, cell or probe
/// of the config ("--only k=q4: the grid's K types are …; did you mean 'q4_0'?"), or when the terms
/// of one clause together select no cell of the grid or no probe. `probe_names`: the config's probes, in order.
void check_filter(const Filter& filter, const config::Config& config, const std::vector<std::string>& probe_names);

}  // namespace kvsweep::sweep
