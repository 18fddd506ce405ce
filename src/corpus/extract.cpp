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
  }
  return "?";
}

core::Expected<Language> language_of(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".py") return Language::python;
  if (ext == ".js" || ext == ".mjs" || ext == ".cjs") return Language::javascript;
  return core::fail(core::ErrorKind::invalid,
                    path.string() + ": unsupported file type '" + ext + "' (supported: .py, .js, .mjs, .cjs)");
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

// ---------------------------------------------------------------------------------------
// JavaScript
// ---------------------------------------------------------------------------------------

enum class JsKind { ident, punct, string, number, templ, regex };

struct JsToken {
  JsKind kind;
  std::string text;  // for strings: the decoded value (simple escapes only)
  int line = 0;
};

bool js_ident_start(char c) { return is_ident_start(c) || c == '$' || c == '#'; }
bool js_ident_char(char c) { return is_ident_char(c) || c == '$'; }

bool is_js_keyword(std::string_view w) {
  static const std::unordered_set<std::string_view> keywords = {
      "break",  "case",   "catch",  "class",      "const",  "continue", "debugger", "default", "delete",
      "do",     "else",   "export", "extends",    "finally", "for",     "function", "if",      "import",
      "in",     "instanceof", "new", "return",    "super",  "switch",   "this",     "throw",   "try",
      "typeof", "var",    "void",   "while",      "with",   "yield",    "let",      "await",   "of"};
  return keywords.contains(w);
}

// After these tokens a `/` starts a regular expression rather than a division.
bool regex_may_follow(const std::vector<JsToken>& tokens) {
  if (tokens.empty()) return true;
  const JsToken& t = tokens.back();
  switch (t.kind) {
    case JsKind::number:
    case JsKind::string:
    case JsKind::templ:
    case JsKind::regex: return false;
    case JsKind::ident: {
      static const std::unordered_set<std::string_view> before_expr = {
          "return", "typeof", "instanceof", "in",   "of",    "new",  "delete",
          "void",   "throw",  "case",       "do",   "else",  "yield", "await"};
      return before_expr.contains(t.text);
    }
    case JsKind::punct: return t.text != ")" && t.text != "]" && t.text != "}";
  }
  return true;
}

class JsLexer {
 public:
  explicit JsLexer(std::string_view src) : m_src(src) {}

  std::vector<JsToken> run() {
    if (m_src.starts_with("#!")) skip_to_eol();
    while (m_pos < m_src.size()) step();
    return std::move(m_tokens);
  }

 private:
  char at(std::size_t off = 0) const { return m_pos + off < m_src.size() ? m_src[m_pos + off] : '\0'; }

  void advance() {
    if (m_src[m_pos] == '\n') ++m_line;
    else if (m_src[m_pos] == '\r' && at(1) != '\n') ++m_line;
    ++m_pos;
  }

  void skip_to_eol() {
    while (m_pos < m_src.size() && m_src[m_pos] != '\n' && m_src[m_pos] != '\r') ++m_pos;
  }

  void push(JsKind kind, std::string text, int line) { m_tokens.push_back(JsToken{kind, std::move(text), line}); }

