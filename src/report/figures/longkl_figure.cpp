#include "kvsweep/report/figures/longkl_figure.hpp"

#include <algorithm>
#include <cmath>

#include "kvsweep/report/figures/svg.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

std::size_t index_of(const std::vector<std::string>& list, const std::string& value) {
  return static_cast<std::size_t>(std::find(list.begin(), list.end(), value) - list.begin());
}

/// Where the plot lies: bin index → x (the bins double, so equal steps are a log scale), KL → y.
struct Frame {
  double width = 780, height = 450;
  double left = 80, right = width - 220, top = 64, bottom = height - 58;
  double y_max = 0.01;
  std::size_t bins = 1;
  double px(std::size_t bin) const {
    return bins < 2 ? (left + right) / 2 : left + static_cast<double>(bin) / static_cast<double>(bins - 1) * (right - left);
  }
  double py(double kl) const { return bottom - kl / y_max * (bottom - top); }
};

}  // namespace

std::string longkl_depth_svg(const RunData& data, const DepthCurves& curves) {
  Frame f;
  f.bins = curves.bins.size();
  double highest = 0;
  for (const auto& c : curves.cells)
    for (const auto& s : c.bins)
      if (std::isfinite(s.mean_kl)) highest = std::max(highest, s.mean_kl);
  const double step = nice_step(std::max(highest, 1e-4), 6);
  f.y_max = std::max(step, std::ceil(highest / step) * step);
  Svg svg(f.width, f.height, curves.probe + ": KL by depth — " + curves.model);
  svg.text(f.width / 2, 26, curves.probe + ": mean KL (a lower bound) by depth — " + curves.model, 15, "middle",
           "#222222", "bold");
  svg.text(f.width / 2, 44, "KL(reference ‖ cell) over the reference's top-K and a tail bucket; the positions of each bin pooled",
           11, "middle", "#555555");
  for (double y = 0; y <= f.y_max + 1e-12; y += step) {
    svg.line(f.left, f.py(y), f.right, f.py(y), "#e6e6e6", 1);
    svg.text(f.left - 8, f.py(y) + 4, shortest(std::round(y / step) * step), 11, "end", "#444444");
  }
  for (std::size_t b = 0; b < curves.bins.size(); ++b) {
    svg.line(f.px(b), f.bottom, f.px(b), f.bottom + 5, "#444444", 1);
    svg.text(f.px(b), f.bottom + 18, curves.bins[b], 11, "middle", "#444444");
  }
  svg.line(f.left, f.bottom, f.right, f.bottom, "#444444", 1);
  svg.line(f.left, f.top, f.left, f.bottom, "#444444", 1);
  svg.text((f.left + f.right) / 2, f.height - 14, "depth (bin start; each bin doubles)", 12, "middle", "#333333", "bold");
  svg.text(24, (f.top + f.bottom) / 2, "mean KL, nats (lower bound)", 12, "middle", "#333333", "bold",
           "transform=\"rotate(-90 24 " + coord((f.top + f.bottom) / 2) + ")\"");
  const double lx = f.right + 22;
  svg.text(lx, f.top + 2, "K/V  (deepest bin)", 11, "start", "#333333", "bold");
  for (std::size_t i = 0; i < curves.cells.size(); ++i) {
    const DepthCell& c = curves.cells[i];
    const CellDef& def = data.cells()[c.cell];
    const std::string color = palette(index_of(data.k_types(), def.type_k));
    const std::string dash = dash_pattern(index_of(data.v_types(), def.type_v));
    const double width = def.is_reference ? 3.5 : 2;
    std::vector<std::pair<double, double>> points;
    for (std::size_t b = 0; b < c.bins.size(); ++b)
      if (std::isfinite(c.bins[b].mean_kl)) points.emplace_back(f.px(b), f.py(c.bins[b].mean_kl));
    svg.polyline(points, color, width, dash);
    for (const auto& [x, y] : points)
      svg.raw("<circle cx=\"" + coord(x) + "\" cy=\"" + coord(y) + "\" r=\"3\" fill=\"" + color + "\"/>\n");
    const double y = f.top + 22 + 18 * static_cast<double>(i);
    svg.line(lx, y - 4, lx + 30, y - 4, color, width, dash);
    svg.text(lx + 36, y, def.types() + "  " + fixed(c.bins.back().mean_kl, 4) + (def.is_reference ? "  ref" : ""), 11);
  }
  return svg.finish();
}

}  // namespace kvsweep::report
