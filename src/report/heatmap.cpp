#include "kvsweep/report/heatmap.hpp"

#include <algorithm>
#include <cmath>

#include "kvsweep/probe/margin.hpp"
#include "kvsweep/report/colour_scale.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/svg.hpp"
#include "kvsweep/stats/gradient.hpp"

namespace kvsweep::report {

namespace {

/// The heatmap's colour scale: the metric's declaration, its declared range (binary 0–1, the probe's
/// calibration range), the reference cell's mean and the metric's default margin as the least Δ.
ColourScale scale_for(const RunData& data, const RunSummary& summary, const std::string& model,
                      const std::string& probe, const std::string& metric, const std::vector<double>& means) {
  const ProbeDef* def = data.probe(probe);
  const probe::MetricSpec* found = def ? probe::find_metric(def->metrics, metric) : nullptr;
  const probe::MetricSpec spec = found ? *found : probe::MetricSpec{metric};
  std::optional<std::pair<double, double>> declared;
  std::optional<probe::Probe::Calibration> calibration;
  if (def && !def->calibration_metric.empty())
    calibration = probe::Probe::Calibration{def->calibration_metric, def->calibration_lo, def->calibration_hi};
  if (spec.is_binary()) declared = std::pair{0.0, 1.0};
  else if (calibration && calibration->metric == metric) declared = std::pair{calibration->lo, calibration->hi};
  std::optional<double> reference;
  std::vector<double> reference_values;
  if (auto ref = data.reference(model)) {
    if (const MetricStats* m = summary.find(*ref, probe, metric); m && m->summary.n > 0) reference = m->summary.mean;
    reference_values = data.values(*ref, probe, metric).values;
  }
  const double margin = probe::default_margin(spec, calibration, reference_values).value;
  return heatmap_scale(spec, declared, reference, means, margin);
}

}  // namespace

std::string heatmap_svg(const RunData& data, const RunSummary& summary, const std::string& model,
                        const std::string& probe, const std::string& metric) {
  const GridStats* g = summary.grid(model, probe, metric);
  const bool higher_is_better = g ? g->higher_is_better : true;

  // Rows and columns that hold a cell of this model.
  std::vector<std::string> ks, vs;
  for (const auto& k : data.k_types()) {
    for (const auto& v : data.v_types()) {
      if (data.find_cell(model, k, v)) {
        if (std::find(ks.begin(), ks.end(), k) == ks.end()) ks.push_back(k);
      }
    }
  }
  for (const auto& v : data.v_types()) {
    for (const auto& k : ks) {
      if (data.find_cell(model, k, v) && std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
    }
  }

  std::vector<double> means;
  std::size_t n_items = 0;
  for (const auto& k : ks) {
    for (const auto& v : vs) {
      const auto cell = data.find_cell(model, k, v);
      if (!cell) continue;
      if (const MetricStats* m = summary.find(*cell, probe, metric); m && m->summary.n > 0) {
        means.push_back(m->summary.mean);
        n_items = std::max(n_items, m->summary.n);
      }
    }
  }
  const double lo = means.empty() ? 0.0 : *std::min_element(means.begin(), means.end());
  const double hi = means.empty() ? 0.0 : *std::max_element(means.begin(), means.end());
  const int dec = decimals_for(means);
  const ColourScale scale = scale_for(data, summary, model, probe, metric, means);

  std::size_t label_chars = 4;
  for (const auto& k : ks) label_chars = std::max(label_chars, k.size());
  const double cell_w = 92, cell_h = 54;
  const double grid_left = 44 + 7.5 * static_cast<double>(label_chars);
  const double grid_top = 96;
  const double grid_w = cell_w * static_cast<double>(std::max<std::size_t>(vs.size(), 1));
  const double grid_h = cell_h * static_cast<double>(std::max<std::size_t>(ks.size(), 1));
  const double legend_x = grid_left + grid_w + 30;
  const double width = std::max(legend_x + 110, 600.0);
  const double height = grid_top + std::max(grid_h, 120.0) + 64;

  const std::string title = probe + " · " + metric + " — " + model;
  Svg svg(width, height, title);
  svg.text(16, 26, title, 16, "start", "#111111", "bold");
  std::string ref_name;
  if (auto ref = data.reference(model)) ref_name = data.cells()[*ref].type_k + "/" + data.cells()[*ref].type_v;
  svg.text(16, 44,
           "mean of up to " + std::to_string(n_items) + " items per cell · " +
               (scale.basis == ColourScale::Basis::neutral ? std::string("diagnostic (no better side)")
                                                          : std::string(higher_is_better ? "higher" : "lower") + " is better") +
               (ref_name.empty() ? std::string() : " · outlined: reference " + ref_name),
           11, "start", "#555555");

  // Axes.
  svg.text(grid_left + grid_w / 2, 68, "V cache type (-ctv)", 12, "middle", "#333333", "bold");
  for (std::size_t j = 0; j < vs.size(); ++j) {
    svg.text(grid_left + cell_w * (static_cast<double>(j) + 0.5), 88, vs[j], 12, "middle");
  }
  const double k_title_y = grid_top + grid_h / 2;
  svg.text(20, k_title_y, "K cache type (-ctk)", 12, "middle", "#333333", "bold",
           "transform=\"rotate(-90 20 " + coord(k_title_y) + ")\"");
  for (std::size_t i = 0; i < ks.size(); ++i) {
    svg.text(grid_left - 8, grid_top + cell_h * (static_cast<double>(i) + 0.5) + 4, ks[i], 12, "end");
  }

  // Cells.
  std::string reference_outline;
  for (std::size_t i = 0; i < ks.size(); ++i) {
    for (std::size_t j = 0; j < vs.size(); ++j) {
      const double x = grid_left + cell_w * static_cast<double>(j);
      const double y = grid_top + cell_h * static_cast<double>(i);
      const double cx = x + cell_w / 2;
      const auto cell = data.find_cell(model, ks[i], vs[j]);
      if (!cell) {
        svg.rect(x, y, cell_w, cell_h, "#ffffff", "#dddddd", 1);
        continue;
      }
      const CellDef& c = data.cells()[*cell];
      const MetricStats* m = summary.find(*cell, probe, metric);
      if (m == nullptr || m->summary.n == 0) {
        svg.rect(x, y, cell_w, cell_h, "#e3e3e3", "#ffffff", 1);
        svg.text(cx, y + 24, "—", 14, "middle", "#555555");
        svg.text(cx, y + 40, c.outcome == "ok" ? "no values" : c.outcome, 10, "middle", "#555555");
      } else {
        const std::string ink = scale.ink(m->summary.mean);
        svg.rect(x, y, cell_w, cell_h, scale.colour(m->summary.mean), "#ffffff", 1);
        svg.text(cx, y + 25, fixed(m->summary.mean, dec), 15, "middle", ink, "bold");
        std::string sub;
        if (c.is_reference) {
          sub = "reference";
        } else if (m->vs_reference) {
          sub = "Δ " + signed_fixed(m->vs_reference->delta, dec) + (m->vs_reference->significant ? " *" : "");
        } else {
          sub = "n " + std::to_string(m->summary.n);
        }
        svg.text(cx, y + 42, sub, 10, "middle", ink);
      }
      if (c.is_reference) {
        reference_outline = "<rect x=\"" + coord(x + 1.5) + "\" y=\"" + coord(y + 1.5) + "\" width=\"" +
                            coord(cell_w - 3) + "\" height=\"" + coord(cell_h - 3) +
                            "\" fill=\"none\" stroke=\"#111111\" stroke-width=\"3\"/>\n";
      }
    }
  }
  svg.raw(reference_outline);

  // Legend: best at the top.
  const double bar_h = std::max(grid_h, 120.0) - 24;
  const double bar_y = grid_top + 12;
  // Unique per figure: index.html inlines every SVG into one document.
  const std::string scale_id = "scale-" + slug(probe) + "-" + slug(metric) + "-" + slug(model);
  svg.raw("<defs><linearGradient id=\"" + scale_id + "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">");
  for (int s = 0; s <= 8; ++s) {
    svg.raw("<stop offset=\"" + coord(s / 8.0) + "\" stop-color=\"" + scale.colour_at(s / 8.0) + "\"/>");
  }
  svg.raw("</linearGradient></defs>\n");
  const bool flat = !(hi > lo);
  if (flat) {
    // One value everywhere: a single swatch, not a scale that suggests a range.
    svg.rect(legend_x, bar_y, 14, 14, scale.colour(lo), "#999999", 0.5);
    svg.text(legend_x + 20, bar_y + 11, means.empty() ? "no values" : "every cell", 11, "start");
    if (!means.empty()) svg.text(legend_x + 20, bar_y + 26, fixed(lo, dec), 11, "start");
  } else {
    const bool neutral = scale.basis == ColourScale::Basis::neutral;
    const auto [top_label, bottom_label] = scale.end_labels(dec);
    svg.text(legend_x, grid_top + 2, neutral ? "higher" : "better", 10, "start", "#333333", "bold");
    svg.rect(legend_x, bar_y, 14, bar_h, "url(#" + scale_id + ")", "#999999", 0.5);
    svg.text(legend_x + 20, bar_y + 10, top_label, 11, "start");
    svg.text(legend_x + 20, bar_y + bar_h, bottom_label, 11, "start");
    svg.text(legend_x, bar_y + bar_h + 16, neutral ? "lower" : "worse", 10, "start", "#333333", "bold");
  }

  // Footer: the gradient verdict and what the marks mean.
  const double foot = grid_top + std::max(grid_h, 120.0) + 22;
  std::string verdict = "gradient? —";
  if (g && flat && !means.empty()) {
    verdict = "gradient? no — the same value in every cell";
  } else if (g) {
    verdict = "gradient? " + std::string(stats::to_string(g->gradient.verdict)) + " — Spearman ρ(bits K+V, mean) = " +
              fixed(g->gradient.rho, 2) + ", p = " + format_p(g->gradient.p) + " over " +
              std::to_string(g->gradient.n) + " cells";
  }
  svg.text(16, foot, verdict, 11, "start", "#333333");
  svg.text(16, foot + 17, "Δ = cell − reference on common items · * p < 0.05 after Holm (McNemar or Wilcoxon) · " +
           scale.caption(), 11, "start", "#555555");
  return svg.finish();
}

}  // namespace kvsweep::report
