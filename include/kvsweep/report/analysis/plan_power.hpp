#pragma once
/// Before a run: whether the items a plan gives each cell can ever settle a gated metric's
/// non-inferiority verdict at its margin, in the best case (every item agrees with the reference).
/// The same numbers tell recommend how many items a proof needs and which margin would settle now.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kvsweep/probe/metric_spec.hpp"

namespace kvsweep::report {

struct SettleOutlook {
  std::string metric;
  probe::MetricKind kind = probe::MetricKind::continuous;
  double margin = 0.0;
  std::size_t items = 0;                    // paired items per cell in the plan
  bool settles = false;                     // non-inferior reachable with `items` when every item agrees
  std::optional<std::size_t> items_needed;  // the fewest items for that (binary), when `items` are too few
  /// The smallest margin at which `items` agreeing items are proof (binary: z²/(n + z²), the Newcombe
  /// bound of an all-concordant table, rounded up to 2 decimals); 0 for the other kinds.
  double margin_settling = 0.0;
  /// The most items the probe can give (a recall corpus's functions); nullopt: a config can list more.
  std::optional<std::size_t> items_max;
};

/// The best case for `items` paired items: a binary metric is bounded by Newcombe's interval of a table
/// whose items all agree (stats::noninferiority_paired_binary: 10 items at margin 0.05 → 52 needed);
/// a count or continuous metric by the paired t bound, which is the mean itself once n >= 2 when every
/// difference is 0 (it then settles from 2 items; spread needs more).
SettleOutlook settle_outlook(const probe::MetricSpec& metric, double margin, std::size_t items, double alpha = 0.05);

/// One line for the plan: "passed (binary, margin 0.05): needs ~52 items even if every item agrees;
/// this plan has 4 — it will stay unknown (recommend --margin passed=0.5 would settle it)".
std::string settle_line(const SettleOutlook& outlook);

/// How many metric names a collapsed line lists before "…".
inline constexpr std::size_t kNamesShown = 4;

/// The lines for one probe: one per verdict class (same kind, margin, items and outcome), in the order
/// each class first appears, so a probe with forty metrics that all need ~52 items says it once:
/// "correct@512, correct@1024, … (40 metrics) (binary, margin 0.05): needs ~52 items …".
std::vector<std::string> settle_lines(const std::vector<SettleOutlook>& outlooks);

}  // namespace kvsweep::report
