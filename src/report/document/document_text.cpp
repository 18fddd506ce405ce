/// The plain-text renderer of report::Document, for a terminal: what `kvsweep report --format summary`
/// and the end of `kvsweep run` print.

#include <algorithm>

#include "kvsweep/report/document/document.hpp"

namespace kvsweep::report {

namespace {

constexpr std::size_t kWidth = 100;

/// Columns a UTF-8 string takes: its code points (every character kvsweep prints is one column wide).
std::size_t columns(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string inline_text(const Text& text) {
  std::string out;
  for (const auto& s : text) out += s.style == Span::Style::link ? s.text + " (" + s.href + ")" : s.text;
  return out;
}

/// Words wrapped at kWidth columns; lines after the first start with `indent`.
std::string wrap(const std::string& text, const std::string& first, const std::string& indent) {
  std::string out = first, word;
  std::size_t at = columns(first);
  bool line_empty = true;
  const auto flush = [&] {
    if (word.empty()) return;
    const std::size_t w = columns(word);
    if (!line_empty && at + 1 + w > kWidth) {
      out += "\n" + indent;
      at = columns(indent);
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++at;
    }
    out += word;
    at += w;
    line_empty = false;
    word.clear();
  };
  for (char c : text) {
    if (c == ' ' || c == '\n') flush();
    else word += c;
  }
  flush();
  return out + "\n";
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  const std::size_t w = columns(s);
  const std::string fill(width > w ? width - w : 0, ' ');
  return right ? fill + s : s + fill;
}

std::string text_table(const Table& t) {
  if (t.header.empty()) return "";
  std::vector<std::size_t> widths(t.header.size(), 0);
  for (std::size_t i = 0; i < t.header.size(); ++i) widths[i] = columns(t.header[i]);
  for (const auto& row : t.rows) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], columns(row[i]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
      const bool right = i < t.numeric.size() && t.numeric[i];
      out += (i ? "  " : "") + pad(cells[i], widths[i], right);
    }
    while (out.ends_with(' ')) out.pop_back();
    return out + "\n";
  };
  std::string out = line(t.header);
  std::vector<std::string> rule;
  for (std::size_t w : widths) rule.emplace_back(w, '-');
  out += line(rule);
  for (const auto& row : t.rows) out += line(row);
  return out;
}

struct BlockText {
  std::string operator()(const Heading& h) const {
    if (h.level >= 3) return h.text + ":\n";
    return h.text + "\n" + std::string(columns(h.text), h.level == 1 ? '=' : '-') + "\n";
  }
  std::string operator()(const Paragraph& p) const {
    std::string out;
    const std::string mark = p.tone == Paragraph::Tone::warning ? "! " : "";
    for (const auto& l : p.lines) out += wrap(inline_text(l), mark, std::string(mark.size(), ' '));
    return out;
  }
  std::string operator()(const List& l) const {
    std::string out;
    for (const auto& item : l.items) out += wrap(inline_text(item), "- ", "  ");
    return out;
  }
  std::string operator()(const Preformatted& p) const { return p.text; }
  std::string operator()(const FigureBlock& f) const { return "figure: " + f.title + " (" + f.file + ")\n"; }
  std::string operator()(const TableBlock& t) const { return text_table(t.table); }
};

}  // namespace

std::string render_text(const Document& doc) {
  std::string out;
  for (const auto& block : doc.blocks()) {
    std::string text = std::visit(BlockText{}, block);
    if (text.empty()) continue;
    if (!out.empty()) out += "\n";
    out += text;
  }
  return out;
}

}  // namespace kvsweep::report
