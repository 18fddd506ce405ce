#pragma once
/// The report document: what a command says, as blocks (heading, paragraph, table, preformatted text,
/// figure, list), built once and rendered by one writer per format (document_markdown.cpp,
/// document_html.cpp, document_text.cpp). A writer never decides what to say, only how: every format
/// has the same sections in the same order because there is one list of blocks.
///
/// The shape is google/benchmark's and llama-bench's (one record schema, one printer per format), with
/// the block kinds of a Markdown document. Text is plain: renderers escape it for their format. Inline
/// emphasis, code and links are spans, so no renderer parses another's markup.

#include <string>
#include <variant>
#include <vector>

namespace kvsweep::report {

/// A run of inline text.
struct Span {
  enum class Style { plain, strong, code, link };
  Style style = Style::plain;
  std::string text;
  std::string href;  // Style::link only
};
/// Inline text: spans in order.
using Text = std::vector<Span>;

Span plain(std::string text);
Span strong(std::string text);
Span code(std::string text);
Span link(std::string text, std::string href);

/// Rows of text cells under a header. An empty header renders nothing; a header without rows renders
/// the header alone (Markdown) or the table's `empty` text (HTML) — see the renderers.
struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // per column: right-aligned
  std::vector<std::vector<std::string>> rows;
};

struct Heading {
  int level = 2;  // 1 is the document's title
  std::string text;
};

/// One paragraph of one or more lines (a line break between them, no blank line).
struct Paragraph {
  enum class Tone { normal, context, warning };
  std::vector<Text> lines;
  Tone tone = Tone::normal;
};

struct List {
  std::vector<Text> items;
};

/// Fixed-width text (a `ctk\ctv` grid): shown as is.
struct Preformatted {
  std::string text;  // ends with a newline
};

/// A figure: its SVG inlined where the format can hold it, else linked by file name.
struct FigureBlock {
  std::string title;
  std::string file;  // relative to the document
  std::string svg;   // "" when not rendered
};

/// A table with its rows, as a block.
struct TableBlock {
  Table table;
};

using Block = std::variant<Heading, Paragraph, List, Preformatted, FigureBlock, TableBlock>;

class Document {
 public:
  Document() = default;
  explicit Document(std::string title) { heading(1, std::move(title)); }

  Document& heading(int level, std::string text);
  Document& paragraph(std::string text, Paragraph::Tone tone = Paragraph::Tone::normal);
  Document& paragraph(Text text, Paragraph::Tone tone = Paragraph::Tone::normal);
  /// A paragraph of several lines; nothing when `lines` is empty.
  Document& lines(std::vector<Text> lines, Paragraph::Tone tone = Paragraph::Tone::normal);
  /// A warning the reader should not miss (Paragraph::Tone::warning).
  Document& note(std::string text);
  Document& list(std::vector<Text> items);
  Document& table(Table table);
  Document& preformatted(std::string text);
  Document& figure(std::string title, std::string file, std::string svg);
  /// Appends another document's blocks (its title too, if it has one).
  Document& append(const Document& other);

  const std::vector<Block>& blocks() const { return blocks_; }
  /// The title: the text of the first level-1 heading ("" without one).
  std::string title() const;
  /// "## Cost", "### Cells", …: every heading below the title, with its level, in order. What a test
  /// compares across formats.
  std::vector<Heading> sections() const;

 private:
  std::vector<Block> blocks_;
};

/// Markdown (GitHub-flavoured): blocks separated by one blank line, tables as pipe tables, figures as
/// `![title](file)` when `figure_files` (the SVG files sit beside the document), else by title.
struct MarkdownOptions {
  bool figure_files = true;
};
std::string render_markdown(const Document& doc, const MarkdownOptions& options = {});
/// A GitHub-flavoured Markdown pipe table ("" for an empty header).
std::string render_markdown(const Table& table);

/// One self-contained HTML page: the document's title as <title>, figures inlined as SVG, level-2
/// headings with an id (the heading's slug) to link to.
std::string render_html(const Document& doc);

/// Plain text for a terminal: headings underlined, tables in aligned columns, figures by title.
std::string render_text(const Document& doc);

}  // namespace kvsweep::report
