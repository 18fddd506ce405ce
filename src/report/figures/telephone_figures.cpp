#include "kvsweep/report/figures/telephone_figures.hpp"

#include <algorithm>
#include <cmath>

#include "kvsweep/probe/telephone/telephone.hpp"
#include "kvsweep/report/figures/delta_bars.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/figures/svg.hpp"

namespace kvsweep::report {

namespace {

std::size_t index_of(const std::vector<std::string>& list, const std::string& value) {
  auto it = std::find(list.begin(), list.end(), value);
  return static_cast<std::size_t>(it - list.begin());
}

double threshold_of(const RunData& data, const std::string& probe) {
  const ProbeDef* def = data.probe(probe);
  if (def && def->config.is_object() && def->config.contains("threshold") && def->config["threshold"].is_number()) {
    return def->config["threshold"].get<double>();
  }
  return std::nan("");
}

/// One cell's line in the hops figure: its mean similarity to the original at each hop.
struct HopLine {
  std::size_t cell;
  std::vector<double> means;
};

/// The hops figure's lines in grid order (K rows, then V columns), with what sizes its axes.
struct HopLines {
  std::vector<HopLine> lines;
  std::size_t max_hops = 0;
  double lowest = 1.0;     // the lowest mean (or the threshold), for the y axis
  std::size_t chains = 0;  // the most ok chains behind one cell's means
};

HopLines hop_lines(const RunData& data, const std::string& model, const std::string& probe) {
  HopLines out;
  for (const auto& k : data.k_types()) {
    for (const auto& v : data.v_types()) {
      const auto cell = data.find_cell(model, k, v);
      if (!cell) continue;
      auto means = mean_similarity_by_hop(data, *cell, probe);
      if (means.empty()) continue;
      std::size_t ok = 0;
      for (const auto& item : data.items(*cell, probe)) ok += item.ok;
      out.chains = std::max(out.chains, ok);
      out.max_hops = std::max(out.max_hops, means.size());
      for (double m : means) {
        if (!std::isnan(m)) out.lowest = std::min(out.lowest, m);
      }
      out.lines.push_back({*cell, std::move(means)});
    }
  }
  return out;
}

/// Where the hops figure's plot lies, and its scales: hop → x, similarity → y.
struct HopFrame {
  double width = 780, height = 450;
  double left = 70, right = width - 200, top = 64, bottom = height - 58;
  double y_min = 0, y_max = 1.0, x_max = 2;
  double px(double hop) const { return left + (hop - 1.0) / (x_max - 1.0) * (right - left); }
  double py(double sim) const { return bottom - (sim - y_min) / (y_max - y_min) * (bottom - top); }
  double mid_y() const { return (top + bottom) / 2; }
};

/// Grid lines, the axes and their titles, and the probe's threshold.
void draw_hop_axes(Svg& svg, const HopFrame& f, double threshold) {
  const double y_step = nice_step(f.y_max - f.y_min, 6);
  for (double y = f.y_min; y <= f.y_max + 1e-9; y += y_step) {
    svg.line(f.left, f.py(y), f.right, f.py(y), "#e6e6e6", 1);
    svg.text(f.left - 8, f.py(y) + 4, fixed(y, y_step < 0.1 ? 2 : 1), 11, "end", "#444444");
  }
  // Hop 1, then the multiples of a round step (5, 10, … rather than 6, 11, …).
  const double x_step = std::max(1.0, nice_step(f.x_max - 1.0, 10));
  for (double x = 1; x <= f.x_max + 1e-9; x = (std::floor(x / x_step) + 1) * x_step) {
    svg.line(f.px(x), f.bottom, f.px(x), f.bottom + 5, "#444444", 1);
    svg.text(f.px(x), f.bottom + 18, fixed(x, 0), 11, "middle", "#444444");
  }
  svg.line(f.left, f.bottom, f.right, f.bottom, "#444444", 1);
  svg.line(f.left, f.top, f.left, f.bottom, "#444444", 1);
  svg.text((f.left + f.right) / 2, f.height - 14, "hop", 12, "middle", "#333333", "bold");
  svg.text(22, f.mid_y(), "similarity to original", 12, "middle", "#333333", "bold",
           "transform=\"rotate(-90 22 " + coord(f.mid_y()) + ")\"");
  if (!std::isnan(threshold) && threshold >= f.y_min && threshold <= f.y_max) {
    svg.line(f.left, f.py(threshold), f.right, f.py(threshold), "#888888", 1, "4 3");
    svg.text(f.left + 6, f.py(threshold) + 13, "threshold " + fixed(threshold, 2), 10, "start", "#666666");
  }
}

/// The lines: colour by K type, dash by V type, references heavy and drawn last so they sit on top.
void draw_hop_lines(Svg& svg, const RunData& data, const HopFrame& f, std::vector<HopLine>& lines) {
  std::stable_sort(lines.begin(), lines.end(), [&](const HopLine& a, const HopLine& b) {
    return !data.cells()[a.cell].is_reference && data.cells()[b.cell].is_reference;
  });
  for (const auto& line : lines) {
    const CellDef& c = data.cells()[line.cell];
    std::vector<std::pair<double, double>> points;
    for (std::size_t h = 0; h < line.means.size(); ++h) {
      if (!std::isnan(line.means[h])) points.emplace_back(f.px(static_cast<double>(h + 1)), f.py(line.means[h]));
    }
    const std::string color = palette(index_of(data.k_types(), c.type_k));
    const std::string dash = dash_pattern(index_of(data.v_types(), c.type_v));
    svg.polyline(points, color, c.is_reference ? 3.5 : 2, dash);
    if (points.size() == 1) svg.raw("<circle cx=\"" + coord(points[0].first) + "\" cy=\"" + coord(points[0].second) +
                                    "\" r=\"3\" fill=\"" + color + "\"/>\n");
  }
}

/// The legend in grid order: each cell's line and its final similarity.
void draw_hop_legend(Svg& svg, const RunData& data, const HopFrame& f, std::vector<HopLine>& lines) {
  std::stable_sort(lines.begin(), lines.end(), [](const HopLine& a, const HopLine& b) { return a.cell < b.cell; });
  std::vector<const HopLine*> ordered;
  for (const auto& k : data.k_types()) {
    for (const auto& v : data.v_types()) {
      for (const auto& line : lines) {
        const CellDef& c = data.cells()[line.cell];
        if (c.type_k == k && c.type_v == v) ordered.push_back(&line);
      }
    }
  }
  const double lx = f.right + 22;
  svg.text(lx, f.top + 2, "K/V  (final)", 11, "start", "#333333", "bold");
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    const CellDef& c = data.cells()[ordered[i]->cell];
    const double y = f.top + 22 + 18 * static_cast<double>(i);
    const std::string color = palette(index_of(data.k_types(), c.type_k));
    svg.line(lx, y - 4, lx + 30, y - 4, color, c.is_reference ? 3.5 : 2, dash_pattern(index_of(data.v_types(), c.type_v)));
    double final_value = std::nan("");
    for (auto it = ordered[i]->means.rbegin(); it != ordered[i]->means.rend(); ++it) {
      if (!std::isnan(*it)) {
        final_value = *it;
        break;
      }
    }
    svg.text(lx + 36, y, c.types() + "  " + fixed(final_value, 3) + (c.is_reference ? "  ref" : ""),
             11, "start");
  }
}

}  // namespace

