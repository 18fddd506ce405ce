#include "kvsweep/report/document/document.hpp"

namespace kvsweep::report {

Span plain(std::string text) { return {Span::Style::plain, std::move(text), {}}; }
Span strong(std::string text) { return {Span::Style::strong, std::move(text), {}}; }
Span code(std::string text) { return {Span::Style::code, std::move(text), {}}; }
Span link(std::string text, std::string href) { return {Span::Style::link, std::move(text), std::move(href)}; }

Document& Document::heading(int level, std::string text) {
  blocks_.emplace_back(Heading{level, std::move(text)});
  return *this;
}

Document& Document::paragraph(std::string text, Paragraph::Tone tone) {
  return paragraph(Text{plain(std::move(text))}, tone);
}

Document& Document::paragraph(Text text, Paragraph::Tone tone) {
  blocks_.emplace_back(Paragraph{{std::move(text)}, tone});
  return *this;
}

Document& Document::lines(std::vector<Text> lines, Paragraph::Tone tone) {
  if (!lines.empty()) blocks_.emplace_back(Paragraph{std::move(lines), tone});
  return *this;
}

Document& Document::note(std::string text) { return paragraph(std::move(text), Paragraph::Tone::warning); }

Document& Document::list(std::vector<Text> items) {
  if (!items.empty()) blocks_.emplace_back(List{std::move(items)});
  return *this;
}

Document& Document::table(Table table) {
  blocks_.emplace_back(TableBlock{std::move(table)});
  return *this;
}

Document& Document::preformatted(std::string text) {
  if (!text.ends_with('\n')) text += '\n';
  blocks_.emplace_back(Preformatted{std::move(text)});
  return *this;
}

Document& Document::figure(std::string title, std::string file, std::string svg) {
  blocks_.emplace_back(FigureBlock{std::move(title), std::move(file), std::move(svg)});
  return *this;
}

Document& Document::append(const Document& other) {
  blocks_.insert(blocks_.end(), other.blocks_.begin(), other.blocks_.end());
  return *this;
}

std::string Document::title() const {
  for (const auto& b : blocks_) {
    if (const auto* h = std::get_if<Heading>(&b); h && h->level == 1) return h->text;
  }
  return "";
}

std::vector<Heading> Document::sections() const {
  std::vector<Heading> out;
  for (const auto& b : blocks_) {
    if (const auto* h = std::get_if<Heading>(&b); h && h->level > 1) out.push_back(*h);
  }
  return out;
}

}  // namespace kvsweep::report
