#pragma once
/// A minimal SVG text builder and the colour scales the figures share; it only appends strings.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvsweep::report {

/// Builds one standalone SVG document (white background, one font stack, a <title>).
class Svg {
 public:
  Svg(double width, double height, std::string_view title);

  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view stroke = "none",
            double stroke_width = 0, std::string_view extra = "");
  /// `anchor` is start, middle or end; `extra` is appended inside the tag verbatim (e.g. a transform).
  void text(double x, double y, std::string_view content, double size, std::string_view anchor = "start",
            std::string_view fill = "#222222", std::string_view weight = "normal", std::string_view extra = "");
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
            std::string_view dash = "");
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, double width,
                std::string_view dash = "");
  /// Verbatim markup (defs, groups); the caller keeps it well-formed.
  void raw(std::string_view markup);

  std::string finish() const;

 private:
  double m_width;
  double m_height;
  std::string m_body;
  std::string m_title;
};

/// A coordinate or length: at most two decimals, trailing zeros dropped ("12", "12.5").
std::string coord(double v);

/// Viridis (matplotlib's perceptually uniform map) at t in [0, 1], as "#rrggbb"; t is clamped.
std::string viridis(double t);
/// Black or white, whichever reads better on viridis(t).
std::string ink_on_viridis(double t);

/// Okabe & Ito's colour-blind-safe qualitative palette, cycled.
std::string palette(std::size_t index);
/// Stroke dash patterns, cycled; index 0 is solid ("").
std::string dash_pattern(std::size_t index);

/// A step of 1, 2 or 5 × 10^k giving at most `max_ticks` ticks over `range` (> 0).
double nice_step(double range, int max_ticks);

}  // namespace kvsweep::report
