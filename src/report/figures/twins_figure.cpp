#include "kvsweep/report/figures/twins_figure.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "kvsweep/report/figures/svg.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

std::string twins_flips_svg(const RunData& data, const TwinsBins& g) {
  const std::string title = g.probe + ": flip rate vs margin — " + g.model;
  const std::size_t n_bins = g.cells.empty() ? 0 : g.cells.front().bins.size();
  const double width = 780, height = 440, left = 70, right = width - 210, top = 64, bottom = height - 70;
  const auto px = [&](std::size_t bin) {
    return n_bins <= 1 ? (left + right) / 2
                       : left + 30 + static_cast<double>(bin) / static_cast<double>(n_bins - 1) * (right - left - 60);
  };
  const auto py = [&](double rate) { return bottom - rate * (bottom - top); };

  Svg svg(width, height, title);
  svg.text(16, 26, title, 16, "start", "#111111", "bold");
  svg.text(16, 44,
           "bins of the reference's measured margin (nats, true answer vs best twin); bars: Wilson 95 % intervals",
           11, "start", "#555555");
  for (double y = 0; y <= 1.0 + 1e-9; y += 0.2) {
    svg.line(left, py(y), right, py(y), "#e6e6e6", 1);
    svg.text(left - 8, py(y) + 4, fixed(y, 1), 11, "end", "#444444");
  }
  svg.text(18, (top + bottom) / 2, "flip rate", 12, "middle", "#333333", "bold",
           "transform=\"rotate(-90 18 " + coord((top + bottom) / 2) + ")\"");
  for (std::size_t b = 0; b < n_bins; ++b) {
    const auto& bin = g.cells.front().bins[b];
    svg.text(px(b), bottom + 18, bin.label, 11, "middle", "#444444");
    // How many items the bin holds (the same items in every cell).
    std::size_t n = 0;
    for (const auto& c : g.cells) n = std::max(n, c.bins[b].n);
    svg.text(px(b), bottom + 32, "n = " + std::to_string(n), 10, "middle", "#777777");
  }
  svg.text((left + right) / 2, bottom + 52, "margin bin (nats)", 12, "middle", "#333333", "bold");

  for (std::size_t i = 0; i < g.cells.size(); ++i) {
    const auto& c = g.cells[i];
    const std::string colour = palette(i);
    std::vector<std::pair<double, double>> points;
    for (std::size_t b = 0; b < c.bins.size(); ++b) {
      const auto& bin = c.bins[b];
      if (bin.n == 0 || !std::isfinite(bin.rate)) continue;
      // Cells side by side within a bin, so intervals do not hide each other.
      const double x = px(b) + (static_cast<double>(i) - static_cast<double>(g.cells.size() - 1) / 2) * 5;
      points.emplace_back(x, py(bin.rate));
      svg.line(x, py(bin.ci.lower), x, py(bin.ci.upper), colour, 1.5);
      svg.rect(x - 3, py(bin.rate) - 3, 6, 6, colour);
    }
    if (points.size() > 1) svg.polyline(points, colour, 2, dash_pattern(i));
    const double ly = top + 8 + 20 * static_cast<double>(i);
    svg.line(right + 16, ly, right + 40, ly, colour, 2, dash_pattern(i));
    svg.text(right + 46, ly + 4, data.cells()[c.cell].label() + (data.cells()[c.cell].is_reference ? " (ref)" : ""),
             11, "start", "#222222");
  }
  return svg.finish();
}

}  // namespace kvsweep::report
