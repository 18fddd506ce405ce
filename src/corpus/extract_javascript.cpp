// JavaScript targets with the tree-sitter-javascript grammar, named as codeneedle's esprima
// walk names them (see extract.hpp for the rules).

#include <string>

#include "kvsweep/corpus/extract.hpp"
#include "kvsweep/corpus/syntax_tree.hpp"

namespace kvsweep::corpus {

namespace {

// A string literal's value as esprima's key.value shows it (the common escapes decoded).
std::string string_value(const SyntaxTree& tree, TSNode string) {
  std::string value;
  const uint32_t n = ts_node_named_child_count(string);
  for (uint32_t i = 0; i < n; ++i) {
    const TSNode part = ts_node_named_child(string, i);
    const std::string_view text = tree.text(part);
    if (type_of(part) != "escape_sequence" || text.size() < 2) {
      value += text;
      continue;
    }
    switch (text[1]) {
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case 'r': value += '\r'; break;
      case '\n':
      case '\r': break;  // a line continuation
      default: value += text.substr(1); break;
    }
  }
  return value;
}

// The name a property key gives: identifiers and numbers as written, strings by value, a
// computed key only when it is a plain identifier (`[key]`); #private keys give none
// (esprima's PrivateIdentifier is not an Identifier).
std::string key_name(const SyntaxTree& tree, TSNode key) {
  const std::string_view type = type_of(key);
  if (type == "property_identifier" || type == "identifier" || type == "number") return std::string(tree.text(key));
  if (type == "string") return string_value(tree, key);
  if (type == "computed_property_name" && ts_node_named_child_count(key) == 1) {
    const TSNode inner = ts_node_named_child(key, 0);
    if (type_of(inner) == "identifier") return std::string(tree.text(inner));
  }
  return {};
}

// The name an anonymous function expression or arrow takes from its parent, as esprima's walk
// hands it down: only a direct child of a declarator, assignment or object property is named.
// Parentheses are no node in esprima's tree, so `x = (function () {…})` is still a direct child.
std::string name_from_parent(const SyntaxTree& tree, TSNode function, std::span<const TSNode> ancestors) {
  std::size_t i = ancestors.size();
  if (type_of(function) == "arrow_function") {
    // tree-sitter lets an arrow be the object of `[…]`, `.x` or a call, which the language does
    // not: `const f = () => {…}` followed by a line starting with `[` or `(` is two statements
    // (automatic semicolon insertion), as esprima reads it. Climb out of such a chain.
    while (i > 0 && ts_node_start_byte(ancestors[i - 1]) == ts_node_start_byte(function) &&
           (type_of(ancestors[i - 1]) == "subscript_expression" || type_of(ancestors[i - 1]) == "member_expression" ||
            type_of(ancestors[i - 1]) == "call_expression")) {
      --i;
    }
  }
  while (i > 0 && type_of(ancestors[i - 1]) == "parenthesized_expression") --i;
  if (i == 0) return {};
  const TSNode parent = ancestors[i - 1];
  const std::string_view type = type_of(parent);
  if (type == "variable_declarator") {
    const TSNode name = field(parent, "name");
    return type_of(name) == "identifier" ? std::string(tree.text(name)) : std::string();
  }
  if (type == "assignment_expression" || type == "augmented_assignment_expression") {
    const TSNode left = field(parent, "left");
    const std::string_view left_type = type_of(left);
    if (left_type == "identifier") return std::string(tree.text(left));
    if (left_type == "member_expression") {
      const TSNode property = field(left, "property");
      return type_of(property) == "property_identifier" ? std::string(tree.text(property)) : std::string();
    }
    if (left_type == "subscript_expression") {
      const TSNode index = field(left, "index");
      return type_of(index) == "identifier" ? std::string(tree.text(index)) : std::string();
    }
    return {};
  }
  if (type == "pair") return key_name(tree, field(parent, "key"));
  // Class fields (`x = () => {…}`) are PropertyDefinitions, which esprima's walk does not name;
  // default parameter values are AssignmentPatterns, likewise.
  return {};
}

}  // namespace

std::vector<Target> extract_javascript(std::string_view source, int min_body_lines) {
  const SyntaxTree tree(source, Language::javascript);
  std::vector<BracedFunction> found;
  tree.walk([&](TSNode node, std::span<const TSNode> ancestors) {
    const std::string_view type = type_of(node);
    const TSNode body = field(node, "body");
    if (ts_node_is_null(body) || type_of(body) != "statement_block") return;
    if (type == "function_declaration" || type == "generator_function_declaration") {
      found.push_back({std::string(tree.text(field(node, "name"))), first_line(node), body});
    } else if (type == "function_expression" || type == "generator_function") {
      const TSNode own = field(node, "name");
      std::string name = ts_node_is_null(own) ? name_from_parent(tree, node, ancestors) : std::string(tree.text(own));
      found.push_back({std::move(name), first_line(node), body});
    } else if (type == "arrow_function") {
      found.push_back({name_from_parent(tree, node, ancestors), first_line(node), body});
    } else if (type == "method_definition") {
      const TSNode key = field(node, "name");
      found.push_back({key_name(tree, key), first_line(key), body});
    }
  });
  return braced_targets(source, std::move(found), Language::javascript, min_body_lines);
}

}  // namespace kvsweep::corpus
