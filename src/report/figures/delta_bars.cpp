#include "kvsweep/report/figures/delta_bars.hpp"

#include <algorithm>
#include <cmath>

#include "kvsweep/report/format.hpp"
#include "kvsweep/report/figures/svg.hpp"

namespace kvsweep::report {

std::string delta_bars_svg(const DeltaChart& chart, std::vector<DeltaBar> bars) {
  std::stable_sort(bars.begin(), bars.end(), [&](const DeltaBar& a, const DeltaBar& b) {
    return chart.higher_is_better ? a.test->delta > b.test->delta : a.test->delta < b.test->delta;
  });

  double extent = 0.0;
  std::vector<double> deltas;
  for (const auto& b : bars) {
    deltas.push_back(b.test->delta);
    for (double v : {b.test->delta, b.test->delta_ci.lower, b.test->delta_ci.upper}) {
      if (std::isfinite(v)) extent = std::max(extent, std::fabs(v));
    }
  }
  if (!(extent > 0)) extent = 0.01;
  const double step = nice_step(2 * extent, 8);
  extent = std::ceil(extent / step) * step;
  const int dec = std::max(decimals_for(deltas), step < 0.01 ? 3 : 2);

  std::size_t label_chars = 8;
  for (const auto& b : bars) label_chars = std::max(label_chars, b.label.size());
  const double left = 24 + 7.2 * static_cast<double>(label_chars);
  const double plot_w = 440, row_h = 26, top = 78;
  const double right = left + plot_w;
  const double rows = static_cast<double>(std::max<std::size_t>(bars.size(), 1));
  const double bottom = top + row_h * rows;
  const double width = std::max(right + 70, 680.0), height = bottom + 60;
  auto px = [&](double d) { return left + (d + extent) / (2 * extent) * plot_w; };

  Svg svg(width, height, chart.title);
  svg.text(16, 26, chart.title, 16, "start", "#111111", "bold");
  svg.text(16, 44, chart.subtitle, 11, "start", "#555555");
  svg.text(16, 60,
           std::string(chart.higher_is_better ? "higher" : "lower") +
               " is better · blue: better, vermillion: worse · pale: not significant (Holm p ≥ 0.05) · *: significant",
           11, "start", "#555555");

  for (double x = -extent; x <= extent + 1e-12; x += step) {
    svg.line(px(x), top - 4, px(x), bottom, "#eeeeee", 1);
    svg.text(px(x), bottom + 16, signed_fixed(x, dec), 10, "middle", "#444444");
  }
  svg.text((left + right) / 2, bottom + 36, "Δ " + chart.metric, 12, "middle", "#333333", "bold");

  for (std::size_t i = 0; i < bars.size(); ++i) {
    const ReferenceTest& t = *bars[i].test;
    const double y = top + row_h * static_cast<double>(i);
    const bool better = chart.higher_is_better ? t.delta > 0 : t.delta < 0;
    const std::string color = t.delta == 0 ? "#888888" : better ? "#0072b2" : "#d55e00";
    const double x0 = px(0), x1 = px(t.delta);
    svg.rect(std::min(x0, x1), y + 5, std::max(std::fabs(x1 - x0), 1.0), row_h - 10, color, "none", 0,
             t.significant ? "" : "fill-opacity=\"0.4\"");
    if (std::isfinite(t.delta_ci.lower) && std::isfinite(t.delta_ci.upper)) {
      const double cy = y + row_h / 2;
      svg.line(px(t.delta_ci.lower), cy, px(t.delta_ci.upper), cy, "#222222", 1);
      svg.line(px(t.delta_ci.lower), cy - 4, px(t.delta_ci.lower), cy + 4, "#222222", 1);
      svg.line(px(t.delta_ci.upper), cy - 4, px(t.delta_ci.upper), cy + 4, "#222222", 1);
    }
    svg.text(left - 8, y + row_h / 2 + 4, bars[i].label, 11, "end");
    // The value sits on the other side of zero, clear of the bar, its whisker and the row label.
    const bool negative = t.delta < 0;
    svg.text(px(0) + (negative ? 6 : -6), y + row_h / 2 + 4, signed_fixed(t.delta, dec) + (t.significant ? " *" : ""),
             10, negative ? "start" : "end", "#333333");
  }
  svg.line(px(0), top - 4, px(0), bottom, "#222222", 1.2);
  if (bars.empty()) svg.text((left + right) / 2, top + row_h / 2 + 4, chart.empty_text, 13, "middle", "#888888");
  return svg.finish();
}

}  // namespace kvsweep::report
