/// The Markdown renderer of report::Document.

#include <algorithm>

#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

std::string inline_markdown(const Text& text) {
  std::string out;
  for (const auto& s : text) {
    switch (s.style) {
      case Span::Style::plain: out += md_cell(s.text); break;
      case Span::Style::strong: out += "**" + md_cell(s.text) + "**"; break;
      case Span::Style::code: out += md_code(s.text); break;
      case Span::Style::link: out += "[" + md_cell(s.text) + "](" + s.href + ")"; break;
    }
  }
  return out;
}

struct BlockMarkdown {
  const MarkdownOptions& options;

  std::string operator()(const Heading& h) const {
    return std::string(static_cast<std::size_t>(h.level), '#') + " " + md_cell(h.text) + "\n";
  }
  std::string operator()(const Paragraph& p) const {
    std::string out;
    for (const auto& line : p.lines) out += inline_markdown(line) + "\n";
    return out;
  }
  std::string operator()(const List& l) const {
    std::string out;
    for (const auto& item : l.items) out += "- " + inline_markdown(item) + "\n";
    return out;
  }
  std::string operator()(const Preformatted& p) const {
    // A fence longer than any run of backticks inside, so no line of the text can close it.
    std::size_t run = 0, longest = 0;
    for (char c : p.text) longest = std::max(longest, run = c == '`' ? run + 1 : 0);
    const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
    return fence + "text\n" + p.text + fence + "\n";
  }
  std::string operator()(const FigureBlock& f) const {
    if (options.figure_files) return "![" + md_cell(f.title) + "](" + f.file + ")\n";
    return md_cell(f.title) + " (a figure of index.html)\n";
  }
  std::string operator()(const TableBlock& t) const { return render_markdown(t.table); }
};

}  // namespace

std::string render_markdown(const Table& table) {
  if (table.header.empty()) return "";
  std::string out = "|";
  for (const auto& h : table.header) out += " " + md_cell(h) + " |";
  out += "\n|";
  for (std::size_t i = 0; i < table.header.size(); ++i) {
    const bool right = i < table.numeric.size() && table.numeric[i];
    out += right ? "---:|" : "---|";
  }
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + md_cell(cell) + " |";
    out += "\n";
  }
  return out;
}

std::string render_markdown(const Document& doc, const MarkdownOptions& options) {
  // One blank line between blocks, whatever they are.
  std::string out;
  for (const auto& block : doc.blocks()) {
    std::string text = std::visit(BlockMarkdown{options}, block);
    if (text.empty()) continue;
    if (!out.empty()) out += "\n";
    out += text;
  }
  return out;
}

}  // namespace kvsweep::report