  void step() {
    const char c = at();
    if (c == '\n' || c == '\r' || c == ' ' || c == '\t' || c == '\f' || c == '\v') {
      advance();
      return;
    }
    if (c == '/' && at(1) == '/') return skip_to_eol();
    if (c == '/' && at(1) == '*') {
      advance();
      advance();
      while (m_pos < m_src.size() && !(at() == '*' && at(1) == '/')) advance();
      if (m_pos < m_src.size()) {
        advance();
        advance();
      }
      return;
    }
    if (c == '\'' || c == '"') return string_literal(c);
    if (c == '`') {
      advance();
      return template_rest(m_line);
    }
    if (c == '}' && !m_braces.empty() && m_braces.back()) {
      // The end of a `${…}` substitution: back into the template's text.
      m_braces.pop_back();
      advance();
      return template_rest(m_line);
    }
    if (c == '/' && regex_may_follow(m_tokens)) return regex_literal();
    if (js_ident_start(c)) {
      const int line = m_line;
      const std::size_t start = m_pos;
      advance();  // the first character may be `#` (a private name), which js_ident_char refuses
      while (m_pos < m_src.size() && js_ident_char(at())) advance();
      return push(JsKind::ident, std::string(m_src.substr(start, m_pos - start)), line);
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && std::isdigit(static_cast<unsigned char>(at(1))))) {
      const int line = m_line;
      const std::size_t start = m_pos;
      while (m_pos < m_src.size() && (js_ident_char(at()) || at() == '.')) advance();
      return push(JsKind::number, std::string(m_src.substr(start, m_pos - start)), line);
    }
    punctuator();
  }

  void string_literal(char quote) {
    const int line = m_line;
    advance();
    std::string value;
    while (m_pos < m_src.size() && at() != quote && at() != '\n') {
      if (at() == '\\') {
        advance();
        const char e = at();
        switch (e) {
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case 'r': value += '\r'; break;
          case '\n':
          case '\r': break;  // line continuation
          default: value += e; break;
        }
        if (m_pos < m_src.size()) advance();
        continue;
      }
      value += at();
      advance();
    }
    if (at() == quote) advance();
    push(JsKind::string, std::move(value), line);
  }

  // Reads template text up to the closing backtick or the next `${`.
  void template_rest(int line) {
    while (m_pos < m_src.size()) {
      const char c = at();
      if (c == '\\') {
        advance();
        if (m_pos < m_src.size()) advance();
        continue;
      }
      if (c == '`') {
        advance();
        break;
      }
      if (c == '$' && at(1) == '{') {
        advance();
        advance();
        m_braces.push_back(true);
        break;
      }
      advance();
    }
    push(JsKind::templ, "`", line);
  }

  void regex_literal() {
    const int line = m_line;
    const std::size_t start = m_pos;
    advance();
    bool in_class = false;
    while (m_pos < m_src.size() && at() != '\n' && at() != '\r') {
      const char c = at();
      if (c == '\\') {
        advance();
        if (m_pos < m_src.size() && at() != '\n') advance();
        continue;
      }
      if (c == '[') in_class = true;
      else if (c == ']') in_class = false;
      else if (c == '/' && !in_class) {
        advance();
        break;
      }
      advance();
    }
    while (m_pos < m_src.size() && js_ident_char(at())) advance();  // flags
    push(JsKind::regex, std::string(m_src.substr(start, m_pos - start)), line);
  }

  void punctuator() {
    static const std::vector<std::string_view> puncts = {
        ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "?\?=", "=>", "==", "!=",
        "<=",   ">=",  "&&",  "||",  "??",  "?.",  "++",  "--",  "+=",  "-=",  "*=",  "/=", "%=", "&=",
        "|=",   "^=",  "**",  "<<",  ">>"};
    const int line = m_line;
    for (std::string_view p : puncts) {
      if (m_src.substr(m_pos).starts_with(p)) {
        for (std::size_t k = 0; k < p.size(); ++k) advance();
        return push(JsKind::punct, std::string(p), line);
      }
    }
    const char c = at();
    if (c == '{') m_braces.push_back(false);
    if (c == '}' && !m_braces.empty()) m_braces.pop_back();
    advance();
    push(JsKind::punct, std::string(1, c), line);
  }

  std::string_view m_src;
  std::size_t m_pos = 0;
  int m_line = 1;
  std::vector<JsToken> m_tokens;
  std::vector<bool> m_braces;  // open `{`: true when it is a template's `${`
};

bool is_punct(const JsToken& t, std::string_view p) { return t.kind == JsKind::punct && t.text == p; }

bool is_assign_op(const JsToken& t) {
  static const std::unordered_set<std::string_view> ops = {"=",   "+=",  "-=",  "*=",  "/=",   "%=",  "**=",
                                                           "<<=", ">>=", ">>>=", "&=", "|=",   "^=",  "&&=",
                                                           "||=", "?\?="};
  return t.kind == JsKind::punct && ops.contains(t.text);
}

