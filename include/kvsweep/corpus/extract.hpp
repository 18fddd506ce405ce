#pragma once
/// Named-function extraction for recall corpora (Python, JavaScript and PHP), with the
/// published codeneedle harness's rules: which functions are targets, their body lines,
/// and how several files are joined into one corpus.

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvsweep/core/error.hpp"

namespace kvsweep::corpus {

enum class Language { python, javascript, php };

std::string_view to_string(Language language);

/// The language of a source file by its extension (.py; .js .mjs .cjs; .php), or an `invalid` error.
core::Expected<Language> language_of(const std::filesystem::path& path);

/// A function targets must have at least this many body lines (codeneedle's MIN_BODY_LINES).
inline constexpr int k_min_body_lines = 20;

/// One named function that a recall question can ask for.
struct Target {
  std::string name;
  std::string file;                // the file it came from, as the corpus names it ("" for a bare source)
  Language language = Language::python;
  int start_line = 0;              // 1-based line of the `def` / `function` / method key / arrow parameters / PHP name
  int body_start_line = 0;         // 1-based line of the first body line (codeneedle's start_line; sampling uses it)
  std::vector<std::string> body;   // the body lines, without line terminators
};

/// Lines of a text split at "\n", "\r\n" and "\r", without terminators; a final terminator
/// does not start an extra empty line (Python's str.splitlines for these three terminators).
std::vector<std::string> split_lines(std::string_view text);

/// Python targets as codeneedle finds them with `ast`: every def / async def at any nesting
/// (decorated, multi-line signatures, one-line bodies); body from the first statement
/// (docstring included; a decorated first statement starts at its `def`/`class` line) to the
/// last line of the last statement, so trailing blank and comment lines are excluded.
/// Listed in ast.walk order (breadth first, then source order); the first occurrence of a
/// name among functions with at least `min_body_lines` body lines wins.
/// Parsed with tree-sitter-python (scripts/grammars); lines are counted at "\n", as tree-sitter
/// counts them (load_corpus converts "\r\n" and "\r"). bench/check-extract compares it with ast.
/// tree-sitter misreads some valid code: a bracketed continuation line indented less than its
/// block is taken for a dedent (tree-sitter-python issue 256), and 0.23's scanner keeps indents
/// in a byte, so an indentation of 256 columns or more is misread. It leaves ERROR nodes; the
/// defs it recognised inside them are still listed (an ERROR between a header and its block
/// counts as the start of that body), but functions in the misread stretch can be lost or
/// misplaced. On source that Python would reject, too, this returns tree-sitter's best reading.
std::vector<Target> extract_python(std::string_view source, int min_body_lines = k_min_body_lines);

/// JavaScript targets as codeneedle finds them with esprima: function declarations, function
/// expressions (by their own name, else by what names them), and arrows with a block body,
/// named by the variable, assignment target (identifier or member property), object property
/// key or method / class-method key. Body = the lines strictly between the line of `{` and
/// the line of the matching `}`. Listed in source order; first qualifying occurrence wins.
/// Parsed with tree-sitter-javascript (scripts/grammars). Not named, as esprima's walk leaves
/// them: class fields (`x = () => {…}`), #private keys, default parameter values, destructuring
/// targets, a function that is called or is an operand. Where esprima would refuse the file
/// (a syntax error) tree-sitter recovers and this returns its best reading; numeric keys are
/// shown as written (esprima would print 0x10 as 16).
std::vector<Target> extract_javascript(std::string_view source, int min_body_lines = k_min_body_lines);

/// PHP targets, the equivalent of codeneedle's token_get_all-based extraction: every
/// `function NAME` with a `{ … }` body — functions at any nesting, and methods of classes,
/// traits, enums and anonymous classes (static or not; abstract and interface methods have
/// no body and are skipped). Closures and `fn` arrows are not targets: no name follows their
/// `function`, so a token scanner keyed on `function NAME` never sees them, even when they are
/// assigned to a variable. Body = the lines strictly between the line of `{` and the line of
/// the matching `}`; source order; first occurrence of a name wins (names compared as written,
/// though PHP's are case-insensitive). start_line is the line of the name.
/// Parsed with tree-sitter-php's `php` grammar (scripts/grammars), so `<?php … ?>` tags,
/// inline HTML, heredoc / nowdoc and strings holding braces are read as PHP reads them;
/// that is an approximation of the token_get_all harness, which counts brace tokens itself.
std::vector<Target> extract_php(std::string_view source, int min_body_lines = k_min_body_lines);

std::vector<Target> extract_source(std::string_view source, Language language,
                                   int min_body_lines = k_min_body_lines);

/// One file of a corpus: the name it is shown under and its text.
struct SourceFile {
  std::string path;
  std::string text;
};

/// The text a recall prompt carries, with the targets found in it.
struct Corpus {
  std::string text;
  std::vector<std::string> files;
  Language language = Language::python;
  std::vector<Target> targets;  // lines are positions in `text`
  int total_lines = 0;          // text.count("\n") + 1, as codeneedle counts
};

/// Joins files as codeneedle does: one file is its text as is; several are each preceded by
/// a `# ====== path ======` (Python) or `// ====== path ======` (JavaScript, PHP) header line,
/// given a final newline if missing, and followed by a blank line. Targets' lines are
/// shifted into the joined text; a name already taken by an earlier file is dropped.
/// All files must be of one language (by extension), else an `invalid` error.
core::Expected<Corpus> build_corpus(std::span<const SourceFile> files, int min_body_lines = k_min_body_lines);

/// Reads the files (relative paths resolve against base_dir; "\r\n" and "\r" become "\n" as
/// Python's read_text does) and builds the corpus; files are shown under the paths as given.
core::Expected<Corpus> load_corpus(std::span<const std::string> paths, const std::filesystem::path& base_dir,
                                   int min_body_lines = k_min_body_lines);

}  // namespace kvsweep::corpus
