#pragma once
/// What differs between a run and its baseline before any check is made: the config (its hash) and,
/// per probe, the items — so that compare says so first instead of reporting the difference as
/// regressions.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "kvsweep/report/analysis/summary.hpp"

namespace kvsweep::report {

struct RunDifferences {
  std::vector<std::string> sentences;  // one per difference, in the order: config, then probes by name
  bool config_differs = false;         // both documents carry a config hash and they differ
  bool items_differ = false;           // some probe both runs have holds different item keys
};

/// Probe → every item key the document holds a value for, in any cell and metric.
std::map<std::string, std::set<std::string>> items_by_probe(const Summary& doc);

/// The config hashes (when both documents carry one) and, for each probe both have, the item keys
/// either run holds a value for in any cell (so a failed cell or an adaptive stop is not a difference).
RunDifferences run_differences(const Summary& current, const Summary& baseline);

}  // namespace kvsweep::report
