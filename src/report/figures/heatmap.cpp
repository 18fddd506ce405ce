#include "kvsweep/report/figures/heatmap.hpp"

#include <algorithm>
#include <cmath>

#include "kvsweep/probe/margin.hpp"
#include "kvsweep/report/figures/colour_scale.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/figures/svg.hpp"
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

/// One heatmap's grid: the K rows and V columns that hold a cell of the model, the cells' means and
/// where the parts are drawn.
struct HeatmapGrid {
  std::vector<std::string> ks, vs;
  std::vector<double> means;  // the cells' means, in grid order
  std::size_t n_items = 0;    // the most items behind one mean
  double lo = 0.0, hi = 0.0;
  int dec = 0;
  double cell_w = 92, cell_h = 54;
  double grid_left = 0, grid_top = 96, grid_w = 0, grid_h = 0;
  double legend_x = 0, width = 0, height = 0;
  /// The plot's height: the grid, or the legend's least height.
  double body_h() const { return std::max(grid_h, 120.0); }
};

/// Rows and columns that hold a cell of this model.
void grid_axes(const RunData& data, const std::string& model, HeatmapGrid& grid) {
  for (const auto& k : data.k_types()) {
    for (const auto& v : data.v_types()) {
      if (data.find_cell(model, k, v)) {
        if (std::find(grid.ks.begin(), grid.ks.end(), k) == grid.ks.end()) grid.ks.push_back(k);
      }
    }
  }
  for (const auto& v : data.v_types()) {
    for (const auto& k : grid.ks) {
      if (data.find_cell(model, k, v) && std::find(grid.vs.begin(), grid.vs.end(), v) == grid.vs.end())
        grid.vs.push_back(v);
    }
  }
}

void grid_means(const RunData& data, const RunSummary& summary, const std::string& model, const std::string& probe,
                const std::string& metric, HeatmapGrid& grid) {
  for (const auto& k : grid.ks) {
    for (const auto& v : grid.vs) {
      const auto cell = data.find_cell(model, k, v);
      if (!cell) continue;
      if (const MetricStats* m = summary.find(*cell, probe, metric); m && m->summary.n > 0) {
        grid.means.push_back(m->summary.mean);
        grid.n_items = std::max(grid.n_items, m->summary.n);
      }
    }
  }
  grid.lo = grid.means.empty() ? 0.0 : *std::min_element(grid.means.begin(), grid.means.end());
  grid.hi = grid.means.empty() ? 0.0 : *std::max_element(grid.means.begin(), grid.means.end());
  grid.dec = decimals_for(grid.means);
}

void grid_layout(HeatmapGrid& grid) {
  std::size_t label_chars = 4;
  for (const auto& k : grid.ks) label_chars = std::max(label_chars, k.size());
  grid.grid_left = 44 + 7.5 * static_cast<double>(label_chars);
  grid.grid_w = grid.cell_w * static_cast<double>(std::max<std::size_t>(grid.vs.size(), 1));
  grid.grid_h = grid.cell_h * static_cast<double>(std::max<std::size_t>(grid.ks.size(), 1));
  grid.legend_x = grid.grid_left + grid.grid_w + 30;
  grid.width = std::max(grid.legend_x + 110, 600.0);
  grid.height = grid.grid_top + grid.body_h() + 64;
}

/// The line under the title: items per cell, the better side, the reference's outline.
void draw_subtitle(Svg& svg, const RunData& data, const std::string& model, const HeatmapGrid& grid,
                   const ColourScale& scale, bool higher_is_better) {
  std::string ref_name;
  if (auto ref = data.reference(model)) ref_name = data.cells()[*ref].type_k + "/" + data.cells()[*ref].type_v;
  svg.text(16, 44,
           "mean of up to " + std::to_string(grid.n_items) + " items per cell · " +
               (scale.basis == ColourScale::Basis::neutral ? std::string("diagnostic (no better side)")
                                                          : std::string(higher_is_better ? "higher" : "lower") + " is better") +
               (ref_name.empty() ? std::string() : " · outlined: reference " + ref_name),
           11, "start", "#555555");
}

