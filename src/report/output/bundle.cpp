#include "kvsweep/report/output/bundle.hpp"

#include "kvsweep/report/output/csv.hpp"
#include "kvsweep/report/figures/figures.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/output/report_document.hpp"
#include "kvsweep/report/output/summary_json.hpp"

namespace kvsweep::report {

std::optional<std::set<Format>> parse_format(std::string_view name) {
  if (name == "md") return std::set<Format>{Format::md};
  if (name == "csv") return std::set<Format>{Format::csv};
  if (name == "json") return std::set<Format>{Format::json};
  if (name == "svg") return std::set<Format>{Format::svg};
  if (name == "html") return std::set<Format>{Format::html};
  if (name == "all") return std::set<Format>{Format::md, Format::csv, Format::json, Format::svg, Format::html};
  return std::nullopt;
}

std::vector<OutputFile> render_report(const RunData& data, const RunSummary& summary, const std::set<Format>& formats,
                                      const Generator& generator, Heatmaps heatmaps) {
  std::vector<OutputFile> out;
  const bool need_svg = formats.contains(Format::svg) || formats.contains(Format::html);
  const std::vector<Figure> figures =
      render_figures(data, summary, need_svg ? RenderSvg::yes : RenderSvg::no, heatmaps);
  if (formats.contains(Format::json)) out.push_back({"summary.json", write_summary_json(data, summary, generator)});
  if (formats.contains(Format::csv)) {
    out.push_back({"long.csv", write_long_csv(data)});
    for (const auto& [probe, metric] : grid_metrics(data, summary)) {
      out.push_back({std::filesystem::path("grids") / (slug(probe) + "-" + slug(metric) + ".csv"),
                     write_grid_csv(data, summary, probe, metric)});
    }
  }
  // One document, rendered once per format: report.md and index.html say the same.
  if (formats.contains(Format::md) || formats.contains(Format::html)) {
    std::vector<std::string> files;
    for (const auto& f : out) files.push_back(f.path.generic_string());
    if (formats.contains(Format::md)) files.emplace_back("report.md");
    if (formats.contains(Format::html)) files.emplace_back("index.html");
    // Figures only where a figure is written: as SVG files beside report.md, or inside index.html.
    const std::span<const Figure> shown = need_svg ? std::span<const Figure>(figures) : std::span<const Figure>();
    const Document doc = report_document(data, summary, shown, files);
    if (formats.contains(Format::md)) {
      out.push_back({"report.md", render_markdown(doc, {.figure_files = formats.contains(Format::svg)})});
    }
    if (formats.contains(Format::html)) out.push_back({"index.html", render_html(doc)});
  }
  if (formats.contains(Format::svg)) {
    for (const auto& f : figures) out.push_back({f.file, f.svg});
  }
  return out;
}

}  // namespace kvsweep::report
