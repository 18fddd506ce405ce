#include "kvsweep/report/markdown.hpp"

#include <algorithm>

#include "kvsweep/report/calibration.hpp"
#include "kvsweep/report/context.hpp"
#include "kvsweep/report/cost.hpp"
#include "kvsweep/report/csv.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/recommend_headline.hpp"
#include "kvsweep/report/tables.hpp"
#include "kvsweep/report/variant_effect.hpp"

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

namespace {

/// Ends `out` with exactly one blank line, so sections are separated the same way whatever came before.
void blank_line(std::string& out) {
  while (out.ends_with("\n")) out.pop_back();
  out += "\n\n";
}

}  // namespace

std::string write_markdown(const RunData& data, const RunSummary& summary, std::span<const Figure> figures) {
  std::string out = "# kvsweep report: " + md_cell(data.name()) + "\n\n";
  const std::string context = context_line(data);
  if (!context.empty()) out += context + "\n\n";
  const std::string status = data.manifest().value("status", std::string());
  out += "Run status: " + (status.empty() ? std::string("unknown") : status) + " · " +
         std::to_string(data.cells().size()) + " cells · " + std::to_string(data.records().size()) + " records.\n\n";
  out += method_note(data, summary) + "\n";
  blank_line(out);
  out += "## Verdict\n\n";
  for (const auto& [group, h] : verdicts(data)) out += "- " + md_cell(group) + ": **" + h.verdict + "**: " + md_cell(h.sentence) + "\n";
  out += "\n(`kvsweep recommend` gives each cell's verdicts and the margins.)\n";

  const auto metrics = grid_metrics(data, summary);
  const std::vector<VariantEffect> effects = variant_effects(data, summary);
  for (const auto& probe : data.probes()) {
    blank_line(out);
    out += "## " + probe.name + (probe.kind != probe.name && !probe.kind.empty() ? " (" + probe.kind + ")" : "") + "\n\n";
    if (!probe.declared) {
      out += "Metrics not declared by this run (written by an older kvsweep): every metric is read as quality, its "
             "direction as recorded, 0/1 values as binary.\n\n";
    }
    const Table headline = headline_table(data, summary, probe.name);
    if (headline.rows.empty()) {
      out += "No values recorded.\n";
      continue;
    }
    out += render_markdown(headline);
    for (const auto& line : calibration_lines(data, summary, probe)) out += "\n" + line + "\n";
    out += "\n### Cells\n\n" + render_markdown(cell_table(data, summary, probe.name));
    out += "\n### Gradient and K vs V\n\n" + render_markdown(gradient_table(data, summary, probe.name));
    out += "\n### Grids\n";
    for (const auto& [p, metric] : metrics) {
      if (p != probe.name) continue;
      bool hib = true;
      for (const auto& m : probe.metrics) {
        if (m.name == metric) hib = m.higher_is_better();
      }
      for (const auto& model : data.groups()) {
        if (summary.grid(model, p, metric) == nullptr) continue;
        out += "\n" + metric + " " + better_arrow(hib) + " — " + md_cell(model) + "\n\n```text\n" +
               grid_block(data, summary, model, p, metric) + "```\n";
      }
    }
    if (const Table t = variant_effect_table(effects, probe.name); !t.rows.empty()) {
      out += "\n### Variant effect\n\nEach variant's cell against the same model and K/V in " +
             md_cell(effects.front().base) + " (paired items; * p < " + shortest(summary.options.alpha) +
             " after Holm across the variant's cells).\n\n" + render_markdown(t);
    }
    bool any_figure = false;
    for (const auto& f : figures) {
      if (f.probe != probe.name) continue;
      if (!any_figure) out += "\n### Figures\n\n";
      any_figure = true;
      out += "![" + md_cell(f.title) + "](" + f.file + ")\n\n";
    }
  }

  blank_line(out);
  out += cost_markdown(data, cell_costs(data, std::nullopt, summary.options));
  blank_line(out);
  out += "## Cell outcomes\n\n" + render_markdown(outcome_table(data, summary));
  return out;
}

}  // namespace kvsweep::report
