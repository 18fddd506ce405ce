#pragma once
/// A tree-sitter parse of one source text (Python, JavaScript or PHP) for the extractors: it
/// owns the parser and the tree; the source must outlive it. Also the rule the brace languages'
/// extractors share for turning found functions into targets.

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tree_sitter/api.h>

#include "kvsweep/corpus/extract.hpp"

namespace kvsweep::corpus {

class SyntaxTree {
 public:
  /// Parses `source` with the grammar for `language`. tree-sitter recovers from syntax errors,
  /// so there is always a tree (with ERROR or MISSING nodes where the source is broken).
  /// Throws core::FatalError when the runtime rejects the grammar's ABI.
  SyntaxTree(std::string_view source, Language language);

  TSNode root() const { return ts_tree_root_node(m_tree.get()); }

  /// The source text a node spans.
  std::string_view text(TSNode node) const;

  /// Visits every named node in pre-order (source order of their starts) with the chain of
  /// its named ancestors, innermost last. Iterative, so deeply nested code cannot overflow the stack.
  void walk(const std::function<void(TSNode node, std::span<const TSNode> ancestors)>& visit) const;

 private:
  std::string_view m_source;
  std::unique_ptr<TSParser, void (*)(TSParser*)> m_parser;
  std::unique_ptr<TSTree, void (*)(TSTree*)> m_tree;
};

/// The node's type name ("function_declaration").
inline std::string_view type_of(TSNode node) { return ts_node_type(node); }
/// The child in a grammar field ("name", "body"), or a null node.
TSNode field(TSNode node, std::string_view name);
/// The node's visible children (named nodes, anonymous tokens and extras such as comments) in
/// source order (none for a null node), read with a cursor: linear in their number, where
/// ts_node_child(i) is not.
std::vector<TSNode> children(TSNode node);
/// 1-based lines of a node's first and last character.
inline int first_line(TSNode node) { return static_cast<int>(ts_node_start_point(node).row) + 1; }
inline int last_line(TSNode node) { return static_cast<int>(ts_node_end_point(node).row) + 1; }

/// A named function whose body is a `{ … }` block.
struct BracedFunction {
  std::string name;
  int start_line = 0;  // the line Target::start_line reports
  TSNode body{};       // the block, from `{` to the matching `}`
};

/// Targets from functions found in source order: body = the lines strictly between the line of
/// `{` and the line of the matching `}`; the first function of a name with at least
/// `min_body_lines` such lines wins; unnamed functions are skipped.
std::vector<Target> braced_targets(std::string_view source, std::vector<BracedFunction> found, Language language,
                                   int min_body_lines);

}  // namespace kvsweep::corpus
