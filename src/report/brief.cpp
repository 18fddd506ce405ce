#include "kvsweep/report/brief.hpp"

#include <algorithm>
#include <cmath>

#include "kvsweep/report/format.hpp"
#include "kvsweep/report/recommend_headline.hpp"
#include "kvsweep/report/tables.hpp"

namespace kvsweep::report {

namespace {

/// "tiny q4_0/q4_0: passed 1.00 → 0.25 (worse, p 0.012)": the cell's quality metrics that differ from
/// its reference after Holm. "" when none does.
std::string differing_metrics(const CellProbeStats& stats, const ProbeDef& probe) {
  std::string out;
  for (const auto& m : stats.metrics) {
    if (!m.vs_reference || !m.vs_reference->significant) continue;
    const auto def = std::find_if(probe.metrics.begin(), probe.metrics.end(), [&](const MetricDef& d) { return d.name == m.metric; });
    if (def != probe.metrics.end() && !def->is_quality()) continue;  // diagnostics are reported, not judged
    const auto& t = *m.vs_reference;
    const bool better = m.higher_is_better ? t.delta > 0 : t.delta < 0;
    const int dec = std::max(2, decimals_for(std::vector<double>{m.summary.mean, m.summary.mean - t.delta}));
    out += (out.empty() ? "" : "; ") + m.metric + " " + fixed(m.summary.mean - t.delta, dec) + " → " +
           fixed(m.summary.mean, dec) + " (" + (better ? "better" : "worse") + ", p " + format_p(t.p_holm) + ")";
  }
  return out;
}

/// " The largest change seen: copy/rot-off q4_0/f16 primary_matched 20.00 → 0.00 (p 0.250 with 4
/// items)." — so a drop too small a run cannot prove is not hidden by "no cell differs". "" when every
/// cell matches its reference on the probe's main metric.
std::string largest_change(const RunData& data, const RunSummary& summary, const ProbeDef& probe) {
  const MetricRoles* roles = summary.roles_of(probe.name);
  if (roles == nullptr) return "";
  const std::string metric = !roles->main_metric.empty() ? roles->main_metric : roles->pass_metric;
  const MetricStats* worst = nullptr;
  std::size_t worst_cell = 0;
  for (const auto& stats : summary.results) {
    if (stats.probe != probe.name) continue;
    for (const auto& m : stats.metrics) {
      if (m.metric != metric || !m.vs_reference || m.vs_reference->delta == 0.0) continue;
      if (worst == nullptr || std::abs(m.vs_reference->delta) > std::abs(worst->vs_reference->delta)) {
        worst = &m;
        worst_cell = stats.cell;
      }
    }
  }
  if (worst == nullptr) return "";
  const auto& t = *worst->vs_reference;
  const CellDef& cell = data.cells()[worst_cell];
  const int dec = std::max(2, decimals_for(std::vector<double>{worst->summary.mean, worst->summary.mean - t.delta}));
  return " The largest change seen: " + cell.group() + " " + cell.types() + " " + metric + " " +
         fixed(worst->summary.mean - t.delta, dec) + " → " + fixed(worst->summary.mean, dec) + " (p " +
         format_p(t.p_holm) + " with " + std::to_string(t.n_pairs) + " paired items).";
}

void probe_brief(Document& doc, const RunData& data, const RunSummary& summary, const ProbeDef& probe) {
  doc.heading(2, probe.name + (probe.kind != probe.name && !probe.kind.empty() ? " (" + probe.kind + ")" : ""));
  Table headline = headline_table(data, summary, probe.name);
  if (headline.rows.empty()) {
    doc.paragraph("No values recorded.");
    return;
  }
  doc.table(std::move(headline));
  std::vector<Text> differs;
  std::size_t more = 0;
  for (const auto& stats : summary.results) {
    if (stats.probe != probe.name) continue;
    const std::string what = differing_metrics(stats, probe);
    if (what.empty()) continue;
    if (differs.size() == kBriefCellsPerProbe) {
      ++more;
      continue;
    }
    const CellDef& cell = data.cells()[stats.cell];
    differs.push_back({plain(cell.group() + " " + cell.types() + ": " + what)});
  }
  if (differs.empty()) {
    doc.paragraph("No cell differs from its reference (p < " + shortest(summary.options.alpha) + " after Holm)." +
                  largest_change(data, summary, probe));
    return;
  }
  doc.paragraph("Cells that differ from their reference (reference → cell, p after Holm):").list(std::move(differs));
  if (more > 0) doc.paragraph("… and " + std::to_string(more) + " more: see the Cells tables of report.md.");
}

}  // namespace

Document brief_document(const RunData& data, const RunSummary& summary, const std::filesystem::path& run_dir) {
  const std::filesystem::path report_dir = run_dir / "report";
  Document doc("kvsweep summary: " + data.name());
  const std::string status = data.manifest().value("status", std::string());
  doc.paragraph("Run status: " + (status.empty() ? std::string("unknown") : status) + " · " +
                std::to_string(data.cells().size()) + " cells · " + std::to_string(data.records().size()) + " records.");
  for (const auto& probe : data.probes()) probe_brief(doc, data, summary, probe);
  doc.heading(2, "Verdict");
  std::vector<Text> items;
  for (const auto& [group, h] : verdicts(data)) items.push_back({plain(group + ": "), strong(h.verdict), plain(": " + h.sentence)});
  doc.list(std::move(items));
  doc.paragraph("Full report: " + (report_dir / "report.md").string() + " and " + (report_dir / "index.html").string() +
                " (per-cell statistics, grids, figures, cost); kvsweep recommend " + run_dir.string() +
                " for every cell's verdicts.");
  return doc;
}

}  // namespace kvsweep::report
