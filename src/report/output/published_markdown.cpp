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
  const int dec = std::max(p.precision.shown_decimals(), 2);
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

std::string precision_text(const Precision& p) {
  const std::string tol = "±" + p.allowed_text();
  if (p.tolerance >= 0) return tol + " (stated tolerance)";
  return tol + " (" + std::to_string(p.decimals) + " decimals as published)";
}

std::string test_text(ReproTest t) {
  switch (t) {
    case ReproTest::interval: return "CI ± tol";
    case ReproTest::one_item: return "1 item: ± tol";
    case ReproTest::no_spread: return "no spread: ± tol";
    case ReproTest::item: return "item: ± tol";
    case ReproTest::none: break;
  }
  return "—";
}

/// Per published grid: the run's figure beside each published one, and how many reproduce.
void grid_sections(Document& doc, const PublishedComparison& c) {
  for (const auto& g : c.grids) {
    doc.heading(2, "Grid " + g.grid_id + (g.title.empty() ? "" : ": " + g.title));
    const std::string where = "Variant " + (g.variant.empty() ? std::string("(none)") : g.variant) + ", probe " +
                              (g.probe.empty() ? std::string("—") : g.probe) + ", metric " + g.metric + ", tolerance " +
                              precision_text(g.precision);
    if (!g.unpaired.empty()) {
      doc.paragraph(where + ".");
      doc.note("Not paired: " + g.unpaired + "; its " + std::to_string(g.cells.size()) + " published figures are not run.");
      continue;
    }
    doc.paragraph(where + "; run model " + (g.model.empty() ? std::string("—") : g.model) + ".");
    const bool items = std::any_of(g.cells.begin(), g.cells.end(), [](const CellCheck& cell) { return !cell.item.empty(); });
    std::vector<double> values;
    for (const auto& cell : g.cells) {
      values.push_back(cell.published);
      if (cell.run) values.push_back(cell.run_mean);
    }
    const int gdec = std::max(decimals_for(values), g.precision.shown_decimals());
    Table t;
    t.header = {"ctk", "ctv"};
    if (items) t.header.push_back("item");
    for (const char* h : {"published", "run", "run − published", "run 95% CI", "n", "test", "reproduced?"}) t.header.push_back(h);
    t.numeric = {false, false};
    if (items) t.numeric.push_back(false);
    for (bool n : {true, true, true, true, true, false, false}) t.numeric.push_back(n);
    for (const auto& cell : g.cells) {
      std::vector<std::string> row{cell.type_k, cell.type_v};
      if (items) row.push_back(cell.item);
      if (!cell.run) {
        for (std::string v : {fixed(cell.published, gdec), std::string("not run"), std::string("—"), std::string("—"),
                              std::string("—"), std::string("—"), std::string("not run")})
          row.push_back(std::move(v));
      } else {
        const bool ci = cell.test == ReproTest::interval;
        for (std::string v : {fixed(cell.published, gdec), fixed(cell.run_mean, gdec), signed_fixed(cell.diff, gdec),
                              ci ? ci_text(cell.ci_lower, cell.ci_upper, gdec) : std::string("—"), std::to_string(cell.n),
                              test_text(cell.test), yes_no(cell.inside)})
          row.push_back(std::move(v));
      }
      t.rows.push_back(std::move(row));
    }
    doc.table(std::move(t));
    const std::size_t run = g.cells.size() - g.count_not_run();
    doc.paragraph(std::to_string(g.count_inside()) + " of " + std::to_string(run) + " run figures reproduce within " +
                  precision_text(g.precision) + "; " + std::to_string(g.count_not_run()) + " of " +
                  std::to_string(g.cells.size()) + " published figures not run.");
  }
}

/// The published setup against the run's, field by field, before any number; then how the model was matched.
void setup_section(Document& doc, const PublishedComparison& c) {
  doc.heading(2, "Setup");
  std::vector<std::string> stated;
  for (const auto& f : setup_fields())
    if (!(c.published.setup.*f.member).empty()) stated.push_back(f.key);
  Table t;
  t.header = {"field", "published", "this run"};
  t.numeric = {false, false, false};
  std::string unstated, unchecked;
  for (const auto& d : c.setup) {
    if (d.kind == SetupDifference::Kind::differs) t.rows.push_back({d.field, d.published, d.run});
    else if (d.kind == SetupDifference::Kind::unchecked)
      unchecked += (unchecked.empty() ? "" : "; ") + d.field + ": published \"" + d.published + "\", this run \"" + d.run + "\"";
    else unstated += (unstated.empty() ? "" : "; ") + d.field + " (run: " + d.run + ")";
  }
  if (t.rows.empty()) {
    doc.paragraph("No stated setup field differs from this run's.");
  } else {
    doc.paragraph("These differ; each may move the figures below:");
    doc.table(std::move(t));
  }
  if (!unchecked.empty())
    doc.paragraph("Stated in words, not compared (judge them): " + unchecked + ".", Paragraph::Tone::context);
  if (!unstated.empty()) doc.paragraph("Not stated by the file: " + unstated + ".", Paragraph::Tone::context);
  for (const auto& caveat : c.caveats) doc.note(caveat);
}