// A property key as esprima's str(key.value) shows it: strings by value (common escapes
// decoded); numbers as written (APPROXIMATE: esprima would print 0x10 as 16).
std::string key_name(const JsToken& t) { return t.text; }

class JsScanner {
 public:
  explicit JsScanner(std::vector<JsToken> tokens) : m_tok(std::move(tokens)) {
    m_match.assign(m_tok.size(), -1);
    m_parent.assign(m_tok.size(), -1);
    std::vector<int> open;
    for (std::size_t i = 0; i < m_tok.size(); ++i) {
      const int idx = static_cast<int>(i);
      m_parent[i] = open.empty() ? -1 : open.back();
      const JsToken& t = m_tok[i];
      if (t.kind != JsKind::punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") {
        open.push_back(idx);
      } else if (t.text == ")" || t.text == "]" || t.text == "}") {
        if (!open.empty()) {
          m_match[static_cast<std::size_t>(open.back())] = idx;
          m_match[i] = open.back();
          open.pop_back();
          m_parent[i] = open.empty() ? -1 : open.back();
        }
      }
    }
    // A class body is the first `{` after `class` inside the same brackets (an `extends`
    // expression keeps its own braces inside parentheses).
    m_class_body.assign(m_tok.size(), false);
    for (std::size_t i = 0; i < m_tok.size(); ++i) {
      if (m_tok[i].kind != JsKind::ident || m_tok[i].text != "class") continue;
      if (i > 0 && (is_punct(m_tok[i - 1], ".") || is_punct(m_tok[i - 1], "?."))) continue;
      if (i + 1 < m_tok.size() && is_punct(m_tok[i + 1], ":")) continue;
      for (std::size_t j = i + 1; j < m_tok.size(); ++j) {
        if (m_parent[j] == m_parent[i] && is_punct(m_tok[j], "{")) {
          m_class_body[j] = true;
          break;
        }
        if (m_parent[j] == m_parent[i] && (is_punct(m_tok[j], ";") || is_punct(m_tok[j], "}"))) break;
      }
    }
  }

  struct Found {
    std::string name;
    long start_token = 0;
    int start_line = 0;
    int brace_line = 0;
    int close_line = 0;
  };

  std::vector<Found> run() {
    std::vector<Found> found;
    for (std::size_t i = 0; i < m_tok.size(); ++i) {
      const JsToken& t = m_tok[i];
      if (t.kind == JsKind::ident && t.text == "function") function_at(i, found);
      else if (t.kind == JsKind::punct && t.text == "(") method_at(i, found);
      else if (is_punct(t, "=>")) arrow_at(i, found);
    }
    // Pre-order of the syntax tree = order of the functions' first tokens.
    std::stable_sort(found.begin(), found.end(),
                     [](const Found& a, const Found& b) { return a.start_token < b.start_token; });
    return found;
  }

 private:

  bool in_range(long i) const { return i >= 0 && i < static_cast<long>(m_tok.size()); }
  // The token at i, or an empty end-of-input token outside the source.
  const JsToken& tok(long i) const { return in_range(i) ? m_tok[static_cast<std::size_t>(i)] : m_none; }
  bool punct_at(long i, std::string_view p) const { return in_range(i) && is_punct(tok(i), p); }
  bool ident_at(long i) const { return in_range(i) && tok(i).kind == JsKind::ident; }

  // True when the expression that starts with a function ending at token `end` ends there too,
  // i.e. the function is not called, indexed or an operand (after `}`: `;` `,` `)` `]` `}`, the
  // end, or a new line that does not begin with punctuation).
  bool ends_expression(long end) const {
    if (!in_range(end + 1)) return true;
    const JsToken& after = tok(end + 1);
    return is_punct(after, ";") || is_punct(after, ",") || is_punct(after, ")") || is_punct(after, "]") ||
           is_punct(after, "}") ||
           (after.line > tok(end).line && after.kind != JsKind::punct && after.kind != JsKind::templ);
  }

