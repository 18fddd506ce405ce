#pragma once
/// recommend's verdict in one sentence, leading with what was seen: a recommended cell; "no difference
/// seen, not enough items to prove it" (with the cheapest such cell, the items a proof needs and the
/// margin that would settle it now); or "differs from the reference". The analysis returns values;
/// explain() alone words them, so recommend, report.md, index.html and the summary print the same words.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvsweep/report/recommend.hpp"

namespace kvsweep::report {

/// The headline as values: which case it is, the cells it names and what its words are made of. The
/// analysis (recommend_headline) decides it; explain() words it.
struct RecommendHeadline {
  enum class Kind { recommended, not_proven, differs, no_reference };
  Kind kind = Kind::no_reference;
  std::optional<std::size_t> reference;  // index into RunData::cells()
  /// recommended: that cell; not_proven: the cheapest cell with nothing worse seen.
  std::optional<std::size_t> cell;
  std::size_t gated = 0;       // recommended: the cell's gated metrics
  bool no_difference = false;  // not_proven: every estimate is 0 (else only none below 0)
  std::size_t items = 0;       // not_proven: the most items behind one of the cell's metrics
  bool others_answered = false;  // differs: some cell other than the reference answered
  /// not_proven: a gated metric of the cell whose verdict is unknown.
  struct Unsettled {
    std::string metric;                       // "probe.metric"
    std::optional<std::size_t> items_needed;  // for a proof at `margin`, when computed
    double margin = 0.0;
    double settling_margin = 0.0;  // the margin at which the bound clears now; 0: none
  };
  std::vector<Unsettled> unsettled;
};

/// A headline in words: the verdict ("Recommended: -ctk q8_0 -ctv f16", "No difference seen, not
/// enough items to prove it", …) and the sentence (what it rests on and what to do; plain text).
struct HeadlineWords {
  std::string verdict;
  std::string sentence;
};

/// The one wording of a headline: recommend (Markdown and JSON), report.md, index.html and the summary.
HeadlineWords explain(const RecommendHeadline& headline, const RunData& data);

/// The headline of one model. `not_proven`: no cell is recommended, but some non-reference cell has no
/// gated metric worse than the reference (every oriented estimate >= 0) and none inferior; the
/// cheapest of them (KV bytes per token) is named with, per unknown metric, the items a proof needs
/// (MetricVerdict's items_needed) and the margin at which its bound clears now (−lower, rounded up
/// to 2 decimals). `differs`: every cell is worse on some gated metric, or inferior.
RecommendHeadline recommend_headline(const ModelRecommendation& model);

/// recommend(data) with the default margins, as (model or model/variant, headline) per model: the
/// verdict report.md and index.html lead with.
std::vector<std::pair<std::string, RecommendHeadline>> verdicts(const RunData& data);

}  // namespace kvsweep::report
