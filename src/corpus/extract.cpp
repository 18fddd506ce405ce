#include "kvsweep/corpus/extract.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <unordered_set>

namespace kvsweep::corpus {

std::string_view to_string(Language language) {
  switch (language) {
    case Language::python: return "python";
    case Language::javascript: return "javascript";
    case Language::php: return "php";
  }
  return "?";
}

core::Expected<Language> language_of(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".py") return Language::python;
  if (ext == ".js" || ext == ".mjs" || ext == ".cjs") return Language::javascript;
  if (ext == ".php") return Language::php;
  return core::fail(core::ErrorKind::invalid,
                    path.string() + ": unsupported file type '" + ext + "' (supported: .py, .js, .mjs, .cjs, .php)");
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || text[i] == '\r') {
      lines.emplace_back(text.substr(start, i - start));
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  if (start < text.size()) lines.emplace_back(text.substr(start));
  return lines;
}

namespace {

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_ident_char(char c) { return is_ident_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

std::vector<std::string> body_of(const std::vector<std::string>& lines, int first, int last) {
  std::vector<std::string> body;
  for (int line = first; line <= last && line <= static_cast<int>(lines.size()); ++line) {
    body.push_back(lines[static_cast<std::size_t>(line - 1)]);
  }
  return body;
}

// ---------------------------------------------------------------------------------------
// Python
// ---------------------------------------------------------------------------------------

// One logical line (Python's NEWLINE-terminated statement line). `code` is its text with
// comments removed, string literals reduced to "" and physical line breaks to spaces;
// `code_line[i]` is the 1-based physical line of code[i].
struct LogicalLine {
  int first = 0;
  int last = 0;
  int indent = 0;
  std::string code;
  std::vector<int> code_line;
};

int indent_width(std::string_view line) {
  int col = 0;
  for (char c : line) {
    if (c == ' ') ++col;
    else if (c == '\t') col = (col / 8 + 1) * 8;  // the tokenizer's tab stops
    else if (c == '\f') col = 0;
    else break;
  }
  return col;
}

std::vector<LogicalLine> python_logical_lines(const std::vector<std::string>& lines) {
  std::vector<LogicalLine> out;
  LogicalLine current;
  bool open = false;      // a logical line is in progress
  int depth = 0;          // bracket depth
  char quote = 0;         // inside a string literal with this quote char
  bool triple = false;
  for (std::size_t li = 0; li < lines.size(); ++li) {
    const std::string& line = lines[li];
    const int lineno = static_cast<int>(li) + 1;
    std::size_t pos = 0;
    if (!open) {
      // Blank and comment-only lines are not statements and carry no indentation.
      const auto first = line.find_first_not_of(" \t\f");
      if (first == std::string::npos || line[first] == '#') continue;
      current = LogicalLine{};
      current.first = lineno;
      current.indent = indent_width(line);
      open = true;
      pos = first;
    } else if (quote == 0) {
      current.code += ' ';
      current.code_line.push_back(lineno);
    }
    bool continued = false;  // backslash continuation outside a string
    while (pos < line.size()) {
      const char c = line[pos];
      if (quote != 0) {
        if (c == '\\') {
          pos += 2;
          continue;
        }
        if (c == quote) {
          if (!triple) {
            quote = 0;
            ++pos;
            continue;
          }
          if (line.compare(pos, 3, std::string(3, quote)) == 0) {
            quote = 0;
            pos += 3;
            continue;
          }
        }
        ++pos;
        continue;
      }
      if (c == '#') break;
      if (c == '\\' && pos + 1 == line.size()) {
        continued = true;
        break;
      }
      if (c == '\'' || c == '"') {
        quote = c;
        triple = line.compare(pos, 3, std::string(3, c)) == 0;
        pos += triple ? 3 : 1;
        current.code += "\"\"";
        current.code_line.push_back(lineno);
        current.code_line.push_back(lineno);
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      current.code += c;
      current.code_line.push_back(lineno);
      ++pos;
    }
    // A one-quote string runs past the line only after a backslash; otherwise it is
    // unterminated (a syntax error) and we close it here.
    if (quote != 0 && !triple && !(line.size() > 0 && line.back() == '\\')) quote = 0;
    if (quote != 0 || depth > 0 || continued) continue;
    current.last = lineno;
    out.push_back(std::move(current));
    open = false;
  }
  if (open) {
    current.last = static_cast<int>(lines.size());
    out.push_back(std::move(current));
  }
  return out;
}

// The identifier starting at pos (after spaces), or "".
std::string word_at(const std::string& code, std::size_t& pos) {
  while (pos < code.size() && (code[pos] == ' ' || code[pos] == '\t' || code[pos] == '\f')) ++pos;
  const std::size_t start = pos;
  if (pos < code.size() && is_ident_start(code[pos])) {
    while (pos < code.size() && is_ident_char(code[pos])) ++pos;
  }
  return code.substr(start, pos - start);
}

struct PyDef {
  std::string name;
  int def_line = 0;
  int depth = 0;         // depth of the FunctionDef node in the ast (Module = 0)
  int body_first = 0;
  int body_last = 0;
};

// What the last compound statement of a suite was, so that a following clause
// (elif / else / except / finally) knows how deep its body sits in the ast:
// `elif` nests one If deeper per clause, `except` bodies sit under an ExceptHandler node.
struct Chain {
  enum Kind { none, if_chain, try_chain, loop, other } kind = none;
  int stmt_depth = 0;
  int elifs = 0;
};

struct Suite {
  int header_indent = -1;  // indentation of the header that opened it (-1: the module)
  int body_depth = 1;      // ast depth of the statements in it
  int def_index = -1;      // index into defs when the header is a def
  Chain last;
};

std::vector<Target> extract_python_impl(std::string_view source, int min_body_lines) {
  const std::vector<std::string> lines = split_lines(source);
  const std::vector<LogicalLine> logical = python_logical_lines(lines);
  std::vector<PyDef> defs;
  std::vector<Suite> stack{Suite{}};

  for (std::size_t i = 0; i < logical.size(); ++i) {
    const LogicalLine& ll = logical[i];
    // A line no deeper than a suite's header closes that suite (comments and blank lines
    // never reach here: they are not logical lines).
    while (stack.size() > 1 && ll.indent <= stack.back().header_indent) stack.pop_back();
    for (Suite& s : stack) {
      if (s.def_index >= 0) defs[static_cast<std::size_t>(s.def_index)].body_last = ll.last;
    }
    Suite& suite = stack.back();
    std::size_t pos = 0;
    std::string kw = word_at(ll.code, pos);
    std::size_t after_kw = pos;
    if (kw == "async") {
      std::size_t p2 = pos;
      const std::string next = word_at(ll.code, p2);
      if (next == "def" || next == "for" || next == "with") {
        kw = next;
        after_kw = p2;
      }
    }
    const bool opens_block = i + 1 < logical.size() && logical[i + 1].indent > ll.indent;
    const int depth = suite.body_depth;
    int body_depth = depth + 1;
    Chain& chain = suite.last;
    if (kw == "if") {
      chain = Chain{Chain::if_chain, depth, 0};
    } else if (kw == "elif" && chain.kind == Chain::if_chain) {
      ++chain.elifs;
      body_depth = chain.stmt_depth + chain.elifs + 1;
    } else if (kw == "else" && chain.kind == Chain::if_chain) {
      body_depth = chain.stmt_depth + chain.elifs + 1;
    } else if ((kw == "else" || kw == "finally") && chain.kind != Chain::none) {
      body_depth = chain.stmt_depth + 1;
    } else if (kw == "try") {
      chain = Chain{Chain::try_chain, depth, 0};
    } else if (kw == "except" && chain.kind == Chain::try_chain) {
      body_depth = chain.stmt_depth + 2;
    } else if (kw == "for" || kw == "while") {
      chain = Chain{Chain::loop, depth, 0};
    } else if (opens_block) {
      chain = Chain{Chain::other, depth, 0};
    } else {
      chain = Chain{};
    }

    int def_index = -1;
    if (kw == "def") {
      std::size_t p = after_kw;
      std::string name = word_at(ll.code, p);
      if (!name.empty()) {
        PyDef def;
        def.name = std::move(name);
        def.def_line = ll.first;
        def.depth = depth;
        if (opens_block) {
          // ast gives a decorated first statement the line of its def / class keyword.
          std::size_t j = i + 1;
          while (j + 1 < logical.size() && !logical[j].code.empty() && logical[j].code[0] == '@' &&
                 logical[j + 1].indent == logical[j].indent) {
            ++j;
          }
          def.body_first = logical[j].first;
          def.body_last = logical[i + 1].last;
          def_index = static_cast<int>(defs.size());
          defs.push_back(std::move(def));
        } else {
          // `def f(...): statement` — the body is the rest of this logical line, from the
          // first code after the header's colon (the first one outside brackets, not `:=`).
          int bracket = 0;
          std::size_t colon = std::string::npos;
          for (std::size_t k = p; k < ll.code.size(); ++k) {
            const char c = ll.code[k];
            if (c == '(' || c == '[' || c == '{') ++bracket;
            else if (c == ')' || c == ']' || c == '}') --bracket;
            else if (c == ':' && bracket == 0 && (k + 1 >= ll.code.size() || ll.code[k + 1] != '=')) {
              colon = k;
              break;
            }
          }
          if (colon != std::string::npos) {
            const auto body_pos = ll.code.find_first_not_of(" \t\f", colon + 1);
            if (body_pos != std::string::npos) {
              def.body_first = ll.code_line[body_pos];
              def.body_last = ll.last;
              defs.push_back(std::move(def));
            }
          }
        }
      }
    }
    if (opens_block) {
      Suite next;
      next.header_indent = ll.indent;
      next.body_depth = body_depth;
      next.def_index = def_index;
      stack.push_back(next);
    }
  }

  // ast.walk is breadth first; nodes of one depth come in source order.
  std::stable_sort(defs.begin(), defs.end(), [](const PyDef& a, const PyDef& b) {
    return a.depth != b.depth ? a.depth < b.depth : a.def_line < b.def_line;
  });
  std::vector<Target> targets;
  std::unordered_set<std::string> seen;
  for (const PyDef& def : defs) {
    if (seen.contains(def.name)) continue;
    const int count = def.body_last - def.body_first + 1;
    if (count < min_body_lines) continue;
    seen.insert(def.name);
    Target t;
    t.name = def.name;
    t.language = Language::python;
    t.start_line = def.def_line;
    t.body_start_line = def.body_first;
    t.body = body_of(lines, def.body_first, def.body_last);
    targets.push_back(std::move(t));
  }
  return targets;
}

}  // namespace

std::vector<Target> extract_python(std::string_view source, int min_body_lines) {
  return extract_python_impl(source, min_body_lines);
}

std::vector<Target> extract_source(std::string_view source, Language language, int min_body_lines) {
  switch (language) {
    case Language::python: return extract_python(source, min_body_lines);
    case Language::javascript: return extract_javascript(source, min_body_lines);
    case Language::php: return extract_php(source, min_body_lines);
  }
  return {};
}

core::Expected<Corpus> build_corpus(std::span<const SourceFile> files, int min_body_lines) {
  if (files.empty()) return core::fail(core::ErrorKind::invalid, "corpus: no files");
  Corpus corpus;
  auto first_language = language_of(files.front().path);
  if (!first_language) return std::unexpected(first_language.error());
  corpus.language = *first_language;
  for (const SourceFile& f : files) {
    auto language = language_of(f.path);
    if (!language) return std::unexpected(language.error());
    if (*language != corpus.language) {
      return core::fail(core::ErrorKind::invalid, "corpus: mixed languages: " + files.front().path + " is " +
                                                      std::string(to_string(corpus.language)) + ", " + f.path +
                                                      " is " + std::string(to_string(*language)));
    }
    corpus.files.push_back(f.path);
  }
  if (files.size() == 1) {
    corpus.text = files.front().text;
    corpus.targets = extract_source(corpus.text, corpus.language, min_body_lines);
    for (Target& t : corpus.targets) t.file = files.front().path;
  } else {
    const std::string marker = corpus.language == Language::python ? "#" : "//";
    std::unordered_set<std::string> seen;
    int line_offset = 0;
    for (const SourceFile& f : files) {
      const std::string header = marker + " ====== " + f.path + " ======\n";
      corpus.text += header;
      corpus.text += f.text;
      const bool ends_with_newline = !f.text.empty() && f.text.back() == '\n';
      if (!ends_with_newline) corpus.text += '\n';
      corpus.text += '\n';
      for (Target& t : extract_source(f.text, corpus.language, min_body_lines)) {
        // A name an earlier file already has would make the question ambiguous.
        if (!seen.insert(t.name).second) continue;
        t.file = f.path;
        t.start_line += line_offset + 1;
        t.body_start_line += line_offset + 1;
        corpus.targets.push_back(std::move(t));
      }
      line_offset += 1 + static_cast<int>(std::count(f.text.begin(), f.text.end(), '\n')) +
                     (ends_with_newline ? 0 : 1) + 1;
    }
  }
  corpus.total_lines = static_cast<int>(std::count(corpus.text.begin(), corpus.text.end(), '\n')) + 1;
  return corpus;
}

core::Expected<Corpus> load_corpus(std::span<const std::string> paths, const std::filesystem::path& base_dir,
                                   int min_body_lines) {
  std::vector<SourceFile> files;
  for (const std::string& p : paths) {
    std::filesystem::path full(p);
    if (full.is_relative() && !base_dir.empty()) full = base_dir / full;
    std::ifstream in(full, std::ios::binary);
    if (!in) return core::fail(core::ErrorKind::io, full.string() + ": cannot read");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    std::string raw = buffer.str();
    // Universal newlines, as Python's Path.read_text gives the published harness.
    std::string text;
    text.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\r') {
        text += '\n';
        if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
      } else {
        text += raw[i];
      }
    }
    files.push_back(SourceFile{p, std::move(text)});
  }
  return build_corpus(files, min_body_lines);
}

}  // namespace kvsweep::corpus