/// How many figures reproduce, within what, which do not and why they may not.
void verdict_section(Document& doc, const PublishedComparison& c) {
  const ReproCounts n = repro_counts(c);
  std::string line = std::to_string(n.reproduced) + " of " + std::to_string(n.reproduced + n.not_reproduced) +
                     " compared figures reproduce within their stated tolerance; " + std::to_string(n.not_run) +
                     " published figures not run (not failures).";
  doc.paragraph(line, n.not_reproduced == 0 ? Paragraph::Tone::normal : Paragraph::Tone::warning);
  if (n.failed.empty()) return;
  std::vector<Text> items;
  for (const auto& f : n.failed) items.push_back({plain("not reproduced: " + f)});
  doc.list(std::move(items));
  const bool sampled = std::any_of(c.grids.begin(), c.grids.end(), [](const GridCheck& g) {
    return !g.deterministic && g.count_inside() + g.count_not_run() < g.cells.size();
  });
  const bool host = std::any_of(c.setup.begin(), c.setup.end(), [](const SetupDifference& d) {
    return d.kind != SetupDifference::Kind::unchecked && (d.field.rfind("host", 0) == 0 || d.field == "build");
  });
  if (sampled)
    doc.paragraph("A sampled probe (temperature > 0) moves run to run: its figures reproduce only in distribution; "
                  "compare more items, not one run's value.", Paragraph::Tone::context);
  const bool unchecked = std::any_of(c.setup.begin(), c.setup.end(), [](const SetupDifference& d) {
    return d.kind == SetupDifference::Kind::unchecked;
  });
  const std::string why =
      host ? "The host or build differs (Setup): llama.cpp's rounding differs by CPU class and build, which moves "
             "near-tied tokens and the figures that follow them."
      : unchecked ? "The host class is unchecked (the file states it in words, not llama.cpp's compute): on another CPU "
                    "class or instruction path llama.cpp rounds otherwise, and a near-tied token flips."
                  : "A deterministic figure that does not reproduce on the same build and host class points at a "
                    "changed input or setting (Setup), or a near-tied token.";
  doc.paragraph(why, Paragraph::Tone::context);
}

/// The per-model deltas between two settings, published and the run's, and their aggregates.
void deltas_section(Document& doc, const PublishedComparison& c) {
  const Published& p = c.published;
  const int dec = std::max(p.precision.shown_decimals(), 2);
  if (p.deltas) {
    const PublishedDeltas& d = *p.deltas;
    doc.heading(2, d.title.empty() ? std::string("Per-model deltas") : d.title);
    doc.paragraph("Δ = " + d.reference_label + " (" + d.type_k_reference + "/" + d.type_v_reference + ") − " + d.other_label + " (" +
           d.type_k_other + "/" + d.type_v_other + ") of " + c.metric + "; the run's Δ is paired over common items.");
    Table t;
    t.header = {"published model", "run model", "published Δ", "run Δ", "run Δ 95% CI", "reproduced?",
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
      const std::string in = m.outcome == Reproduced::not_run ? "—" : yes_no(m.outcome == Reproduced::yes);
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
  const std::string where = p.source.file.empty() ? p.source.url : p.source.file;
  doc.paragraph("Source: \"" + p.source.title + "\" (" + where + (p.source.seed.empty() ? "" : ", seed " + p.source.seed) +
                "). Run: " + (c.run_name.empty() ? "—" : c.run_name) + ".");

  setup_section(doc, c);
  verdict_section(doc, c);
  summaries_section(doc, c);
  grid_sections(doc, c);
  deltas_section(doc, c);
  return doc;
}

std::string write_published_comparison(const PublishedComparison& comparison) {
  return render_markdown(published_document(comparison));
}

}  // namespace kvsweep::report