  // The name esprima's walk would hand down to a function spanning tokens s..end: it names only
  // a function that is the direct child of a declarator, assignment, property or method.
  std::string hint_before(long s, long end, bool arrow = false) const {
    if (!in_range(s - 1)) return {};
    const JsToken& t = tok(s - 1);
    // `x = (function () {…})`: esprima has no node for parentheses, so the function is still
    // the direct child.
    if (is_punct(t, "(") && m_match[static_cast<std::size_t>(s - 1)] == end + 1) return hint_before(s - 1, end + 1);
    // An arrow with a block body cannot be called or indexed without parentheses.
    if (!arrow && !ends_expression(end)) return {};
    if (is_assign_op(t)) {
      // A default value in a parameter list is an AssignmentPattern: no name.
      const int parent = m_parent[static_cast<std::size_t>(s - 1)];
      if (parent >= 0 && is_punct(m_tok[static_cast<std::size_t>(parent)], "(")) {
        const long close = m_match[static_cast<std::size_t>(parent)];
        if (close >= 0 && (punct_at(close + 1, "{") || punct_at(close + 1, "=>"))) return {};
      }
      // A class field (`x = () => {…}`) is a PropertyDefinition, which esprima's walk does not name.
      if (is_class_body(m_parent[static_cast<std::size_t>(s - 1)])) return {};
      // this.#x = … : a PrivateIdentifier property is not named either.
      const bool member = punct_at(s - 3, ".") || punct_at(s - 3, "?.");
      if (ident_at(s - 2) && (member || !is_js_keyword(tok(s - 2).text)) && !tok(s - 2).text.starts_with("#")) {
        return tok(s - 2).text;
      }
      // a[b] = … : a computed member whose property is an identifier.
      if (punct_at(s - 2, "]") && ident_at(s - 3) && punct_at(s - 4, "[")) return tok(s - 3).text;
      return {};
    }
    if (is_punct(t, ":")) {
      if (!in_range(s - 2)) return {};
      const JsToken& key = tok(s - 2);
      if ((key.kind == JsKind::ident || key.kind == JsKind::string || key.kind == JsKind::number) &&
          (punct_at(s - 3, "{") || punct_at(s - 3, ","))) {
        return key_name(key);
      }
      if (is_punct(key, "]") && ident_at(s - 3) && punct_at(s - 4, "[") &&
          (punct_at(s - 5, "{") || punct_at(s - 5, ","))) {
        return tok(s - 3).text;
      }
    }
    return {};
  }

  void emit(std::string name, long start, long open_brace, std::vector<Found>& found) {
    if (name.empty() || !punct_at(open_brace, "{")) return;
    const int close = m_match[static_cast<std::size_t>(open_brace)];
    if (close < 0) return;
    found.push_back(Found{std::move(name), start, m_tok[static_cast<std::size_t>(start)].line,
                          m_tok[static_cast<std::size_t>(open_brace)].line, m_tok[static_cast<std::size_t>(close)].line});
  }

  void function_at(std::size_t i, std::vector<Found>& found) {
    long start = static_cast<long>(i);
    if (ident_at(start - 1) && tok(start - 1).text == "async") --start;
    long p = static_cast<long>(i) + 1;
    if (punct_at(p, "*")) ++p;
    std::string name;
    if (ident_at(p) && !punct_at(p, "(")) name = tok(p++).text;
    if (!punct_at(p, "(")) return;
    const int close = m_match[static_cast<std::size_t>(p)];
    if (close < 0) return;
    if (name.empty() && punct_at(close + 1, "{")) name = hint_before(start, m_match[static_cast<std::size_t>(close + 1)]);
    emit(std::move(name), start, close + 1, found);
  }

