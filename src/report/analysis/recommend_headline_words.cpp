#include "kvsweep/report/analysis/recommend_headline.hpp"

// The headline in words: each RecommendHeadline and the evidence of the cell it names, worded by role
// for every writer (explain(), evidence_text(), metric_label()).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "kvsweep/report/format.hpp"
#include "kvsweep/report/input/cache_setting.hpp"

namespace kvsweep::report {

namespace {

/// How the user sets the cell's types on the run's server: "-ctk q8_0 -ctv f16", "OLLAMA_KV_CACHE_TYPE=q8_0".
std::string setting(const RunData& data, const CellDef& c) { return cache_setting(data.manifest(), c).text; }

std::string cells(std::size_t n) { return std::to_string(n) + (n == 1 ? " cell" : " cells"); }

std::string missed(std::size_t n) {
  return cells(n) + (n == 1 ? " missed a probe" : " missed probes") + " the reference answered";
}

/// What to change when more items than the corpus holds would be needed.
constexpr const char* kCannotSettle =
    " More items cannot settle it with this corpus: give it more functions (more files, or a larger -c where the "
    "context limits it), or gate on a metric that settles with fewer";

/// Whether `needed` items are more than the probe can give.
bool beyond(std::optional<std::size_t> needed, std::optional<std::size_t> most) { return needed && most && *needed > *most; }

std::string beyond_text(std::size_t most) {
  return ", more than the " + std::to_string(most) + " functions its corpus holds";
}

/// What a margin promises, in the metric's units: "a cell up to 41 points of pass rate below f16/f16 passes".
std::string promise(probe::MetricKind kind, double margin, const std::string& ref) {
  if (kind == probe::MetricKind::binary)
    return "a cell up to " + shortest(std::round(margin * 1000.0) / 10.0) + " points of pass rate below " + ref + " passes";
  return "a cell whose mean is up to " + shortest(margin) + " below " + ref + "'s passes";
}

HeadlineWords not_proven_words(const RecommendHeadline& h, const RunData& data, const CellDef& ref) {
  std::string needs, margins;
  bool more_helps = false;
  for (const auto& u : h.unsettled) {
    needs += (needs.empty() ? "" : "; ") + u.metric + " " +
             (u.items_needed ? "~" + std::to_string(*u.items_needed) + " items" : std::string("more items")) +
             " at margin " + shortest(u.margin) + (beyond(u.items_needed, u.items_max) ? beyond_text(*u.items_max) : "");
    more_helps = more_helps || !beyond(u.items_needed, u.items_max);
    if (u.settling_margin > 0)
      margins += std::string(margins.empty() ? "" : "; ") + "--margin " + u.metric + "=" + shortest(u.settling_margin) +
                 " (" + promise(u.kind, u.settling_margin, ref.types()) + ")";
  }
  const std::string advice =
      more_helps ? " Run more items." : std::string(kCannotSettle) + " (recommend --gate, or the probe's \"gate\").";
  return {h.no_difference ? "No difference seen, not enough items to prove it"
                          : "Nothing worse seen, not enough items to prove it",
          setting(data, data.cells()[*h.cell]) + " (the cheapest such cell) answered " +
              (h.no_difference ? "like " : "no worse than ") + ref.types() + " on every gated metric over " +
              std::to_string(h.items) + " items, but non-inferiority is not proven: " + needs + "." + advice +
              (margins.empty() ? std::string()
                               : " A wider margin would settle it now, promising less: " + margins + ".") +
              " Until then keep " + setting(data, ref) + "."};
}

/// "recall.primary_matched -2.00 (mean of 4 paired items; ~12 items would settle it at margin 1)".
std::string below_text(const RecommendHeadline::Below& b) {
  const std::string change = signed_fixed(b.change, 2, "by an unmeasured amount");
  const std::string why = b.verdict == stats::Decision::non_inferior ? "; within its margin " + shortest(b.margin) + ", proven"
                          : b.items_needed ? "; ~" + std::to_string(*b.items_needed) + " items would settle it at margin " +
                                                 shortest(b.margin) +
                                                 (beyond(b.items_needed, b.items_max) ? beyond_text(*b.items_max) : "")
                                           : "; margin " + shortest(b.margin);
  return b.metric + " " + change + " (mean of " + std::to_string(b.items) + " paired items" + why + ")";
}

/// What keeps the cells not named out: " Of the other cells, 2 are inferior … and 1 missed a probe.".
std::string others_text(const RecommendHeadline& h) {
  std::vector<std::string> parts;
  if (h.cells_inferior > 0)
    parts.push_back(std::to_string(h.cells_inferior) + (h.cells_inferior == 1 ? " is" : " are") +
                    " inferior on some gated metric (worse than its margin allows, proven)");
  if (h.cells_incomplete > 0)
    parts.push_back(std::to_string(h.cells_incomplete) + (h.cells_incomplete == 1 ? " missed a probe" : " missed probes"));
  if (h.cells_below > 1)
    parts.push_back(std::to_string(h.cells_below - 1) + (h.cells_below == 2 ? " is" : " are") + " also below it, not proven");
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += (i == 0 ? " Of the other cells, " : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out.empty() ? out : out + ".";
}

HeadlineWords difference_words(const RecommendHeadline& h, const RunData& data, const CellDef& ref) {
  std::string seen, open;
  bool more_helps = false;
  for (const auto& b : h.below) {
    seen += (seen.empty() ? "" : "; ") + below_text(b);
    more_helps = more_helps || (b.verdict == stats::Decision::unknown && !beyond(b.items_needed, b.items_max));
  }
  // One probe's metrics that need the same items at the same margin are said once:
  // "toolcall.{all_correct, parsed, right_tool} (~52 items would settle each at margin 0.05)".
  for (std::size_t i = 0; i < h.unsettled.size();) {
    const auto& u = h.unsettled[i];
    const std::string probe = u.metric.substr(0, u.metric.find('.'));
    std::vector<std::string> names{u.metric.substr(probe.size() + 1)};
    std::size_t j = i + 1;
    for (; j < h.unsettled.size(); ++j) {
      const auto& w = h.unsettled[j];
      if (!w.metric.starts_with(probe + ".") || w.items_needed != u.items_needed || w.margin != u.margin) break;
      names.push_back(w.metric.substr(probe.size() + 1));
    }
    std::string list = names.front();
    for (std::size_t k = 1; k < names.size(); ++k) list += ", " + names[k];
    open += (open.empty() ? "" : "; ") + probe + "." + (names.size() > 1 ? "{" + list + "}" : list) + " (" +
            (u.items_needed ? "~" + std::to_string(*u.items_needed) + " items" : std::string("more items")) +
            " would settle " + (names.size() > 1 ? "each" : "it") + " at margin " + shortest(u.margin) +
            (beyond(u.items_needed, u.items_max) ? beyond_text(*u.items_max) : "") + ")";
    for (std::size_t k = i; k < j; ++k)
      more_helps = more_helps || !beyond(h.unsettled[k].items_needed, h.unsettled[k].items_max);
    i = j;
  }
  return {"A difference seen, not proven",
          setting(data, data.cells()[*h.cell]) + " (the cheapest cell not proven worse) moved from " + ref.types() +
              " in the bad direction on " + seen + ", but no verdict is inferior: the difference may be chance." +
              (open.empty() ? std::string() : " Not settled yet: " + open + ".") + others_text(h) +
              (more_helps ? " Until more items settle it keep " + setting(data, ref) + "."
                          : std::string(kCannotSettle) + ". Until then keep " + setting(data, ref) + ".")};
}

/// "Worse" only when every other cell is inferior; with cells that missed a probe beside them, both counted.
HeadlineWords inferior_words(const RecommendHeadline& h, const RunData& data, const CellDef& ref) {
  const bool all = h.cells_incomplete == 0;
  return {all ? "Worse than the reference" : "No cell to recommend",
          (all ? std::string("every other cell is") : cells(h.cells_inferior) + (h.cells_inferior == 1 ? " is" : " are")) +
              " inferior to " + ref.types() + " on some gated metric (worse than its margin allows, proven)" +
              (all ? std::string() : " and " + missed(h.cells_incomplete)) + ": keep the reference " + setting(data, ref) + "."};
}

/// No advice: the run's judged metrics are all changes — how the output differs, not whether it got worse.
HeadlineWords nothing_gated_words(const RunData& data) {
  std::string changes;
  for (const auto& p : data.probes())
    for (const auto& m : p.metrics)
      if (m.is_judged() && !m.gated_by_default()) changes += (changes.empty() ? "" : ", ") + p.name + "." + m.name;
  return {"Nothing gated",
          "this run measured only how the output changes (" + (changes.empty() ? std::string("no judged metric") : changes) +
              "), not whether it got worse: a reworded answer is a change, not a loss. Nothing is advised; name the "
              "changes that matter to you with recommend --gate (or a probe's \"gate\"), or add a probe scored "
              "against ground truth (a prompt's \"expect\": the answer key; recall, toolcall) or a distance with a threshold (kld, divergence's mean_kl)."};
}

/// No advice: a reference that answered nothing says nothing of any K/V setting, its own included.
HeadlineWords nothing_measured_words(const CellDef& ref) {
  const std::string first_line = ref.message.substr(0, ref.message.find('\n'));
  return {"Nothing measured",
          "the reference " + ref.types() + " has no ok record (" + ref.outcome +
              (first_line.empty() ? std::string() : ": " + first_line) +
              "), so no cell can be compared with it and nothing is advised. Fix what failed (the Cell outcomes in "
              "report.md) and run again."};
}

/// The words before the server's note (explain).
HeadlineWords words(const RecommendHeadline& h, const RunData& data, const CellDef& ref) {
  switch (h.kind) {
    case RecommendHeadline::Kind::recommended: {
      std::string set;
      for (const auto& m : h.set_margins)
        set += std::string(set.empty() ? "" : "; ") + m.metric + " " + shortest(m.margin) + ": " +
               promise(m.kind, m.margin, ref.types());
      return {"Recommended: " + setting(data, data.cells()[*h.cell]),
              "non-inferior to " + ref.types() +
                  (h.gated == 1 ? std::string(" on its one gated metric")
                                : " on all " + std::to_string(h.gated) + " gated metrics") +
                  (set.empty() ? std::string(".") : ", at margins you set (a wider margin is a weaker promise): " + set + ".")};
    }
    case RecommendHeadline::Kind::not_proven: return not_proven_words(h, data, ref);
    case RecommendHeadline::Kind::difference_seen: return difference_words(h, data, ref);
    case RecommendHeadline::Kind::inferior: return inferior_words(h, data, ref);
    case RecommendHeadline::Kind::incomplete:
      return {"No cell to recommend",
              "every other cell missed a probe " + ref.types() + " answered: keep the reference " + setting(data, ref) + "."};
    case RecommendHeadline::Kind::no_other_cell:
      return {"No other cell answered", "nothing to compare " + ref.types() + " with: keep the reference " + setting(data, ref) + "."};
    case RecommendHeadline::Kind::nothing_measured: return nothing_measured_words(ref);
    case RecommendHeadline::Kind::nothing_gated: return nothing_gated_words(data);
    case RecommendHeadline::Kind::over_limits:
      return {"Nothing within your limits",
              setting(data, data.cells()[*h.cell]) + " (the cheapest such cell) is non-inferior to " + ref.types() +
                  (h.gated == 1 ? std::string(" on its one gated metric") : " on all " + std::to_string(h.gated) + " gated metrics") +
                  ", but a limit you set leaves it out (" + (h.left_out.empty() ? std::string("--vram, --max-slowdown") : h.left_out) +
                  "): keep the reference " + setting(data, ref) + ", or relax the limit."};
    case RecommendHeadline::Kind::no_reference: break;
  }
  return {"No reference cell", "nothing to compare against."};
}

}  // namespace

MetricLabel metric_label(std::string_view probe, std::string_view metric) {
  // Keyed on the metric's name (any probe that emits it): the words a user reads in the headline. A name
  // without a rule is said as probe.metric, worded by its role all the same.
  struct Rule {
    std::string_view metric, label, items;
  };
  static constexpr Rule kRules[] = {
      {"correct", "the answer key", "answers"},
      {"match_reference", "the wording", "answers"},
      {"diverged", "the greedy continuation", "prompts"},
      {"passed", "recall", "items"},
      {"primary_matched", "recalled lines", "items"},
      {"final_similarity", "telephone's final similarity to the original", "chains"},
      {"mean_similarity", "telephone's mean similarity to the original", "chains"},
      {"mean_kld", "KLD", ""},
      {"kld_p999", "KLD 99.9 %", ""},
      {"mean_kl", "mean KL per token", ""},
      {"max_kl", "max KL per token", ""},
      {"same_top_p", "same top token", ""},
      {"same_top1_rate", "same top-1 token", ""},
      {"rms_dp", "RMS Δp", ""},
      {"ppl_ratio", "PPL ratio", ""},
  };
  // longkl's KL (its default name): a lower bound at depth, never read as divergence's per-step KL.
  if (probe.starts_with("longkl") && metric.starts_with("mean_kl"))
    return {metric == "mean_kl" ? "KL by depth (a lower bound)"
                                : "KL at " + std::string(metric.substr(8)) + " (a lower bound)",
            ""};
  for (const auto& r : kRules)
    if (r.metric == metric) return {std::string(r.label), std::string(r.items)};
  return {std::string(probe) + "." + std::string(metric), "items"};
}

namespace {

/// Two significant digits, as distances are quoted ("0.0043", "0.07", "1.2").
std::string two_digits(double v) {
  if (!std::isfinite(v)) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

/// " of 12 answers" / " of 12" (a label without a noun).
std::string of_items(std::size_t n, const MetricLabel& l) {
  return " of " + std::to_string(n) + (l.items.empty() ? std::string() : " " + l.items);
}

/// "(+0.012, mean of 16 chains)".
std::string mean_of(const Evidence& e, const MetricLabel& l) {
  return "(" + signed_fixed(e.change, decimals_for(std::vector<double>{e.cell_mean, e.reference_mean})) + ", mean" +
         of_items(e.n, l) + ")";
}

}  // namespace

std::string evidence_text(const Evidence& e) {
  if (e.n == 0) return {};
  const MetricLabel l = metric_label(e.probe, e.metric);
  switch (e.role) {
    case probe::MetricRole::quality: {
      if (!e.verdict) return {};  // not what the verdict rests on (--gate or the probe's "gate" left it out)
      if (e.kind == probe::MetricKind::binary) {
        const std::string gains = e.better > 0 ? "gains " + std::to_string(e.better) : std::string();
        if (e.worse == 0) return "no loss on " + l.label + (gains.empty() ? std::string() : " (" + gains + of_items(e.n, l) + ")");
        return "loses " + std::to_string(e.worse) + of_items(e.n, l) + " on " + l.label +
               (gains.empty() ? std::string() : ", " + gains);
      }
      if (e.change >= 0.0) return "no loss on " + l.label + " " + mean_of(e, l);
      return "loses " + fixed(-e.change, decimals_for(std::vector<double>{e.cell_mean, e.reference_mean})) + " on " +
             l.label + " (mean" + of_items(e.n, l) + ")";
    }
    case probe::MetricRole::distance: {
      if (!e.verdict || !e.margin) return {};
      // The threshold is how far past the reference's value the cell may move.
      const bool within = -e.change <= *e.margin;
      return l.label + " " + two_digits(e.cell_mean) + (within ? " within " : " over ") + shortest(*e.margin);
    }
    case probe::MetricRole::change: {
      if (e.kind == probe::MetricKind::binary) {
        if (e.worse == 0) return "keeps " + l.label + " of all" + of_items(e.n, l).substr(3);
        return "changes " + l.label + " of " + std::to_string(e.worse) + of_items(e.n, l);
      }
      if (!e.verdict) return {};
      return l.label + " " + mean_of(e, l);
    }
    case probe::MetricRole::diagnostic:
    case probe::MetricRole::cost: break;
  }
  return {};
}

HeadlineWords explain(const RecommendHeadline& h, const RunData& data) {
  if (h.kind == RecommendHeadline::Kind::no_reference || !h.reference) return {"No reference cell", "nothing to compare against."};
  const CellDef& ref = data.cells()[*h.reference];
  HeadlineWords out = words(h, data, ref);
  // Which kind of evidence the answer rests on, by role: changes first (how the output differs, never a
  // loss by themselves), then quality (against ground truth), then distances (against their threshold).
  if (h.evidence_cell) {
    std::vector<std::string> said, no_loss;
    // A metric two probes emit (two complete probes' match_reference) is said with its probe's name.
    std::map<std::string, int> emitted;
    for (const auto& e : h.evidence)
      if (!evidence_text(e).empty()) ++emitted[e.metric];
    for (const auto role : {probe::MetricRole::change, probe::MetricRole::quality, probe::MetricRole::distance})
      for (const auto& e : h.evidence) {
        if (e.role != role) continue;
        const std::string t = evidence_text(e);
        if (t.empty()) continue;
        const std::string whose = emitted[e.metric] > 1 ? " (" + e.probe + ")" : std::string();
        // The quality metrics without a loss said once: "no loss on the answer key and recall".
        if (t.starts_with("no loss on ") && e.better == 0) {
          if (no_loss.empty()) said.emplace_back();  // its place among the roles
          no_loss.push_back(metric_label(e.probe, e.metric).label + whose);
          continue;
        }
        said.push_back(t + whose);
      }
    std::string text;
    for (const auto& t : said) {
      std::string part = t;
      if (part.empty()) {
        part = "no loss on ";
        for (std::size_t i = 0; i < no_loss.size(); ++i)
          part += (i == 0 ? "" : i + 1 == no_loss.size() ? " and " : ", ") + no_loss[i];
      }
      text += (text.empty() ? "" : "; ") + part;
    }
    if (!text.empty()) out.sentence += " " + data.cells()[*h.evidence_cell].types() + ": " + text + ".";
  }
  // What the setting named does not say (Ollama's one type for K and V), once, after the advice.
  if (h.kind != RecommendHeadline::Kind::nothing_measured)
    if (const std::string note = cache_setting(data.manifest(), h.cell ? data.cells()[*h.cell] : ref).note; !note.empty())
      out.sentence += " " + note + ".";
  // Types the servers never confirmed (an attached server, a template without a confirmation): the
  // answer compares what the user declared, so it says so.
  std::string unverified;
  for (const CellDef* c : {&ref, h.cell ? &data.cells()[*h.cell] : nullptr})
    if (c && c->outcome == "kv_unverified") unverified += (unverified.empty() ? "" : " and ") + c->types();
  if (!unverified.empty() && h.kind != RecommendHeadline::Kind::nothing_measured)
    out.sentence += " The K/V types of " + unverified +
                    " are declared, unverified (the server did not confirm them; see the Cell outcomes): this holds "
                    "only if the server really ran them.";
  return out;
}

}  // namespace kvsweep::report
