#include "kvsweep/report/html.hpp"

#include "kvsweep/report/calibration.hpp"
#include "kvsweep/report/context.hpp"
#include "kvsweep/report/csv.hpp"
#include "kvsweep/report/cost.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/markdown.hpp"
#include "kvsweep/report/recommend_headline.hpp"
#include "kvsweep/report/tables.hpp"
#include "kvsweep/report/variant_effect.hpp"

namespace kvsweep::report {

namespace {

std::string html_table(const Table& t) {
  if (t.header.empty() || t.rows.empty()) return "<p>No values recorded.</p>\n";
  std::string out = "<table>\n<thead><tr>";
  for (std::size_t i = 0; i < t.header.size(); ++i) {
    const bool right = i < t.numeric.size() && t.numeric[i];
    out += std::string(right ? "<th class=\"num\">" : "<th>") + xml_escape(t.header[i]) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool right = i < t.numeric.size() && t.numeric[i];
      out += std::string(right ? "<td class=\"num\">" : "<td>") + xml_escape(row[i]) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string inline_svg(const std::string& svg) {
  // An XML declaration is not allowed inside HTML.
  const auto start = svg.find("<svg");
  return start == std::string::npos ? svg : svg.substr(start);
}

constexpr const char* kStyle =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;"
    "color:#222}\n"
    "h1{font-size:1.6rem}h2{margin-top:2.5rem;border-bottom:1px solid #ddd}h3{margin-top:1.6rem}\n"
    "table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}\n"
    "th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left}th{background:#f5f5f5}\n"
    ".num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "pre{background:#f8f8f8;padding:.6rem;border:1px solid #eee;overflow-x:auto}\n"
    "figure{margin:1rem 0}figcaption{font-size:.85rem;color:#555}svg{max-width:100%;height:auto}\n"
    ".context{color:#555;font-size:.9rem}\n"
    ".warn{color:#8a4b00;background:#fff4e0;padding:.3rem .5rem}\n";

}  // namespace

std::string write_html(const RunData& data, const RunSummary& summary, std::span<const Figure> figures) {
  const std::string name = xml_escape(data.name());
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>kvsweep report: " +
                    name + "</title>\n<style>\n" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>kvsweep report: " + name + "</h1>\n";
  out += "<p class=\"context\">" + xml_escape(context_line(data)) + "</p>\n";
  out += "<p>" + xml_escape(method_note(data, summary)) + "</p>\n";
  out += "<h2>Verdict</h2>\n<ul>\n";
  for (const auto& [group, h] : verdicts(data))
    out += "<li>" + xml_escape(group) + ": <strong>" + xml_escape(h.verdict) + "</strong>: " + xml_escape(h.sentence) + "</li>\n";
  out += "</ul>\n<p>(<code>kvsweep recommend</code> gives each cell's verdicts and the margins.)</p>\n";
  out += "<p>Files: <a href=\"summary.json\">summary.json</a> · <a href=\"long.csv\">long.csv</a> · "
         "<a href=\"report.md\">report.md</a>";
  const auto metrics = grid_metrics(data, summary);
  for (const auto& [probe, metric] : metrics) {
    const std::string file = "grids/" + slug(probe) + "-" + slug(metric) + ".csv";
    out += " · <a href=\"" + xml_escape(file) + "\">" + xml_escape(file) + "</a>";
  }
  out += "</p>\n";

  const std::vector<VariantEffect> effects = variant_effects(data, summary);
  for (const auto& probe : data.probes()) {
    out += "<h2>" + xml_escape(probe.name) + "</h2>\n";
    out += html_table(headline_table(data, summary, probe.name));
    for (const auto& line : calibration_lines(data, summary, probe)) {
      const bool warn = line.find("Warning:") != std::string::npos;
      out += std::string(warn ? "<p class=\"warn\">" : "<p>") + xml_escape(line) + "</p>\n";
    }
    out += "<h3>Cells</h3>\n" + html_table(cell_table(data, summary, probe.name));
    out += "<h3>Gradient and K vs V</h3>\n" + html_table(gradient_table(data, summary, probe.name));
    if (const Table t = variant_effect_table(effects, probe.name); !t.rows.empty())
      out += "<h3>Variant effect</h3>\n<p>Each variant's cell against the same model and K/V in " +
             xml_escape(effects.front().base) + " (paired items; * p &lt; " + shortest(summary.options.alpha) +
             " after Holm across the variant's cells).</p>\n" + html_table(t);
    bool first_figure = true;
    for (const auto& f : figures) {
      if (f.probe != probe.name) continue;
      if (first_figure) out += "<h3>Figures</h3>\n";
      first_figure = false;
      out += "<figure id=\"" + xml_escape(f.file) + "\">\n" + inline_svg(f.svg) + "<figcaption>" + xml_escape(f.title) +
             " (<a href=\"" + xml_escape(f.file) + "\">" + xml_escape(f.file) + "</a>)</figcaption>\n</figure>\n";
    }
    bool first_grid = true;
    for (const auto& [p, metric] : metrics) {
      if (p != probe.name) continue;
      for (const auto& model : data.groups()) {
        if (summary.grid(model, p, metric) == nullptr) continue;
        if (first_grid) out += "<h3>Grids</h3>\n";
        first_grid = false;
        out += "<p>" + xml_escape(metric + " — " + model) + "</p>\n<pre>" +
               xml_escape(grid_block(data, summary, model, p, metric)) + "</pre>\n";
      }
    }
  }
  out += cost_html(data, cell_costs(data, std::nullopt, summary.options));
  out += "<h2>Cell outcomes</h2>\n" + html_table(outcome_table(data, summary));
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace kvsweep::report