void draw_axes(Svg& svg, const HeatmapGrid& grid) {
  svg.text(grid.grid_left + grid.grid_w / 2, 68, "V cache type (-ctv)", 12, "middle", "#333333", "bold");
  for (std::size_t j = 0; j < grid.vs.size(); ++j) {
    svg.text(grid.grid_left + grid.cell_w * (static_cast<double>(j) + 0.5), 88, grid.vs[j], 12, "middle");
  }
  const double k_title_y = grid.grid_top + grid.grid_h / 2;
  svg.text(20, k_title_y, "K cache type (-ctk)", 12, "middle", "#333333", "bold",
           "transform=\"rotate(-90 20 " + coord(k_title_y) + ")\"");
  for (std::size_t i = 0; i < grid.ks.size(); ++i) {
    svg.text(grid.grid_left - 8, grid.grid_top + grid.cell_h * (static_cast<double>(i) + 0.5) + 4, grid.ks[i], 12, "end");
  }
}

/// One cell of the grid at (x, y): its mean and Δ to the reference, or why it has no value.
void draw_cell(Svg& svg, const CellDef& c, const MetricStats* m, double x, double y, const HeatmapGrid& grid,
               const ColourScale& scale) {
  const double cx = x + grid.cell_w / 2;
  if (m == nullptr || m->summary.n == 0) {
    svg.rect(x, y, grid.cell_w, grid.cell_h, "#e3e3e3", "#ffffff", 1);
    svg.text(cx, y + 24, "—", 14, "middle", "#555555");
    svg.text(cx, y + 40, c.outcome == "ok" ? "no values" : c.outcome, 10, "middle", "#555555");
    return;
  }
  const std::string ink = scale.ink(m->summary.mean);
  svg.rect(x, y, grid.cell_w, grid.cell_h, scale.colour(m->summary.mean), "#ffffff", 1);
  svg.text(cx, y + 25, fixed(m->summary.mean, grid.dec), 15, "middle", ink, "bold");
  std::string sub;
  if (c.is_reference) {
    sub = "reference";
  } else if (m->vs_reference) {
    sub = "Δ " + signed_fixed(m->vs_reference->delta, grid.dec) + (m->vs_reference->significant ? " *" : "");
  } else {
    sub = "n " + std::to_string(m->summary.n);
  }
  svg.text(cx, y + 42, sub, 10, "middle", ink);
}

/// The cells, the reference outlined on top of them.
void draw_cells(Svg& svg, const RunData& data, const RunSummary& summary, const std::string& model,
                const std::string& probe, const std::string& metric, const HeatmapGrid& grid,
                const ColourScale& scale) {
  std::string reference_outline;
  for (std::size_t i = 0; i < grid.ks.size(); ++i) {
    for (std::size_t j = 0; j < grid.vs.size(); ++j) {
      const double x = grid.grid_left + grid.cell_w * static_cast<double>(j);
      const double y = grid.grid_top + grid.cell_h * static_cast<double>(i);
      const auto cell = data.find_cell(model, grid.ks[i], grid.vs[j]);
      if (!cell) {
        svg.rect(x, y, grid.cell_w, grid.cell_h, "#ffffff", "#dddddd", 1);
        continue;
      }
      const CellDef& c = data.cells()[*cell];
      draw_cell(svg, c, summary.find(*cell, probe, metric), x, y, grid, scale);
      if (c.is_reference) {
        reference_outline = "<rect x=\"" + coord(x + 1.5) + "\" y=\"" + coord(y + 1.5) + "\" width=\"" +
                            coord(grid.cell_w - 3) + "\" height=\"" + coord(grid.cell_h - 3) +
                            "\" fill=\"none\" stroke=\"#111111\" stroke-width=\"3\"/>\n";
      }
    }
  }
  svg.raw(reference_outline);
}