  // `key(params) {` in a class body or object literal: a method named by its key.
  void method_at(std::size_t i, std::vector<Found>& found) {
    const int close = m_match[i];
    if (close < 0 || !punct_at(close + 1, "{")) return;
    long k = static_cast<long>(i) - 1;  // the key's first token
    if (!in_range(k)) return;
    const JsToken& key = tok(k);
    std::string name;
    if (key.kind == JsKind::ident) {
      static const std::unordered_set<std::string_view> not_methods = {
          "if",   "for",    "while", "switch", "catch",  "with",  "function", "return", "typeof",
          "new",  "delete", "void",  "throw",  "await",  "yield", "super",    "import", "do",
          "else", "try",    "finally", "in",   "of",     "instanceof", "async"};
      // Directly inside a class body there are no statements, so any word can be a method name.
      if (not_methods.contains(key.text) && !is_class_body(m_parent[static_cast<std::size_t>(k)])) return;
      name = key.text;
    } else if (key.kind == JsKind::string || key.kind == JsKind::number) {
      name = key.text;
    } else if (is_punct(key, "]") && ident_at(k - 1) && punct_at(k - 2, "[")) {
      name = tok(k - 1).text;  // [key]() {…}: a computed key that is an identifier
      k -= 2;
    } else {
      return;
    }
    long before = k - 1;
    while (before >= 0 && ((ident_at(before) && (tok(before).text == "async" || tok(before).text == "get" ||
                                                  tok(before).text == "set" || tok(before).text == "static")) ||
                           punct_at(before, "*"))) {
      --before;
    }
    if (before < 0) return;
    const bool in_class = is_class_body(m_parent[static_cast<std::size_t>(k)]);
    const bool member_start =
        punct_at(before, "{") || (!in_class && punct_at(before, ",")) ||
        (in_class && (punct_at(before, ";") || punct_at(before, "}") || tok(before).line < tok(k).line));
    if (!member_start) return;
    // esprima names methods by Identifier keys only: a #private key (PrivateIdentifier) is not one.
    if (name.starts_with("#")) name.clear();
    emit(std::move(name), k, close + 1, found);
  }

  bool is_class_body(int brace) const {
    return brace >= 0 && m_class_body[static_cast<std::size_t>(brace)];
  }

  // `(params) => {` or `x => {`, optionally `async`, named by what it is assigned to.
  void arrow_at(std::size_t i, std::vector<Found>& found) {
    const long arrow = static_cast<long>(i);
    long start = -1;
    if (ident_at(arrow - 1)) {
      start = arrow - 1;
    } else if (punct_at(arrow - 1, ")")) {
      start = m_match[static_cast<std::size_t>(arrow - 1)];
    }
    if (start < 0) return;
    if (ident_at(start - 1) && tok(start - 1).text == "async") --start;
    if (!punct_at(arrow + 1, "{")) return;
    emit(hint_before(start, m_match[static_cast<std::size_t>(arrow + 1)], true), start, arrow + 1, found);
  }

  std::vector<JsToken> m_tok;
  JsToken m_none{JsKind::punct, "", 0};
  std::vector<int> m_match;
  std::vector<int> m_parent;
  std::vector<bool> m_class_body;  // per token: a `{` that opens a class body
};

}  // namespace

std::vector<Target> extract_python(std::string_view source, int min_body_lines) {
  return extract_python_impl(source, min_body_lines);
}

std::vector<Target> extract_javascript(std::string_view source, int min_body_lines) {
  const std::vector<std::string> lines = split_lines(source);
  JsScanner scanner(JsLexer(source).run());
  std::vector<Target> targets;
  std::unordered_set<std::string> seen;
  for (auto& f : scanner.run()) {
    if (seen.contains(f.name)) continue;
    // The lines strictly between the line of `{` and the line of `}`.
    if (f.close_line - f.brace_line - 1 < min_body_lines) continue;
    seen.insert(f.name);
    Target t;
    t.name = std::move(f.name);
    t.language = Language::javascript;
    t.start_line = f.start_line;
    t.body_start_line = f.brace_line + 1;
    t.body = body_of(lines, f.brace_line + 1, f.close_line - 1);
    targets.push_back(std::move(t));
  }
  return targets;
}

std::vector<Target> extract_source(std::string_view source, Language language, int min_body_lines) {
  return language == Language::python ? extract_python(source, min_body_lines)
                                      : extract_javascript(source, min_body_lines);
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
