#include "kvsweep/report/figures/tradeoff.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kvsweep/report/format.hpp"
#include "kvsweep/report/analysis/recommend.hpp"
#include "kvsweep/report/figures/svg.hpp"

namespace kvsweep::report {

std::string tradeoff_metric(const RunData& data, const RunSummary& summary, const std::string& probe) {
  const ProbeDef* def = data.probe(probe);
  if (def == nullptr) return "";
  for (const auto& m : def->metrics) {
    if (!m.is_judged()) continue;
    for (std::size_t cell = 0; cell < data.cells().size(); ++cell) {
      const MetricStats* s = summary.find(cell, probe, m.name);
      if (s != nullptr && s->summary.n > 0) return m.name;
    }
  }
  return "";
}

std::string tradeoff_svg(const RunData& data, const RunSummary& summary, const std::string& model,
                         const std::string& probe, std::optional<std::size_t> recommended) {
  const std::string metric = tradeoff_metric(data, summary, probe);
  const ProbeDef* def = data.probe(probe);
  const probe::MetricSpec* spec = def ? probe::find_metric(def->metrics, metric) : nullptr;
  const bool higher = spec == nullptr || spec->higher_is_better();
  struct Point {
    std::size_t cell;
    double mib;
    double value;
  };
  std::vector<Point> points;
  for (std::size_t index : data.grid_order()) {
    const CellDef& c = data.cells()[index];
    if (c.group() != model || !std::isfinite(c.kv_mib)) continue;
    const MetricStats* s = summary.find(index, probe, metric);
    if (s == nullptr || s->summary.n == 0 || !std::isfinite(s->summary.mean)) continue;
    points.push_back({index, c.kv_mib, s->summary.mean});
  }
  std::vector<double> cost, quality;
  for (const auto& p : points) {
    cost.push_back(p.mib);
    quality.push_back(higher ? p.value : -p.value);
  }
  const std::vector<std::size_t> frontier = pareto_frontier(cost, quality);

  const double width = 720, height = 440;
  const double left = 76, right = width - 30, top = 64, bottom = height - 58;
  double x_max = 0, y_min = 0, y_max = 0;
  bool first = true;
  for (const auto& p : points) {
    x_max = std::max(x_max, p.mib);
    y_min = first ? p.value : std::min(y_min, p.value);
    y_max = first ? p.value : std::max(y_max, p.value);
    first = false;
  }
  if (x_max <= 0) x_max = 1;
  const double pad = std::max((y_max - y_min) * 0.1, std::max(std::abs(y_max), 1.0) * 0.02);
  y_min -= pad;
  y_max += pad;
  auto px = [&](double mib) { return left + mib / (x_max * 1.08) * (right - left); };
  auto py = [&](double v) { return bottom - (v - y_min) / (y_max - y_min) * (bottom - top); };

  const std::string title = probe + ": " + metric + " vs KV memory — " + model;
  Svg svg(width, height, title);
  svg.text(16, 26, title, 16, "start", "#111111", "bold");
  svg.text(16, 44,
           std::string(higher ? "higher" : "lower") +
               " is better · x: KV buffer at the run's -c · dashed: frontier · square: reference · " +
               (recommended ? "ring: recommended" : "no cell recommended (kvsweep recommend says why)"),
           11, "start", "#555555");
  const double y_step = nice_step(y_max - y_min, 6);
  for (double y = std::ceil(y_min / y_step) * y_step; y <= y_max + 1e-9; y += y_step) {
    svg.line(left, py(y), right, py(y), "#e6e6e6", 1);
    svg.text(left - 8, py(y) + 4, fixed(y, y_step < 0.1 ? 3 : y_step < 1 ? 2 : 0), 11, "end", "#444444");
  }
  const double x_step = nice_step(x_max * 1.08, 8);
  for (double x = 0; x <= x_max * 1.08 + 1e-9; x += x_step) {
    svg.line(px(x), bottom, px(x), bottom + 5, "#444444", 1);
    svg.text(px(x), bottom + 18, fixed(x, x_step < 1 ? 2 : 0), 11, "middle", "#444444");
  }
  svg.line(left, bottom, right, bottom, "#444444", 1);
  svg.line(left, top, left, bottom, "#444444", 1);
  svg.text((left + right) / 2, height - 14, "KV cache MiB", 12, "middle", "#333333", "bold");
  const double mid_y = (top + bottom) / 2;
  svg.text(20, mid_y, metric, 12, "middle", "#333333", "bold", "transform=\"rotate(-90 20 " + coord(mid_y) + ")\"");

  std::vector<std::pair<double, double>> line;
  for (std::size_t i : frontier) line.emplace_back(px(points[i].mib), py(points[i].value));
  if (line.size() > 1) svg.polyline(line, "#0072b2", 2, "5 3");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const CellDef& c = data.cells()[p.cell];
    const double x = px(p.mib), y = py(p.value);
    const bool on_frontier = std::find(frontier.begin(), frontier.end(), i) != frontier.end();
    const std::string fill = on_frontier ? "#0072b2" : "#999999";
    if (c.is_reference) {
      svg.rect(x - 5, y - 5, 10, 10, fill, "#111111", 1.5);
    } else {
      svg.raw("<circle cx=\"" + coord(x) + "\" cy=\"" + coord(y) + "\" r=\"4.5\" fill=\"" + fill + "\"/>\n");
    }
    if (recommended == p.cell) {
      svg.raw("<circle class=\"recommended\" cx=\"" + coord(x) + "\" cy=\"" + coord(y) +
              "\" r=\"9\" fill=\"none\" stroke=\"#d55e00\" stroke-width=\"2.5\"/>\n");
    }
    // Cells at the same point (same size, same mean) stack their labels instead of overprinting.
    std::size_t same = 0;
    for (std::size_t j = 0; j < i; ++j) same += points[j].mib == p.mib && points[j].value == p.value;
    svg.text(x + 8, y - 7 + 12.0 * static_cast<double>(same) + (same ? 7.0 : 0.0), c.types() + (c.is_reference ? " (ref)" : ""), 10, "start",
             recommended == p.cell ? "#d55e00" : "#333333", recommended == p.cell ? "bold" : "normal");
  }
  if (points.empty()) svg.text(width / 2, height / 2, "no cell with a KV size and values", 12, "middle", "#666666");
  return svg.finish();
}

}  // namespace kvsweep::report
