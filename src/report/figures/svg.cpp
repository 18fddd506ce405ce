#include "kvsweep/report/figures/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

Svg::Svg(double width, double height, std::string_view title) : m_width(width), m_height(height), m_title(title) {}

void Svg::rect(double x, double y, double w, double h, std::string_view fill, std::string_view stroke,
               double stroke_width, std::string_view extra) {
  m_body += "<rect x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" width=\"" + coord(w) + "\" height=\"" + coord(h) +
            "\" fill=\"" + std::string(fill) + "\"";
  if (stroke != "none") m_body += " stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + coord(stroke_width) + "\"";
  if (!extra.empty()) m_body += " " + std::string(extra);
  m_body += "/>\n";
}

void Svg::text(double x, double y, std::string_view content, double size, std::string_view anchor,
               std::string_view fill, std::string_view weight, std::string_view extra) {
  m_body += "<text x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" font-size=\"" + coord(size) + "\"";
  if (anchor != "start") m_body += " text-anchor=\"" + std::string(anchor) + "\"";
  if (fill != "#222222") m_body += " fill=\"" + std::string(fill) + "\"";
  if (weight != "normal") m_body += " font-weight=\"" + std::string(weight) + "\"";
  if (!extra.empty()) m_body += " " + std::string(extra);
  m_body += ">" + xml_escape(content) + "</text>\n";
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
               std::string_view dash) {
  m_body += "<line x1=\"" + coord(x1) + "\" y1=\"" + coord(y1) + "\" x2=\"" + coord(x2) + "\" y2=\"" + coord(y2) +
            "\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + coord(width) + "\"";
  if (!dash.empty()) m_body += " stroke-dasharray=\"" + std::string(dash) + "\"";
  m_body += "/>\n";
}

void Svg::polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, double width,
                   std::string_view dash) {
  m_body += "<polyline fill=\"none\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + coord(width) +
            "\" stroke-linejoin=\"round\"";
  if (!dash.empty()) m_body += " stroke-dasharray=\"" + std::string(dash) + "\"";
  m_body += " points=\"";
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i) m_body += " ";
    m_body += coord(points[i].first) + "," + coord(points[i].second);
  }
  m_body += "\"/>\n";
}

void Svg::raw(std::string_view markup) { m_body += markup; }

std::string Svg::finish() const {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         coord(m_width) + "\" height=\"" + coord(m_height) + "\" viewBox=\"0 0 " + coord(m_width) + " " +
         coord(m_height) + "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n<title>" +
         xml_escape(m_title) + "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" + m_body +
         "</svg>\n";
}

std::string coord(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = fixed(v, 2);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

namespace {

// Viridis sampled at 0, 1/8, …, 1 (matplotlib's _viridis_data); linear in between.
constexpr std::array<std::array<int, 3>, 9> kViridis{{
    {68, 1, 84},
    {71, 44, 122},
    {59, 81, 139},
    {44, 113, 142},
    {33, 144, 141},
    {39, 173, 129},
    {92, 200, 99},
    {170, 220, 50},
    {253, 231, 37},
}};

std::array<double, 3> viridis_rgb(double t) {
  t = std::clamp(std::isnan(t) ? 0.5 : t, 0.0, 1.0);
  const double pos = t * 8.0;
  const std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(pos), 7);
  const double f = pos - static_cast<double>(i);
  std::array<double, 3> rgb{};
  for (std::size_t c = 0; c < 3; ++c) rgb[c] = kViridis[i][c] + f * (kViridis[i + 1][c] - kViridis[i][c]);
  return rgb;
}

}  // namespace

std::string viridis(double t) {
  const auto rgb = viridis_rgb(t);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(rgb[0])),
                static_cast<int>(std::lround(rgb[1])), static_cast<int>(std::lround(rgb[2])));
  return buf;
}

std::string ink_on_viridis(double t) {
  const auto rgb = viridis_rgb(t);
  // Relative luminance (ITU-R BT.709 weights) on the 0–255 scale.
  const double y = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
  return y > 140.0 ? "#111111" : "#ffffff";
}

std::string palette(std::size_t index) {
  // Okabe & Ito (2008), without the yellow that vanishes on white.
  static constexpr std::array<const char*, 7> kColors{"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                                      "#e69f00", "#56b4e9", "#000000"};
  return kColors[index % kColors.size()];
}

std::string dash_pattern(std::size_t index) {
  static constexpr std::array<const char*, 5> kDashes{"", "7 4", "2 3", "9 3 2 3", "14 5"};
  return kDashes[index % kDashes.size()];
}

double nice_step(double range, int max_ticks) {
  if (!(range > 0) || max_ticks < 1) return 1.0;
  const double raw = range / max_ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10.0 * magnitude;
}

}  // namespace kvsweep::report
