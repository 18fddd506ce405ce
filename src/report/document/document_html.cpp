/// The HTML renderer of report::Document: one self-contained page.

#include <set>

#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

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

std::string inline_html(const Text& text) {
  std::string out;
  for (const auto& s : text) {
    switch (s.style) {
      case Span::Style::plain: out += xml_escape(s.text); break;
      case Span::Style::strong: out += "<strong>" + xml_escape(s.text) + "</strong>"; break;
      case Span::Style::code: out += "<code>" + xml_escape(s.text) + "</code>"; break;
      case Span::Style::link: out += "<a href=\"" + xml_escape(s.href) + "\">" + xml_escape(s.text) + "</a>"; break;
    }
  }
  return out;
}

std::string html_table(const Table& t) {
  if (t.header.empty()) return "";
  std::string out = "<table>\n<thead><tr>";
  const auto open = [&](std::size_t i, const char* tag) {
    const bool right = i < t.numeric.size() && t.numeric[i];
    return "<" + std::string(tag) + (right ? " class=\"num\">" : ">");
  };
  for (std::size_t i = 0; i < t.header.size(); ++i) out += open(i, "th") + xml_escape(t.header[i]) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) out += open(i, "td") + xml_escape(row[i]) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string inline_svg(const std::string& svg) {
  // An XML declaration is not allowed inside HTML.
  const auto start = svg.find("<svg");
  return start == std::string::npos ? svg : svg.substr(start);
}

struct BlockHtml {
  std::set<std::string>& ids;

  std::string operator()(const Heading& h) const {
    const std::string tag = "h" + std::to_string(h.level);
    std::string id;
    if (h.level == 2) {
      // An anchor per section: the heading's slug, made unique.
      id = slug(h.text);
      for (int n = 2; !ids.insert(id).second; ++n) id = slug(h.text) + "-" + std::to_string(n);
    }
    return "<" + tag + (id.empty() ? "" : " id=\"" + xml_escape(id) + "\"") + ">" + xml_escape(h.text) + "</" + tag +
           ">\n";
  }
  std::string operator()(const Paragraph& p) const {
    const char* open = p.tone == Paragraph::Tone::context   ? "<p class=\"context\">"
                       : p.tone == Paragraph::Tone::warning ? "<p class=\"warn\">"
                                                            : "<p>";
    std::string out = open;
    for (std::size_t i = 0; i < p.lines.size(); ++i) out += (i ? "<br>\n" : "") + inline_html(p.lines[i]);
    return out + "</p>\n";
  }
  std::string operator()(const List& l) const {
    std::string out = "<ul>\n";
    for (const auto& item : l.items) out += "<li>" + inline_html(item) + "</li>\n";
    return out + "</ul>\n";
  }
  std::string operator()(const Preformatted& p) const { return "<pre>" + xml_escape(p.text) + "</pre>\n"; }
  std::string operator()(const FigureBlock& f) const {
    const std::string body = f.svg.empty() ? "<img src=\"" + xml_escape(f.file) + "\" alt=\"" + xml_escape(f.title) + "\">\n"
                                           : inline_svg(f.svg);
    return "<figure id=\"" + xml_escape(f.file) + "\">\n" + body + "<figcaption>" + xml_escape(f.title) + " (<a href=\"" +
           xml_escape(f.file) + "\">" + xml_escape(f.file) + "</a>)</figcaption>\n</figure>\n";
  }
  std::string operator()(const TableBlock& t) const { return html_table(t.table); }
};

}  // namespace

std::string render_html(const Document& doc) {
  const std::string title = xml_escape(doc.title());
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + title +
                    "</title>\n<style>\n" + kStyle + "</style>\n</head>\n<body>\n";
  std::set<std::string> ids;
  for (const auto& block : doc.blocks()) out += std::visit(BlockHtml{ids}, block);
  return out + "</body>\n</html>\n";
}

}  // namespace kvsweep::report