std::vector<double> mean_similarity_by_hop(const RunData& data, std::size_t cell, const std::string& probe) {
  std::vector<double> sum;
  std::vector<std::size_t> count;
  for (const auto& item : data.items(cell, probe)) {
    if (!item.ok) continue;
    for (const probe::TelephoneHop& hop : probe::telephone_hops(item.response)) {
      const auto index = static_cast<std::size_t>(hop.hop - 1);
      if (index >= sum.size()) {
        sum.resize(index + 1, 0.0);
        count.resize(index + 1, 0);
      }
      sum[index] += hop.sim_original;
      ++count[index];
    }
  }
  std::vector<double> out(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i) out[i] = count[i] ? sum[i] / static_cast<double>(count[i]) : std::nan("");
  return out;
}

std::string telephone_hops_svg(const RunData& data, const std::string& model, const std::string& probe) {
  HopLines hops = hop_lines(data, model, probe);
  const double threshold = threshold_of(data, probe);
  if (!std::isnan(threshold)) hops.lowest = std::min(hops.lowest, threshold);
  HopFrame frame;
  frame.y_min = std::clamp(std::floor(hops.lowest * 10.0) / 10.0, 0.0, 0.9);
  frame.x_max = static_cast<double>(std::max<std::size_t>(hops.max_hops, 2));

  const std::string title = probe + ": similarity to the original vs hop — " + model;
  Svg svg(frame.width, frame.height, title);
  svg.text(16, 26, title, 16, "start", "#111111", "bold");
  svg.text(16, 44,
           "mean cosine similarity (sim_original) over up to " + std::to_string(hops.chains) +
               " chains per cell · colour: K type · dash: V type · heavy: reference",
           11, "start", "#555555");
  draw_hop_axes(svg, frame, threshold);
  draw_hop_lines(svg, data, frame, hops.lines);
  draw_hop_legend(svg, data, frame, hops.lines);
  if (hops.lines.empty()) svg.text((frame.left + frame.right) / 2, frame.mid_y(), "no hops recorded", 14, "middle", "#888888");
  return svg.finish();
}

std::string telephone_delta_metric(const RunData& data, const RunSummary& summary, const std::string& probe) {
  const ProbeDef* def = data.probe(probe);
  if (def) {
    for (const auto& m : def->metrics) {
      if (m.name == "final_similarity") return m.name;
    }
  }
  const MetricRoles* roles = summary.roles_of(probe);
  return roles ? roles->main_metric : "";
}

std::string telephone_delta_svg(const RunData& data, const RunSummary& summary, const std::string& probe) {
  const std::string metric = telephone_delta_metric(data, summary, probe);
  bool higher_is_better = true;
  if (const ProbeDef* def = data.probe(probe)) {
    for (const auto& m : def->metrics) {
      if (m.name == metric) higher_is_better = m.higher_is_better();
    }
  }
  std::vector<DeltaBar> bars;
  const bool many_models = data.groups().size() > 1;
  std::string ref_label;
  for (const auto& r : summary.results) {
    if (r.probe != probe) continue;
    const CellDef& c = data.cells()[r.cell];
    if (c.is_reference && ref_label.empty()) ref_label = c.types();
    for (const auto& m : r.metrics) {
      if (m.metric == metric && m.vs_reference && !std::isnan(m.vs_reference->delta)) {
        bars.push_back({(many_models ? c.group() + " " : std::string()) + c.types(), &*m.vs_reference});
      }
    }
  }
  const std::string title = probe + ": Δ " + metric + " vs reference" +
                            (ref_label.empty() || many_models ? std::string() : " (" + ref_label + ")") + ", sorted";
  return delta_bars_svg({title, "Δ = cell − reference, mean over the items both answered · whiskers: 95% bootstrap CI",
                         metric, higher_is_better, "no cell to compare"},
                        std::move(bars));
}

}  // namespace kvsweep::report
