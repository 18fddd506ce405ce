#include "kvsweep/corpus/syntax_tree.hpp"

#include <unordered_set>

#include "kvsweep/core/error.hpp"

// The grammars' entry points, compiled from the npm packages' C sources (cmake/grammars.cmake).
extern "C" const TSLanguage* tree_sitter_python(void);
extern "C" const TSLanguage* tree_sitter_javascript(void);
extern "C" const TSLanguage* tree_sitter_php(void);

namespace kvsweep::corpus {

namespace {

const TSLanguage* grammar_of(Language language) {
  switch (language) {
    case Language::python: return tree_sitter_python();
    case Language::javascript: return tree_sitter_javascript();
    case Language::php: return tree_sitter_php();
  }
  throw core::FatalError("syntax tree: no tree-sitter grammar for " + std::string(to_string(language)));
}

}  // namespace

SyntaxTree::SyntaxTree(std::string_view source, Language language)
    : m_source(source), m_parser(ts_parser_new(), ts_parser_delete), m_tree(nullptr, ts_tree_delete) {
  const TSLanguage* grammar = grammar_of(language);
  if (!ts_parser_set_language(m_parser.get(), grammar)) {
    throw core::FatalError("syntax tree: libtree-sitter (ABI " + std::to_string(TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION) +
                           "-" + std::to_string(TREE_SITTER_LANGUAGE_VERSION) + ") rejects the " +
                           std::string(to_string(language)) + " grammar (ABI " +
                           std::to_string(ts_language_version(grammar)) + "); pin an older grammar in scripts/grammars");
  }
  m_tree.reset(ts_parser_parse_string(m_parser.get(), nullptr, source.data(), static_cast<uint32_t>(source.size())));
}

std::string_view SyntaxTree::text(TSNode node) const {
  const uint32_t start = ts_node_start_byte(node);
  const uint32_t end = ts_node_end_byte(node);
  if (start >= m_source.size() || end < start) return {};
  return m_source.substr(start, end - start);
}

void SyntaxTree::walk(const std::function<void(TSNode, std::span<const TSNode>)>& visit) const {
  TSTreeCursor cursor = ts_tree_cursor_new(root());
  const std::unique_ptr<TSTreeCursor, void (*)(TSTreeCursor*)> cursor_owner(&cursor, ts_tree_cursor_delete);
  std::vector<TSNode> ancestors;  // named ancestors of the cursor's node
  // Per depth of the cursor: whether that node is named (and so was pushed onto ancestors).
  std::vector<bool> pushed;
  while (true) {
    const TSNode node = ts_tree_cursor_current_node(&cursor);
    const bool named = ts_node_is_named(node);
    if (named) visit(node, ancestors);
    if (ts_tree_cursor_goto_first_child(&cursor)) {
      pushed.push_back(named);
      if (named) ancestors.push_back(node);
      continue;
    }
    // No children: move to the next sibling, climbing while there is none.
    while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
      if (!ts_tree_cursor_goto_parent(&cursor)) return;
      if (pushed.back()) ancestors.pop_back();
      pushed.pop_back();
    }
  }
}

TSNode field(TSNode node, std::string_view name) {
  return ts_node_child_by_field_name(node, name.data(), static_cast<uint32_t>(name.size()));
}

std::vector<TSNode> children(TSNode node) {
  std::vector<TSNode> out;
  if (ts_node_is_null(node)) return out;
  TSTreeCursor cursor = ts_tree_cursor_new(node);
  if (ts_tree_cursor_goto_first_child(&cursor)) {
    do {
      out.push_back(ts_tree_cursor_current_node(&cursor));
    } while (ts_tree_cursor_goto_next_sibling(&cursor));
  }
  ts_tree_cursor_delete(&cursor);
  return out;
}

std::vector<Target> braced_targets(std::string_view source, std::vector<BracedFunction> found, Language language,
                                   int min_body_lines) {
  const std::vector<std::string> lines = split_lines(source);
  std::vector<Target> targets;
  std::unordered_set<std::string> seen;
  for (BracedFunction& f : found) {
    if (f.name.empty() || seen.contains(f.name)) continue;
    const int brace_line = first_line(f.body);
    const int close_line = last_line(f.body);
    if (close_line - brace_line - 1 < min_body_lines) continue;
    seen.insert(f.name);
    Target t;
    t.name = std::move(f.name);
    t.language = language;
    t.start_line = f.start_line;
    t.body_start_line = brace_line + 1;
    for (int line = brace_line + 1; line < close_line && line <= static_cast<int>(lines.size()); ++line) {
      t.body.push_back(lines[static_cast<std::size_t>(line - 1)]);
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

}  // namespace kvsweep::corpus
