/// published_document: the page of a published-vs-run comparison.

#include "kvsweep/report/analysis/published.hpp"

#include <algorithm>
#include <cmath>

#include "kvsweep/report/format.hpp"
#include "kvsweep/report/analysis/tables.hpp"

namespace kvsweep::report {

namespace {

std::string yes_no(bool b) { return b ? "yes" : "no"; }

std::string range_text(double lo, double hi, int dec) {
  if (std::isnan(lo) || std::isnan(hi)) return "—";
  return fixed(lo, dec) + " – " + fixed(hi, dec);
}

std::string ci_text(double lo, double hi, int dec) {
  if (std::isnan(lo) || std::isnan(hi)) return "—";
  return "[" + fixed(lo, dec) + ", " + fixed(hi, dec) + "]";
}

std::string count_text(double v) { return std::isnan(v) ? "—" : shortest(v); }

/// Seed 001's summary rows, the published ones and the run's.
void summaries_section(Document& doc, const PublishedComparison& c) {
  const Published& p = c.published;
  const int dec = std::max(p.decimals, 2);
  if (!p.summaries.empty()) {
    doc.heading(2, "Run summaries");
    Table t;
    const std::string per = p.items_per_cell ? " /" + std::to_string(p.items_per_cell) : "";
    t.header = {"source", "run", "combos", "pass (mean ± sd)", "avg " + c.metric + " (mean ± sd)", "range", "gradient?"};
    t.numeric = {false, false, true, true, true, true, false};
    for (const auto& r : p.summaries) {
      t.rows.push_back({"published", r.label, count_text(r.combos),
                        std::isnan(r.pass_mean) ? "—" : mean_sd(r.pass_mean, r.pass_sd, dec) + per,
                        mean_sd(r.mean, r.sd, dec), range_text(r.min, r.max, dec), r.gradient.empty() ? "—" : r.gradient});
    }
    for (const auto& h : c.headlines) {
      t.rows.push_back({"this run", h.model + " · " + h.probe, std::to_string(h.combos),
                        std::isnan(h.pass_mean) ? "—" : mean_sd(h.pass_mean, h.pass_sd, dec) + " /" + std::to_string(h.k),
                        mean_sd(h.mean, h.sd, dec), range_text(h.min, h.max, dec), h.gradient.empty() ? "—" : h.gradient});
    }
    if (c.headlines.empty()) t.rows.push_back({"this run", "not run", "—", "—", "—", "—", "—"});
    doc.table(std::move(t));
  }
}

/// Per published grid: the run's cell beside each published cell, and how many hold it in their CI.
void grid_sections(Document& doc, const PublishedComparison& c) {
  const Published& p = c.published;
  for (const auto& g : c.grids) {
    doc.heading(2, "Grid " + g.grid_id + (g.title.empty() ? "" : ": " + g.title));
    doc.paragraph("Run: model " + (g.model.empty() ? std::string("—") : g.model) + ", probe " +
           (g.probe.empty() ? std::string("—") : g.probe) + ", metric " + c.metric + ".");
    std::vector<double> values;
    for (const auto& cell : g.cells) {
      values.push_back(cell.published);
      if (cell.run) values.push_back(cell.run_mean);
    }
    const int gdec = std::max(decimals_for(values), p.decimals);
    Table t;
    t.header = {"ctk", "ctv", "published", "run", "run − published", "run 95% CI", "n", "inside CI?"};
    t.numeric = {false, false, true, true, true, true, true, false};
    for (const auto& cell : g.cells) {
      if (!cell.run) {
        t.rows.push_back({cell.type_k, cell.type_v, fixed(cell.published, gdec), "not run", "—", "—", "—", "—"});
        continue;
      }
      t.rows.push_back({cell.type_k, cell.type_v, fixed(cell.published, gdec), fixed(cell.run_mean, gdec),
                        signed_fixed(cell.diff, gdec), ci_text(cell.ci_lower, cell.ci_upper, gdec), std::to_string(cell.n),
                        yes_no(cell.inside)});
    }
    doc.table(std::move(t));
    const std::size_t run = g.cells.size() - g.count_not_run();
    doc.paragraph(std::to_string(g.count_inside()) + " of " + std::to_string(run) +
           " run cells hold the published value in their 95% CI; " + std::to_string(g.count_not_run()) + " of " +
           std::to_string(g.cells.size()) + " published cells not run.");
  }
}

/// The per-model deltas between two settings, published and the run's, and their aggregates.
void deltas_section(Document& doc, const PublishedComparison& c) {
  const Published& p = c.published;
  const int dec = std::max(p.decimals, 2);
  if (p.deltas) {
    const PublishedDeltas& d = *p.deltas;
    doc.heading(2, d.title.empty() ? std::string("Per-model deltas") : d.title);
    doc.paragraph("Δ = " + d.reference_label + " (" + d.type_k_reference + "/" + d.type_v_reference + ") − " + d.other_label + " (" +
           d.type_k_other + "/" + d.type_v_other + ") of " + c.metric + "; the run's Δ is paired over common items.");
    Table t;
    t.header = {"published model", "run model", "published Δ", "run Δ", "run Δ 95% CI", "inside CI?",
                "published " + d.reference_label, "run " + d.type_k_reference + "/" + d.type_v_reference,
                "published " + d.other_label, "run " + d.type_k_other + "/" + d.type_v_other};
    t.numeric = {false, false, true, true, true, false, true, true, true, true};
    auto value_cell = [&](double published_value, double lo_range, double hi_range) {
      if (!std::isnan(published_value)) return fixed(published_value, dec);
      if (!std::isnan(lo_range)) return "~" + range_text(lo_range, hi_range, dec);
      return std::string("—");
    };
    auto run_cell = [&](bool has, double mean, double lo, double hi) {
      if (!has) return std::string("not run");
      return fixed(mean, std::max(dec, 3)) + " " + ci_text(lo, hi, std::max(dec, 3));
    };
    for (const auto& m : c.deltas) {
      const auto& pm = m.published;
      const std::string published_delta = std::isnan(pm.delta) ? "—" : signed_fixed(pm.delta, dec);
      if (m.model.empty()) {
        t.rows.push_back({pm.label, "not run", published_delta, "—", "—", "—",
                          value_cell(pm.reference_value, pm.range_lo, pm.range_hi), "—",
                          value_cell(pm.other_value, pm.range_lo, pm.range_hi), "—"});
        continue;
      }
      const int rdec = std::max(dec, 3);
      const std::string in = std::isnan(pm.delta) || std::isnan(m.delta_lower)
                                 ? "—"
                                 : yes_no(inside_interval(pm.delta, m.delta_lower, m.delta_upper, 0.5 * std::pow(10.0, -p.decimals)));
      t.rows.push_back({pm.label, m.model, published_delta,
                        std::isnan(m.delta) ? "—" : signed_fixed(m.delta, rdec),
                        ci_text(m.delta_lower, m.delta_upper, rdec), in,
                        value_cell(pm.reference_value, pm.range_lo, pm.range_hi),
                        run_cell(m.has_reference, m.reference_mean, m.reference_lower, m.reference_upper),
                        value_cell(pm.other_value, pm.range_lo, pm.range_hi),
                        run_cell(m.has_other, m.other_mean, m.other_lower, m.other_upper)});
    }
    doc.table(std::move(t));
    std::vector<Text> totals;
    if (d.aggregate) {
      const auto& a = *d.aggregate;
      totals.push_back({plain("Published: " + count_text(a.models) + " models, " + count_text(a.improved) + " improved under " +
             d.reference_label + ", mean Δ " + (std::isnan(a.mean_delta) ? "—" : signed_fixed(a.mean_delta, dec)) + ".")});
    }
    totals.push_back({plain(std::string("This run: ") + std::to_string(c.aggregate.models) +
           (c.aggregate.models == 1 ? " model" : " models") + " with both settings, " +
           std::to_string(c.aggregate.improved) + " improved under " + d.reference_label + ", mean Δ " + (c.aggregate.models ? signed_fixed(c.aggregate.mean_delta, std::max(dec, 3)) : "—") + ".")});
    doc.lines(std::move(totals));
  }
}

}  // namespace

Document published_document(const PublishedComparison& c) {
  const Published& p = c.published;
  Document doc("Published vs run: " + p.name);
  doc.paragraph("Source: \"" + p.source.title + "\" (" + p.source.file + (p.source.seed.empty() ? "" : ", seed " + p.source.seed) +
         "). Run: " + (c.run_name.empty() ? "—" : c.run_name) + ". Probe " + p.probe + " (run: " +
         (c.run_probes.empty() ? std::string("none") : c.run_probes.front()) + "), metric " + c.metric +
         (c.metric == p.metric ? "" : " (published: " + p.metric + ")") + ".");

  summaries_section(doc, c);
  grid_sections(doc, c);
  deltas_section(doc, c);
  return doc;
}

std::string write_published_comparison(const PublishedComparison& comparison) {
  return render_markdown(published_document(comparison));
}

}  // namespace kvsweep::report
