// PHP targets with tree-sitter-php's `php` grammar (the one that reads `<?php … ?>` and the
// inline HTML around it); see extract.hpp for the rules.

#include <string>

#include "kvsweep/corpus/extract.hpp"
#include "kvsweep/corpus/syntax_tree.hpp"

namespace kvsweep::corpus {

std::vector<Target> extract_php(std::string_view source, int min_body_lines) {
  const SyntaxTree tree(source, Language::php);
  std::vector<BracedFunction> found;
  tree.walk([&](TSNode node, std::span<const TSNode>) {
    const std::string_view type = type_of(node);
    // Closures and `fn` arrows have no name token after `function`, so a harness reading
    // token_get_all's `function NAME` never sees them; abstract and interface methods have no body.
    if (type != "function_definition" && type != "method_declaration") return;
    const TSNode name = field(node, "name");
    const TSNode body = field(node, "body");
    if (ts_node_is_null(name) || ts_node_is_null(body)) return;
    found.push_back({std::string(tree.text(name)), first_line(name), body});
  });
  return braced_targets(source, std::move(found), Language::php, min_body_lines);
}

}  // namespace kvsweep::corpus
