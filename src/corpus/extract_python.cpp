// Python targets with the tree-sitter-python grammar, listed and cut as codeneedle's `ast` walk
// lists and cuts them (see extract.hpp for the rules).

#include <algorithm>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kvsweep/corpus/extract.hpp"
#include "kvsweep/corpus/syntax_tree.hpp"

namespace kvsweep::corpus {

namespace {

// Comments and line continuations: extras, which tree-sitter keeps wherever they occur, also
// between a block's statements and after its last one; ast has no node for them. (An ERROR node
// is an extra too, but it holds source text.)
bool is_trivia(TSNode node) { return ts_node_is_extra(node) && type_of(node) != "ERROR"; }

// A node's named children less the trivia: what ast would see.
std::vector<TSNode> statements(TSNode node) {
  std::vector<TSNode> out;
  for (const TSNode child : children(node)) {
    if (ts_node_is_named(child) && !is_trivia(child)) out.push_back(child);
  }
  return out;
}

// ast's node for a statement: a FunctionDef / ClassDef carries its decorators, and its lineno
// is the line of its `def` / `class`, so a decorated_definition stands for its definition.
TSNode undecorated(TSNode statement) {
  if (type_of(statement) != "decorated_definition") return statement;
  const TSNode definition = field(statement, "definition");
  return ts_node_is_null(definition) ? statement : definition;
}

// ast's end_lineno: the line of the statement's last token. A compound statement's node can
// run on over comments that tree-sitter hangs at the end of its last block.
int end_lineno(TSNode statement) {
  TSNode node = statement;
  while (true) {
    const std::vector<TSNode> parts = children(node);
    const auto last = std::find_if(parts.rbegin(), parts.rend(), [](TSNode part) {
      return !is_trivia(part) && !ts_node_is_missing(part);
    });
    if (last == parts.rend()) return last_line(node);
    node = *last;
  }
}

// The first block among a clause's children (elif / else / except / finally), or a null node.
TSNode block_of(TSNode clause) {
  for (const TSNode part : statements(clause)) {
    if (type_of(part) == "block") return part;
  }
  return TSNode{};
}

struct PythonDef {
  std::string name;
  int depth = 0;  // of the FunctionDef in the ast (Module = 0): ast.walk is breadth first
  uint32_t start_byte = 0;
  int def_line = 0;
  int body_first = 0;
  int body_last = 0;
};

// Every def with a body, with the ast depth it sits at. Iterative over a stack of blocks, each
// with the ast depth of its statements.
std::vector<PythonDef> python_defs(const SyntaxTree& tree) {
  std::vector<PythonDef> defs;
  std::vector<std::pair<TSNode, int>> pending{{tree.root(), 1}};
  const auto push = [&pending](TSNode block, int depth) {
    if (!ts_node_is_null(block)) pending.emplace_back(block, depth);
  };
  while (!pending.empty()) {
    const auto [block, depth] = pending.back();
    pending.pop_back();
    for (const TSNode statement : statements(block)) {
      const TSNode node = undecorated(statement);
      const std::string_view type = type_of(node);
      if (type == "ERROR") {
        // tree-sitter loses its way on some valid code (a bracketed continuation line indented
        // less than its block is taken for a dedent: tree-sitter-python issue 256); what it
        // recognised in the ERROR is read as statements of this block.
        push(node, depth);
        continue;
      }
      if (type == "function_definition") {
        const TSNode name = field(node, "name");
        const std::vector<TSNode> body = statements(field(node, "body"));
        if (!ts_node_is_null(name) && !body.empty()) {
          defs.push_back({std::string(tree.text(name)), depth, ts_node_start_byte(node), first_line(node),
                          first_line(undecorated(body.front())), end_lineno(body.back())});
        }
      }
      // The suites under the statement, at the depth ast gives their statements: a body one
      // deeper; each `elif` an If nested in the previous one's orelse, so the k-th elif's body
      // and a final `else` sit k deeper still; an `except` body under its ExceptHandler node.
      // A match's cases are statements of its body block, their bodies one deeper again. An
      // ERROR between a header and its block is read as the start of that body.
      int elifs = 0;
      for (const TSNode part : statements(node)) {
        const std::string_view kind = type_of(part);
        if (kind == "block" || kind == "ERROR") {
          push(part, depth + 1);
        } else if (kind == "elif_clause") {
          ++elifs;
          push(block_of(part), depth + elifs + 1);
        } else if (kind == "else_clause") {
          push(block_of(part), depth + elifs + 1);
        } else if (kind == "except_clause" || kind == "except_group_clause") {
          push(block_of(part), depth + 2);
        } else if (kind == "finally_clause") {
          push(block_of(part), depth + 1);
        }
      }
    }
  }
  // ast.walk is breadth first; nodes of one depth come in source order.
  std::sort(defs.begin(), defs.end(), [](const PythonDef& a, const PythonDef& b) {
    return a.depth != b.depth ? a.depth < b.depth : a.start_byte < b.start_byte;
  });
  return defs;
}

}  // namespace

std::vector<Target> extract_python(std::string_view source, int min_body_lines) {
  const SyntaxTree tree(source, Language::python);
  const std::vector<std::string> lines = split_lines(source);
  std::vector<Target> targets;
  std::unordered_set<std::string> seen;
  for (const PythonDef& def : python_defs(tree)) {
    if (seen.contains(def.name) || def.body_last - def.body_first + 1 < min_body_lines) continue;
    seen.insert(def.name);
    Target t;
    t.name = def.name;
    t.language = Language::python;
    t.start_line = def.def_line;
    t.body_start_line = def.body_first;
    for (int line = def.body_first; line <= def.body_last && line <= static_cast<int>(lines.size()); ++line) {
      t.body.push_back(lines[static_cast<std::size_t>(line - 1)]);
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

}  // namespace kvsweep::corpus
