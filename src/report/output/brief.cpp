#include "kvsweep/report/output/brief.hpp"

#include <algorithm>
#include <cmath>

#include "kvsweep/report/analysis/failures.hpp"
#include "kvsweep/report/analysis/recommend.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/output/report_document.hpp"
#include "kvsweep/report/analysis/tables.hpp"

namespace kvsweep::report {

namespace {


/// "20.00 → 0.00": the reference's mean over the paired items → the cell's.
std::string values_text(const MetricStats& m) {
  const auto& t = *m.vs_reference;
  const int dec = std::max(2, decimals_for(std::vector<double>{m.summary.mean, m.summary.mean - t.delta}));
  return fixed(m.summary.mean - t.delta, dec) + " → " + fixed(m.summary.mean, dec);
}

/// "tiny q4_0/f16 primary_matched 20.00 → 0.00".
std::string change_text(const CellDef& cell, const MetricStats& m) {
  return cell.group() + " " + cell.types() + " " + m.metric + " " + values_text(m);
}

bool is_quality(const ProbeDef& probe, const std::string& metric) {
  const auto def = std::find_if(probe.metrics.begin(), probe.metrics.end(), [&](const MetricDef& d) { return d.name == metric; });
  return def == probe.metrics.end() || def->is_judged();
}

/// " (change)", " (distance)": a judged metric's role where it is not quality, so a real change of the
/// wording is not read as a loss.
std::string role_tag(const ProbeDef& probe, const std::string& metric) {
  const probe::MetricSpec* def = probe::find_metric(probe.metrics, metric);
  if (def == nullptr || def->role == probe::MetricRole::quality) return {};
  return " (" + std::string(probe::to_string(def->role)) + ")";
}

/// One row per probe and model: cells with values, the pass rate, the main metric across cells and
/// how many cells differ from their reference.
Table overview(const RunData& data, const RunSummary& summary) {
  Table t;
  t.header = {"probe", "model", "cells", "pass", "main metric", "mean ± sd", "range", "gradient?", "differ"};
  t.numeric = {false, false, true, true, false, true, true, false, true};
  for (const auto& probe : data.probes()) {
    for (const auto& h : summary.headlines) {
      if (h.probe != probe.name) continue;
      bool hib = true;
      for (const auto& m : probe.metrics) {
        if (m.name == h.main_metric) hib = m.higher_is_better();
      }
      const int dec = std::max(2, decimals_for(std::vector<double>{h.main.min, h.main.max}));
      std::size_t differ = 0, compared = 0;
      for (const auto& stats : summary.results) {
        if (stats.probe != probe.name || data.cells()[stats.cell].group() != h.model) continue;
        bool any = false, tested = false;
        for (const auto& m : stats.metrics) {
          if (!m.vs_reference || !is_quality(probe, m.metric)) continue;
          tested = true;
          any = any || m.vs_reference->significant;
        }
        compared += tested ? 1 : 0;
        differ += any ? 1 : 0;
      }
      t.rows.push_back({probe.name, h.model, std::to_string(h.combos),
                        h.pass_metric.empty() ? "—" : fixed(h.pass_count.mean, 2) + " /" + std::to_string(h.k),
                        h.main_metric + " " + better_arrow(hib), mean_sd(h.main.n ? h.main.mean : NAN, h.main.sd, dec),
                        h.main.n == 0 ? "—" : fixed(h.main.min, dec) + " – " + fixed(h.main.max, dec),
                        std::string(stats::to_string(h.gradient)),
                        compared ? std::to_string(differ) + " of " + std::to_string(compared) : "—"});
    }
  }
  return t;
}

/// Every paired item moved the same way, none unchanged: McNemar's discordant pairs all one way, or
/// Wilcoxon's ranks all on one side and summing to n(n+1)/2 (no zero difference was dropped).
bool every_item_moved_one_way(const ReferenceTest& t) {
  if (t.n_pairs < 2) return false;
  if (t.test == "mcnemar") return t.b == t.n_pairs || t.c == t.n_pairs;
  const auto n = static_cast<double>(t.n_pairs);
  const bool one_side = (t.w_plus == 0.0) != (t.w_minus == 0.0);
  return one_side && std::fabs(t.w_plus + t.w_minus - n * (n + 1) / 2) < 1e-9;
}

/// "p 0.250, 4 paired items", and on a deterministic probe whose every item moved the same way, that it
/// did: greedy answers on one build leave no sampling noise to explain it, however few the items.
std::string weight_text(const ProbeDef& probe, const MetricStats& m) {
  const ReferenceTest& t = *m.vs_reference;
  std::string out = "p " + format_p(t.p_holm) + ", " + std::to_string(t.n_pairs) + (t.n_pairs == 1 ? " paired item" : " paired items");
  if (probe.deterministic && every_item_moved_one_way(t))
    out += std::string("; all ") + (t.delta < 0 ? "lower" : "higher") + " on a deterministic probe: no sampling noise";
  return out;
}

/// The cells whose judged metrics differ from their reference after Holm, per probe, at most
/// kBriefCellsPerProbe each; then per probe without any, its largest change on the main metric. Said
/// under the Verdict, as one message with it: what a real change means for the verdict, and, where no
/// change is real but a cell is inferior, why both hold.
void changes(Document& doc, const RunData& data, const RunSummary& summary) {
  std::vector<Text> differ, largest;
  bool changes_listed = false;  // a (change) metric among the real changes: say what it means
  for (const auto& probe : data.probes()) {
    std::size_t listed = 0, more = 0;
    const MetricStats* top = nullptr;
    const CellDef* top_cell = nullptr;
    const MetricRoles* roles = summary.roles_of(probe.name);
    const std::string main = roles == nullptr ? "" : !roles->main_metric.empty() ? roles->main_metric : roles->pass_metric;
    for (const auto& stats : summary.results) {
      if (stats.probe != probe.name) continue;
      const CellDef& cell = data.cells()[stats.cell];
      std::string what;
      for (const auto& m : stats.metrics) {
        if (!m.vs_reference) continue;
        if (m.metric == main && m.vs_reference->delta != 0.0 &&
            (top == nullptr || std::abs(m.vs_reference->delta) > std::abs(top->vs_reference->delta))) {
          top = &m;
          top_cell = &cell;
        }
        if (!m.vs_reference->significant || !is_quality(probe, m.metric)) continue;
        const bool better = m.higher_is_better ? m.vs_reference->delta > 0 : m.vs_reference->delta < 0;
        changes_listed = changes_listed || role_tag(probe, m.metric) == " (change)";
        what += std::string(what.empty() ? "" : "; ") + m.metric + role_tag(probe, m.metric) + " " + values_text(m) +
                " (" + (better ? "better" : "worse") + ", p " + format_p(m.vs_reference->p_holm) + ")";
      }
      if (what.empty()) continue;
      if (listed++ < kBriefCellsPerProbe) differ.push_back({plain(probe.name + ": " + cell.group() + " " + cell.types() + ": " + what)});
      else ++more;
    }
    if (more > 0) differ.push_back({plain(probe.name + ": … and " + std::to_string(more) + " more (report.md, Cells)")});
    if (listed == 0 && top != nullptr) {
      largest.push_back({plain(probe.name + ": " + change_text(*top_cell, *top) + " (" + weight_text(probe, *top) + ")")});
    }
  }
  const std::string alpha = shortest(summary.options.alpha);
  std::vector<std::string> inferior;  // "m q4_0/f16"
  for (const auto& model : recommend(data).models)
    for (const auto& cv : model.cells)
      if (cv.inferior > 0) inferior.push_back(data.cells()[cv.cell].group() + " " + data.cells()[cv.cell].types());
  if (differ.empty() && !inferior.empty()) {
    std::string cells;
    for (std::size_t i = 0; i < inferior.size() && i < kBriefCellsPerProbe; ++i)
      cells += (i == 0 ? "" : i + 1 == std::min(inferior.size(), kBriefCellsPerProbe) ? " and " : ", ") + inferior[i];
    if (inferior.size() > kBriefCellsPerProbe) cells += " (and " + std::to_string(inferior.size() - kBriefCellsPerProbe) + " more)";
    doc.paragraph("No single change is significant on its two-sided test after Holm across cells (p < " + alpha +
                  "), and still " + cells + (inferior.size() == 1 ? " is" : " are") +
                  " inferior: an inferior verdict asks a narrower question (is the one-sided bound beyond the margin?), "
                  "which the same items can answer before the corrected two-sided test does.");
  } else if (differ.empty()) {
    doc.paragraph("No change is significant either (p < " + alpha + " after Holm): nothing here is proven worse.");
  } else {
    doc.paragraph("Changes that are real (reference → cell, p < " + alpha +
                  " after Holm). The verdict above has weighed them: a real change is a loss beyond the margin only "
                  "where the verdict calls the cell inferior" +
                  std::string(changes_listed ? "; a (change) metric says how the output differs, not that it got worse:" : ":"))
        .list(std::move(differ));
  }
  if (!largest.empty()) {
    doc.paragraph("The largest change seen where none is significant (too few items, or too small a change, to tell):")
        .list(std::move(largest));
  }
}

}  // namespace

Document brief_document(const RunData& data, const RunSummary& summary, const std::filesystem::path& run_dir) {
  const std::filesystem::path report_dir = run_dir / "report";
  Document doc("kvsweep summary: " + data.name());
  doc.paragraph(status_line(data));
  failures_section(doc, data);
  if (Table t = overview(data, summary); !t.rows.empty()) doc.table(std::move(t));
  else doc.paragraph("No values recorded.");
  doc.heading(2, "Verdict").list(verdict_items(data));
  // A run whose every reference measured nothing compared no cell: no list of changes to read as an answer.
  if (unmeasured_groups(data).size() < data.groups().size()) changes(doc, data, summary);
  doc.paragraph("Full report: " + (report_dir / "report.md").string() + " and " + (report_dir / "index.html").string() +
                " (per-cell statistics, grids, figures, cost); kvsweep recommend " + run_dir.string() +
                " for every cell's verdicts.");
  return doc;
}

}  // namespace kvsweep::report
