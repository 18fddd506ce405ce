#pragma once
/// recommend's verdict in one sentence, leading with what was seen: a recommended cell; "no difference
/// seen, not enough items to prove it" (with the cheapest such cell, the items a proof needs and the
/// margin that would settle it now); "a difference seen, not proven" (its size and the items that would
/// settle it); "worse than the reference" only when every other cell has an `inferior` verdict. The
/// analysis returns values; explain() alone words them, so recommend, report.md, index.html and the
/// summary print the same words.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvsweep/report/analysis/recommend.hpp"
#include "kvsweep/stats/noninferiority.hpp"

namespace kvsweep::report {

/// The headline as values: which case it is, the cells it names and what its words are made of. The
/// analysis (recommend_headline) decides it; explain() words it.
struct RecommendHeadline {
  /// `difference_seen`: no cell has nothing worse seen, and some cell with no `inferior` verdict is
  /// below the reference on a gated metric. `inferior`: every other cell has an `inferior` verdict or
  /// missed a probe, at least one the former. `incomplete`: every other cell missed a probe.
  /// `no_other_cell`: only the reference answered. `nothing_measured`: the reference has no ok record
  /// (ModelRecommendation::nothing_measured): no verdict, no advice.
  /// nothing_gated: the cells answered, but no metric of the run gates (only changes were measured, which
  /// say how the output differs, not whether it got worse): nothing is advised until one is named.
  /// over_limits: a cell is non-inferior on every gated metric, yet --vram or --max-slowdown left
  /// every such cell out; `cell` is the cheapest of them and `left_out` says which limit and why.
  enum class Kind { recommended, not_proven, difference_seen, inferior, incomplete, no_other_cell, no_reference, nothing_measured,
                    nothing_gated, over_limits };
  Kind kind = Kind::no_reference;
  std::optional<std::size_t> reference;  // index into RunData::cells()
  /// recommended: that cell; not_proven: the cheapest cell with nothing worse seen; difference_seen: the
  /// cheapest cell below the reference without an inferior verdict.
  std::optional<std::size_t> cell;
  std::size_t gated = 0;       // recommended: the cell's gated metrics
  std::string left_out;        // over_limits: "--max-slowdown: tg 0.50× < 0.90×" or "--vram: needs …"
  bool no_difference = false;  // not_proven: every estimate is 0 (else only none below 0)
  std::size_t items = 0;       // not_proven: the most items behind one of the cell's metrics
  /// The other cells by what keeps each from the answer, counted once in this order: an `inferior`
  /// verdict on some gated metric (the only cells called worse); a probe the reference answered and it
  /// did not (or no gated metric); a gated metric below the reference, not proven.
  std::size_t cells_inferior = 0;
  std::size_t cells_incomplete = 0;
  std::size_t cells_below = 0;
  /// difference_seen: a gated metric of the named cell below the reference (oriented estimate < 0).
  struct Below {
    std::string metric;  // "probe.metric"
    double change = 0.0;  // the mean change cell − reference in the metric's units (its bad direction)
    std::size_t items = 0;  // paired items it rests on
    stats::Decision verdict = stats::Decision::unknown;  // unknown, or non_inferior (within the margin)
    double margin = 0.0;
    std::optional<std::size_t> items_needed;  // unknown: the items that would settle it, when computed
    std::optional<std::size_t> items_max;     // the most items its probe can give (a corpus's functions)
  };
  std::vector<Below> below;
  /// not_proven: a gated metric of the cell whose verdict is unknown.
  struct Unsettled {
    std::string metric;                       // "probe.metric"
    std::optional<std::size_t> items_needed;  // for a proof at `margin`, when computed
    double margin = 0.0;
    double settling_margin = 0.0;  // the margin at which the bound clears now; 0: none
    probe::MetricKind kind = probe::MetricKind::continuous;  // for the margin's promise in its units
    std::optional<std::size_t> items_max;  // the most items its probe can give (a corpus's functions)
  };
  std::vector<Unsettled> unsettled;
  /// recommended: the margins the user set (--margin) that the verdicts rest on, each worded with what
  /// it promises; a recommendation at a margin the user widened says so.
  struct SetMargin {
    std::string metric;  // "probe.metric"
    probe::MetricKind kind = probe::MetricKind::continuous;
    double margin = 0.0;
  };
  std::vector<SetMargin> set_margins;
};

/// A headline in words: the verdict ("Recommended: -ctk q8_0 -ctv f16", "No difference seen, not
/// enough items to prove it", …) and the sentence (what it rests on and what to do; plain text). A cell
/// is named as the run's server sets it (cache_setting: "OLLAMA_KV_CACHE_TYPE=q8_0" on Ollama).
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
/// to 2 decimals). Otherwise the other cells are counted by what keeps them out (RecommendHeadline's
/// cells_*) and, when some cell is below the reference without an `inferior` verdict, the cheapest of
/// them is named with each metric below (`difference_seen`).
RecommendHeadline recommend_headline(const ModelRecommendation& model);

/// recommend(data) with the default margins, as (model or model/variant, headline) per model: the
/// verdict report.md and index.html lead with.
std::vector<std::pair<std::string, RecommendHeadline>> verdicts(const RunData& data);

}  // namespace kvsweep::report
