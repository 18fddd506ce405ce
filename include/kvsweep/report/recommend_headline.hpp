#pragma once
/// recommend's verdict in one sentence, leading with what was seen: a recommended cell; "no difference
/// seen, not enough items to prove it" (with the cheapest such cell, the items a proof needs and the
/// margin that would settle it now); or "differs from the reference". recommend, report.md and
/// index.html print the same words.

#include <string>
#include <utility>
#include <vector>

#include "kvsweep/report/recommend.hpp"

namespace kvsweep::report {

struct RecommendHeadline {
  enum class Kind { recommended, not_proven, differs, no_reference };
  Kind kind = Kind::no_reference;
  std::string verdict;   // "Recommended: -ctk q8_0 -ctv f16", "No difference seen, not enough items to prove it", …
  std::string sentence;  // what it rests on and what to do; plain text (no Markdown)
};

/// The headline of one model. `not_proven`: no cell is recommended, but some non-reference cell has no
/// gated metric worse than the reference (every oriented estimate >= 0) and none inferior; the
/// cheapest of them (KV bytes per token) is named with, per unknown metric, the items a proof needs
/// (MetricVerdict's items_needed) and the margin at which its bound clears now (−lower, rounded up
/// to 2 decimals). `differs`: every cell is worse on some gated metric, or inferior.
RecommendHeadline recommend_headline(const RunData& data, const ModelRecommendation& model);

/// recommend(data) with the default margins, as (model or model/variant, headline) per model: the
/// verdict report.md and index.html lead with.
std::vector<std::pair<std::string, RecommendHeadline>> verdicts(const RunData& data);

}  // namespace kvsweep::report