/// The legend, best at the top; one swatch when every cell holds the same value. `scale_id` names
/// the gradient, unique per figure: index.html inlines every SVG into one document.
void draw_legend(Svg& svg, const HeatmapGrid& grid, const ColourScale& scale, const std::string& scale_id) {
  const double bar_h = grid.body_h() - 24;
  const double bar_y = grid.grid_top + 12;
  svg.raw("<defs><linearGradient id=\"" + scale_id + "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">");
  for (int s = 0; s <= 8; ++s) {
    svg.raw("<stop offset=\"" + coord(s / 8.0) + "\" stop-color=\"" + scale.colour_at(s / 8.0) + "\"/>");
  }
  svg.raw("</linearGradient></defs>\n");
  const double lx = grid.legend_x;
  if (!(grid.hi > grid.lo)) {
    // One value everywhere: a single swatch, not a scale that suggests a range.
    svg.rect(lx, bar_y, 14, 14, scale.colour(grid.lo), "#999999", 0.5);
    svg.text(lx + 20, bar_y + 11, grid.means.empty() ? "no values" : "every cell", 11, "start");
    if (!grid.means.empty()) svg.text(lx + 20, bar_y + 26, fixed(grid.lo, grid.dec), 11, "start");
    return;
  }
  const bool neutral = scale.basis == ColourScale::Basis::neutral;
  const auto [top_label, bottom_label] = scale.end_labels(grid.dec);
  svg.text(lx, grid.grid_top + 2, neutral ? "higher" : "better", 10, "start", "#333333", "bold");
  svg.rect(lx, bar_y, 14, bar_h, "url(#" + scale_id + ")", "#999999", 0.5);
  svg.text(lx + 20, bar_y + 10, top_label, 11, "start");
  svg.text(lx + 20, bar_y + bar_h, bottom_label, 11, "start");
  svg.text(lx, bar_y + bar_h + 16, neutral ? "lower" : "worse", 10, "start", "#333333", "bold");
}

/// The footer: the gradient verdict and what the marks mean.
void draw_footer(Svg& svg, const GridStats* g, const HeatmapGrid& grid, const ColourScale& scale) {
  const double foot = grid.grid_top + grid.body_h() + 22;
  const bool flat = !(grid.hi > grid.lo);
  std::string verdict = "gradient? —";
  if (g && flat && !grid.means.empty()) {
    verdict = "gradient? no — the same value in every cell";
  } else if (g) {
    verdict = "gradient? " + std::string(stats::to_string(g->gradient.verdict)) + " — Spearman ρ(bits K+V, mean) = " +
              fixed(g->gradient.rho, 2) + ", p = " + format_p(g->gradient.p) + " over " +
              std::to_string(g->gradient.n) + " cells";
  }
  svg.text(16, foot, verdict, 11, "start", "#333333");
  svg.text(16, foot + 17, "Δ = cell − reference on common items · * p < 0.05 after Holm (McNemar or Wilcoxon) · " +
           scale.caption(), 11, "start", "#555555");
}

}  // namespace

std::string heatmap_svg(const RunData& data, const RunSummary& summary, const std::string& model,
                        const std::string& probe, const std::string& metric) {
  const GridStats* g = summary.grid(model, probe, metric);
  HeatmapGrid grid;
  grid_axes(data, model, grid);
  grid_means(data, summary, model, probe, metric, grid);
  grid_layout(grid);
  const ColourScale scale = scale_for(data, summary, model, probe, metric, grid.means);

  const std::string title = probe + " · " + metric + " — " + model;
  Svg svg(grid.width, grid.height, title);
  svg.text(16, 26, title, 16, "start", "#111111", "bold");
  draw_subtitle(svg, data, model, grid, scale, g ? g->higher_is_better : true);
  draw_axes(svg, grid);
  draw_cells(svg, data, summary, model, probe, metric, grid, scale);
  draw_legend(svg, grid, scale, "scale-" + slug(probe) + "-" + slug(metric) + "-" + slug(model));
  draw_footer(svg, g, grid, scale);
  return svg.finish();
}

}  // namespace kvsweep::report
