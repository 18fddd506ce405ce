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
#include <string_view>
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
  /// What kind of evidence the answer rests on, worded by role (explain: "q8_0/q8_0: changes the wording of
  /// 3 of 12 answers; no loss on the answer key; KLD 0.0043 within 0.01"): the judged metrics of the cell
  /// named (`cell`), or, when every other cell is inferior, of the cheapest inferior one.
  std::optional<std::size_t> evidence_cell;
  std::vector<Evidence> evidence;
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

/// One metric's evidence in words, by its role, or empty when the headline leaves it out. Quality and
/// distance are said where they gate (what the verdict rests on); a 0/1 change always (how many answers
/// differ, which the verdict deliberately does not count as a loss):
/// - quality, 0/1: "no loss on the answer key" / "loses 4 of 40 answers on the answer key" (items the
///   reference had right and the cell not; gains added when any);
/// - quality, other kinds: "no loss on <label> (+0.012, mean of 16 chains)" / "loses 0.050 on <label> (…)";
/// - distance: "KLD 0.0043 within 0.01" / "KLD 0.070 over 0.01" (the cell's mean against its margin);
/// - change, 0/1: "changes the wording of 3 of 12 answers" / "keeps the wording of all 12 answers";
///   other kinds only when gated: "<label> −12.5 (mean of 12 answers)";
/// - diagnostic and cost: left out.
/// <label> and the items' noun come from metric_label (a rule keyed on the metric's name: `correct` is "the
/// answer key" in any probe), else the name itself: a new metric is worded by its role without new code.
std::string evidence_text(const Evidence& evidence);

/// A metric's name in the headline's words and the noun of its items: {"the answer key", "answers"} for
/// `correct`, {"KLD", ""} for `mean_kld`; {"<probe>.<metric>", "items"} for a name without a rule.
struct MetricLabel {
  std::string label;
  std::string items;
};
MetricLabel metric_label(std::string_view probe, std::string_view metric);

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
