#include "kvsweep/report/output/report_document.hpp"

#include <algorithm>

#include "kvsweep/report/analysis/calibration.hpp"
#include "kvsweep/report/input/context.hpp"
#include "kvsweep/report/analysis/cost.hpp"
#include "kvsweep/report/analysis/failures.hpp"
#include "kvsweep/report/output/csv.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/analysis/recommend_headline.hpp"
#include "kvsweep/report/analysis/telephone_spread.hpp"
#include "kvsweep/report/analysis/longkl_depth.hpp"
#include "kvsweep/report/analysis/twins_bins.hpp"
#include "kvsweep/report/analysis/tables.hpp"
#include "kvsweep/report/analysis/variant_effect.hpp"

namespace kvsweep::report {

std::string method_note(const RunData& data, const RunSummary& summary) {
  std::vector<std::string> refs;
  for (const auto& model : data.groups()) {
    if (auto ref = data.reference(model)) {
      const std::string r = data.cells()[*ref].type_k + "/" + data.cells()[*ref].type_v;
      if (std::find(refs.begin(), refs.end(), r) == refs.end()) refs.push_back(r);
    }
  }
  std::string ref_text = refs.empty() ? "none" : refs.front();
  for (std::size_t i = 1; i < refs.size(); ++i) ref_text += ", " + refs[i];
  const auto& o = summary.options;
  return "Reference cell: " + ref_text + ". Mean ± sd are across cells; [a, b] is a " +
         fixed(o.confidence * 100, 0) + "% percentile-bootstrap CI (" + std::to_string(o.bootstrap_iterations) +
         " resamples, seed " + std::to_string(o.bootstrap_seed) +
         "); * marks a cell that differs from its reference on the common items (McNemar for 0/1 metrics, "
         "Wilcoxon signed-rank otherwise, p < " +
         shortest(o.alpha) +
         " after Holm across cells). gradient? asks whether the cell mean follows bits(K) + bits(V) "
         "(Spearman ρ, p < " +
         shortest(o.alpha) + "; \"reversed\" when fewer bits do significantly better).";
}

std::vector<std::string> bundle_files(const RunData& data, const RunSummary& summary) {
  std::vector<std::string> out{"summary.json", "long.csv"};
  for (const auto& [probe, metric] : grid_metrics(data, summary)) out.push_back("grids/" + slug(probe) + "-" + slug(metric) + ".csv");
  out.emplace_back("report.md");
  out.emplace_back("index.html");
  return out;
}

std::string status_line(const RunData& data) {
  const std::string status = run_status(data);
  const std::vector<std::string> unmeasured = unmeasured_groups(data);
  std::string nothing;
  for (const auto& group : unmeasured) nothing += (nothing.empty() ? " · nothing measured for " : ", ") + group;
  if (!nothing.empty())
    nothing += unmeasured.size() == 1 ? " (its reference cell has no ok record)" : " (their reference cells have no ok record)";
  return "Run status: " + (status.empty() ? std::string("unknown") : status) + nothing + " · " +
         std::to_string(data.cells().size()) + " cells · " + std::to_string(data.records().size()) + " records.";
}

std::vector<Text> verdict_items(const RunData& data) {
  std::vector<Text> items;
  for (const auto& [group, headline] : verdicts(data)) {
    const HeadlineWords h = explain(headline, data);
    items.push_back({plain(group + ": "), strong(h.verdict), plain(": " + h.sentence)});
  }
  return items;
}

namespace {

void front_matter(Document& doc, const RunData& data, const RunSummary& summary, const std::vector<std::string>& files) {
  if (const std::string context = context_line(data); !context.empty()) doc.paragraph(context, Paragraph::Tone::context);
  doc.paragraph(status_line(data));
  failures_section(doc, data);
  doc.paragraph(method_note(data, summary));
  if (files.empty()) return;
  Text links{plain("Files: ")};
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (i > 0) links.push_back(plain(" · "));
    links.push_back(link(files[i], files[i]));
  }
  doc.paragraph(std::move(links));
}

void verdict_section(Document& doc, const RunData& data) {
  doc.heading(2, "Verdict").list(verdict_items(data));
  doc.paragraph({plain("("), code("kvsweep recommend"), plain(" gives each cell's verdicts and the margins.)")});
}

void grids(Document& doc, const RunData& data, const RunSummary& summary, const ProbeDef& probe) {
  bool first = true;
  for (const auto& [p, metric] : grid_metrics(data, summary)) {
    if (p != probe.name) continue;
    bool hib = true;
    for (const auto& m : probe.metrics) {
      if (m.name == metric) hib = m.higher_is_better();
    }
    for (const auto& model : data.groups()) {
      if (summary.grid(model, p, metric) == nullptr) continue;
      if (first) doc.heading(3, "Grids");
      first = false;
      doc.paragraph(metric + " " + better_arrow(hib) + " — " + model);
      doc.preformatted(grid_block(data, summary, model, p, metric));
    }
  }
}

void probe_section(Document& doc, const RunData& data, const RunSummary& summary, const ProbeDef& probe,
                   const std::vector<VariantEffect>& effects, std::span<const Figure> figures) {
  doc.heading(2, probe.name + (probe.kind != probe.name && !probe.kind.empty() ? " (" + probe.kind + ")" : ""));
  if (!probe.declared) {
    doc.paragraph("Metrics not declared by this run (written by an older kvsweep): every metric is read as quality, "
                  "its direction as recorded, 0/1 values as binary.");
  }
  Table headline = headline_table(data, summary, probe.name);
  if (headline.rows.empty()) {
    const auto failures = failed_probes(data);
    const auto failed =
        std::find_if(failures.begin(), failures.end(), [&](const ProbeFailure& f) { return f.probe == probe.name; });
    // A probe that failed on every cell says how, not only that it has no values.
    doc.paragraph(failed == failures.end() ? std::string("No values recorded.")
                                           : "No values recorded: " + explain(*failed) + ".");
    return;
  }
  doc.table(std::move(headline));
  for (const auto& line : calibration_lines(data, summary, probe)) {
    doc.paragraph(line, line.find("Warning:") != std::string::npos ? Paragraph::Tone::warning : Paragraph::Tone::normal);
  }
  doc.heading(3, "Cells").table(cell_table(data, summary, probe.name));
  if (probe.kind == "telephone") telephone_spread_section(doc, data, probe);
  if (probe.kind == "twins") twins_bins_section(doc, data, probe);
  if (probe.kind == "longkl") longkl_depth_section(doc, data, probe);
  doc.heading(3, "Gradient and K vs V").table(gradient_table(data, summary, probe.name));
  grids(doc, data, summary, probe);
  if (Table t = variant_effect_table(effects, probe.name); !t.rows.empty()) {
    doc.heading(3, "Variant effect")
        .paragraph("Each variant's cell against the same model and K/V in " + effects.front().base +
                   " (paired items; * p < " + shortest(summary.options.alpha) + " after Holm across the variant's cells).")
        .table(std::move(t));
  }
  bool first = true;
  for (const auto& f : figures) {
    if (f.probe != probe.name) continue;
    if (first) doc.heading(3, "Figures");
    first = false;
    doc.figure(f.title, f.file, f.svg);
  }
}

}  // namespace

Document report_document(const RunData& data, const RunSummary& summary, std::span<const Figure> figures,
                         const std::vector<std::string>& files) {
  Document doc("kvsweep report: " + data.name());
  front_matter(doc, data, summary, files);
  verdict_section(doc, data);
  const std::vector<VariantEffect> effects = variant_effects(data, summary);
  for (const auto& probe : data.probes()) probe_section(doc, data, summary, probe, effects, figures);
  cost_section(doc, data, cell_costs(data, std::nullopt, summary.options));
  doc.heading(2, "Cell outcomes").table(outcome_table(data, summary));
  return doc;
}

}  // namespace kvsweep::report
