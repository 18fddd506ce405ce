#include "kvsweep/report/analysis/compare.hpp"

// compare's reasons in words: a check's ReasonCode and numbers (compare.hpp's explain()) as one sentence
// every writer shows, JSON included.

#include <cmath>
#include <string>

#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

std::string explain_change(const Check& c, const Comparison& cmp) {
  switch (c.why) {
    case ReasonCode::no_common_items:
      return "no common items: the baseline has " + std::to_string(c.n_baseline) + " values, this run " +
             std::to_string(c.n_current) + ", on other items";
    case ReasonCode::no_current:
      return "the baseline has " + std::to_string(c.n_baseline) + " values, this run none (outcome " + c.outcome + ", " +
             std::to_string(c.items_failed) + " items failed)";
    case ReasonCode::no_result:
      return "the baseline has " + std::to_string(c.n_baseline) + " values, this run none (outcome " + c.outcome + ")";
    case ReasonCode::no_data: return "no values in either run";
    case ReasonCode::no_cell:
      return "the baseline has " + std::to_string(c.n_baseline) + " values, this run has no such cell (not run: "
             "--only, a shard or another grid?)";
    case ReasonCode::exact:
    case ReasonCode::significant:
    case ReasonCode::not_significant:
    case ReasonCode::underpowered:
    case ReasonCode::host_changed: break;
  }
  const std::string change = "mean " + shortest(c.baseline_mean) + " → " + shortest(c.current_mean) + " (Δ " +
                             (c.delta > 0 ? "+" : "") + shortest(c.delta) + ", tolerance " + shortest(c.tolerance) + ")";
  const std::string test = c.test + " p " + format_p(c.p) + ", Holm " + format_p(c.p_holm);
  if (c.why == ReasonCode::exact) return change + "; deterministic probe, same " + std::to_string(c.n_common) + " items";
  if (c.why == ReasonCode::host_changed)
    return change + "; deterministic probe, same " + std::to_string(c.n_common) +
           " items, computed on another host (llama.cpp's CPU features differ: its kernels round differently and "
           "move near-tied tokens): not a regression of the K/V setting; a baseline from this host class gates it";
  if (c.why == ReasonCode::significant) return change + "; " + test;
  if (c.why == ReasonCode::not_significant) return change + "; " + test + " (not significant)";
  const bool flips = c.test == "mcnemar";
  const auto net = std::llround(std::fabs(c.delta) * static_cast<double>(c.n_common));
  return change + "; " + std::to_string(c.n_common) + " items per cell" +
         (flips ? ", this change is " + std::to_string(net) + " net flips" : std::string()) +
         ": the smallest p " + c.test + " can give is " + format_p(c.min_p) +
         (c.n_needed > 0 ? "; at least " + std::to_string(c.n_needed) + (flips ? " items flipping the same way" : " items") +
                               " are needed"
                         : "") +
         " to detect a change at alpha " + shortest(cmp.alpha) + " (Holm over " + std::to_string(cmp.tested) +
         " tested checks)";
}

}  // namespace

std::string explain(const Check& c, const Comparison& cmp) {
  if (c.missing_items.empty()) return explain_change(c, cmp);
  std::string items;
  for (std::size_t i = 0; i < c.missing_items.size() && i < 3; ++i) items += (i ? ", " : "") + c.missing_items[i];
  if (c.missing_items.size() > 3) items += ", …";
  return explain_change(c, cmp) + "; " + std::to_string(c.missing_items.size()) + " of the baseline's " +
         std::to_string(c.n_baseline) + " items are missing from this cell (failed or not run: " + items +
         "); the rest were compared";
}

}  // namespace kvsweep::report
