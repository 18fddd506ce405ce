#include "kvsweep/corpus/extract.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using ::testing::HasSubstr;

namespace kvsweep::corpus {
namespace {

// The expected (name, def line, first body line, last body line) rows below were produced by
// running codeneedle's `ast`-based extraction (python3 3.11) on the same text, and for
// JavaScript an ESTree walk with esprima's naming rules (acorn, as bundled with node 20).
// The later JavaScript and PHP fixtures are worked out by hand from the rules in extract.hpp.

struct Row {
  std::string name;
  int start_line;
  int body_start_line;
  int body_last_line;
  friend bool operator==(const Row&, const Row&) = default;
};

std::ostream& operator<<(std::ostream& os, const Row& r) {
  return os << r.name << " " << r.start_line << " " << r.body_start_line << ".." << r.body_last_line;
}

std::vector<Row> rows(const std::vector<Target>& targets) {
  std::vector<Row> out;
  for (const auto& t : targets) {
    out.push_back({t.name, t.start_line, t.body_start_line, t.body_start_line + static_cast<int>(t.body.size()) - 1});
  }
  return out;
}

const std::string k_python = R"~~(import functools

TEMPLATE = """
def not_a_function():
    pass
"""


@functools.lru_cache(maxsize=None)
@staticmethod
def decorated(a,
              b=(1, 2),
              *,
              c: "str:int" = ')',
              ) -> dict[str, int]:
    """Docstring line one.

    def inside_docstring(): also not a function
    """
    x = {'def': 1,
         "k": [a, b]}
    return x  # trailing comment

    # comment after the last statement


class Box:
    def method(self):
        s = 'it''s # not a comment'
        t = r"\"def fake():"
        if s:
            def inner():
                y = 1
                z = 2
                return y + z
        return inner


async def fetch(url): await go(url); return \
    url


def one_liner(): return [
    1,
    2,
]


def inner():
    a = 1
    b = 2
    return a
)~~";

const std::string k_python_nesting = R"~~(def outer():
    @decorator
    def helper():
        return 1
    return helper


if True:
    pass
elif False:
    def dup():
        a = 1
        return a


class K:
    def dup(self):
        x = 1
        return x


try:
    pass
except ValueError:
    def late():
        return 1
else:
    def late():
        return 2
)~~";

// Compound statements whose bodies sit deeper in the ast than their indentation shows: match
// cases (under a match_case node), except* handlers, loops' else; comments where tree-sitter
// hangs them inside blocks (before the first statement, after a decorator, after the last one).
const std::string k_python_compound = R"~~(def uses_match(command):
    # a comment before the first statement
    match command:
        case "go":
            def dup():
                return 1
        case _:
            pass
    return command


try:
    pass
except* ValueError:
    def grouped():
        return 1
finally:
    def dup():
        return 2


@decorator
class Outer:
    @property

    # a comment between the decorator and the def
    def prop(self):
        @decorator
        class Inner:
            pass
        return Inner
    # a comment after the last statement, at body indentation
  # and one less indented


async def with_loop():
    async with a:
        async for x in y:
            def grouped():
                return x
        while True:
            break
        else:
            def loop_else():
                return 1
)~~";

const std::string k_javascript = R"~~(// function fake() { in a comment }
var re = /function notMe\(\) {/g, s = "function alsoNot() {";
function declared(a,
                  b) {
  const t = `template ${ {a: 1}.a } function no() {`;
  return t + a + b;
}
var assigned = function () {
  return 1;
};
obj.member = function () {
  if (x / 2 > 1) { return /}/.test(x); }
  return 2;
};
const arrow = async (x, y = {}) => {
  return x;
};
module.exports = {
  prop: function () {
    return 3;
  },
  'quoted': () => {
    return 4;
  },
  method(a) {
    return 5;
  },
  get getter() {
    return 6;
  },
};
class Klass extends Base {
  field = () => {
    return 7;
  }
  #hidden() {
    return 8;
  }
  static create() {
    return 9;
  }
  delete() {
    return 10;
  }
}
var iife = (function () {
  return 11;
})();
var wrapped = (function () {
  return 12;
});
call(function () {
  return 13;
});
function declared() {
  return 14;
}
)~~";

// Where the old token scanner was weak: braces inside template literals, strings and regex
// literals (also a regex right after `)`), nested functions, member chains, computed keys.
const std::string k_javascript_nested = R"~~(const re = /[{]/g;
function outer() {
  const s = `${ "}" } {`;
  const r = /[{}]/.test(s);
  function inner() {
    return `
}
`;
  }
  if (r) /}/.test(s);
  return inner;
}
a.b.c = function () {
  return 1;
};
const named = function ownName() {
  return 2;
};
const expr = (x) =>
  x + 1;
const block = (x) => {
  return x;
};
const obj = {
  handler: async function () {
    return 3;
  },
  [computed]: () => {
    return 4;
  },
  "it's": function* () {
    yield 5;
  },
};
class Shape {
  static area() {
    return 6;
  }
  constructor() {
    this.#secret = function () {
      return 7;
    };
  }
}
function outer() {
  return 8;
}
const inner = () => {
  return 9;
};
const asi = () => {
  return 10;
}
[1, 2].forEach(asi);
const called = function () {
  return 11;
}
(0);
)~~";

const std::string k_php = R"~~(<html>
<body>
<?php
function top($a) {
    $s = "}{";
    $t = '{';
    $h = <<<EOT
} not a brace {$a}
EOT;
    $n = <<<'NOW'
}
NOW;
    return $s . $t . $h . $n;
}
?>
<p>{ inline html }</p>
<?php
abstract class Base {
    abstract protected function shape(): string;
    public static function make(int $x): static {
        return new static();
    }
    private function helper() {
        $closure = function ($y) {
            return $y;
        };
        return $closure;
    }
}
interface Named {
    public function name(): string;
}
trait Greets {
    public function greet() {
        return "hi {$this->name()}";
    }
}
$handler = function () {
    return 1;
};
$arrow = fn($x) => $x + 1;
function top() {
    return 2;
}
)~~";

// A function with `lines` body lines in the given language.
std::string braced_function(Language language, const std::string& name, int lines) {
  std::string s = language == Language::php ? "function " + name + "($a) {\n" : "function " + name + "(a) {\n";
  for (int i = 0; i < lines; ++i) {
    s += language == Language::php ? "    $v" + std::to_string(i) + " = $a;\n" : "  let v" + std::to_string(i) + " = a;\n";
  }
  return s + "}\n";
}

TEST(ExtractPython, DecoratorsSignaturesStringsAndOneLiners) {
  // min_body_lines 1 lists every function; the real threshold (20) is tested below.
  EXPECT_EQ(rows(extract_python(k_python, 1)), (std::vector<Row>{
                                                   {"decorated", 11, 16, 22},  // docstring starts the body
                                                   {"fetch", 39, 39, 40},      // `;` and `\` on the def line
                                                   {"one_liner", 43, 43, 46},  // body on the def line, bracketed
                                                   {"inner", 49, 50, 52},      // top level beats the nested one
                                                   {"method", 28, 29, 36},     // ast.walk: deeper nodes come later
                                               }));
  const auto three = rows(extract_python(k_python, 3));
  EXPECT_EQ(three, (std::vector<Row>{{"decorated", 11, 16, 22}, {"one_liner", 43, 43, 46}, {"inner", 49, 50, 52},
                                     {"method", 28, 29, 36}}));
}

TEST(ExtractPython, BodyLinesAreVerbatimAndStopAtTheLastStatement) {
  const auto targets = extract_python(k_python, 1);
  ASSERT_FALSE(targets.empty());
  const Target& decorated = targets.front();
  ASSERT_EQ(decorated.body.size(), 7u);
  EXPECT_EQ(decorated.body.front(), "    \"\"\"Docstring line one.");
  EXPECT_EQ(decorated.body[3], "    \"\"\"");
  EXPECT_EQ(decorated.body.back(), "    return x  # trailing comment");  // the comment after it is not body
  EXPECT_EQ(decorated.language, Language::python);
}

TEST(ExtractPython, AstDepthDecidesWhichDuplicateWins) {
  // `helper`'s body starts at its decorated first statement's `def`; `dup` in class K (depth 2)
  // beats the one under `elif` (depth 3); `late` under `else` (depth 2) beats `except` (depth 3).
  EXPECT_EQ(rows(extract_python(k_python_nesting, 1)),
            (std::vector<Row>{{"outer", 1, 3, 5}, {"helper", 3, 4, 4}, {"dup", 17, 18, 19}, {"late", 28, 29, 29}}));
}

TEST(ExtractPython, TwentyLineThresholdAndTrailingComments) {
  std::string src = "def short():\n";
  for (int i = 0; i < 19; ++i) src += "    a" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  src += "\n\ndef long_enough():\n";
  for (int i = 0; i < 20; ++i) src += "    b" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  src += "    # a comment at body indentation, then blank lines\n\n\n";
  src += "x = 1\n";
  const auto targets = extract_python(src);
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].name, "long_enough");
  EXPECT_EQ(targets[0].start_line, 23);
  EXPECT_EQ(targets[0].body_start_line, 24);
  EXPECT_EQ(targets[0].body.size(), 20u);
  EXPECT_EQ(targets[0].body.back(), "    b19 = 19");
}

TEST(ExtractPython, MatchCasesExceptStarLoopElseAndComments) {
  // `dup` under `finally` (depth 2) beats the one in a match case (depth 4); `grouped` under
  // except* (depth 3) beats the one in `async for` (depth 4); `prop`'s body starts at the
  // `class` line of its decorated first statement and ends before the trailing comments.
  EXPECT_EQ(rows(extract_python(k_python_compound, 1)),
            (std::vector<Row>{{"uses_match", 1, 3, 9},
                              {"with_loop", 36, 37, 45},
                              {"dup", 18, 19, 19},
                              {"prop", 27, 29, 31},
                              {"grouped", 15, 16, 16},
                              {"loop_else", 44, 45, 45}}));
}

TEST(ExtractPython, TypeParametersAndTypeAliasStatements) {
  // Python 3.12 syntax (PEP 695), worked out by hand: type parameters change nothing.
  const std::string src =
      "type Alias[T] = list[T]\n"
      "\n"
      "\n"
      "class Box[T]:\n"
      "    def get[U](self, other: U) -> T | U:\n"
      "        return self.item\n"
      "\n"
      "\n"
      "def first[T](xs: list[T]) -> T:\n"
      "    return xs[0]\n";
  EXPECT_EQ(rows(extract_python(src, 1)), (std::vector<Row>{{"first", 9, 10, 10}, {"get", 5, 6, 6}}));
}

TEST(ExtractPython, WhereTheGrammarFailsOnValidCodeWhatItRecognisedIsKept) {
  // tree-sitter-python takes a bracketed continuation line indented less than its block (`baz)`)
  // for a dedent (upstream issue 256) and leaves ERROR nodes. Here only the function holding
  // it is lost: ast also lists `f` (3, 4..5).
  const std::string mild =
      "class K:\n"
      "    def weird(self):\n"
      "        def f():\n"
      "            (bar.\n"
      "        baz)\n"
      "        for x in y:\n"
      "            pass\n"
      "\n"
      "    def method(self):\n"
      "        return 1\n"
      "\n"
      "\n"
      "def top():\n"
      "    return 2\n";
  EXPECT_EQ(rows(extract_python(mild, 1)),
            (std::vector<Row>{{"top", 13, 14, 14}, {"weird", 2, 3, 7}, {"method", 9, 10, 10}}));
  // Here the class ends up in an ERROR node covering the file, and its first method in another
  // between the class header and the block: both are read through, so `first` is still found,
  // at its depth (ast also lists weird 5, 6..16 and f 6, 7..14).
  const std::string severe =
      "class K(Base):\n"
      "    def first(self):\n"
      "        return 0\n"
      "\n"
      "    def weird(self):\n"
      "        def f():\n"
      "            (bar.\n"
      "        baz)\n"
      "            (bar.\n"
      "        baz(\n"
      "        ))\n"
      "            files().setdefault(\n"
      "                0\n"
      "            )\n"
      "        for line in f():\n"
      "            self.check(line)\n";
  EXPECT_EQ(rows(extract_python(severe, 1)), (std::vector<Row>{{"first", 2, 3, 3}}));
}

TEST(ExtractJavaScript, DeclarationsExpressionsArrowsPropertiesAndMethods) {
  EXPECT_EQ(rows(extract_javascript(k_javascript, 1)), (std::vector<Row>{
                                                           {"declared", 3, 5, 6},   // multi-line params
                                                           {"assigned", 8, 9, 9},
                                                           {"member", 11, 12, 13},  // regex holding `}`
                                                           {"arrow", 15, 16, 16},   // async, default `{}`
                                                           {"prop", 19, 20, 20},
                                                           {"quoted", 22, 23, 23},
                                                           {"method", 25, 26, 26},
                                                           {"getter", 28, 29, 29},
                                                           {"create", 39, 40, 40},  // class fields and #private: unnamed
                                                           {"delete", 42, 43, 43},  // a keyword is a fine method name
                                                           {"wrapped", 49, 50, 50},  // (function…) named; the IIFE not
                                                       }));
}

TEST(ExtractJavaScript, BodyIsBetweenTheBraceLines) {
  const auto targets = extract_javascript(k_javascript, 1);
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(targets[0].body,
            (std::vector<std::string>{"  const t = `template ${ {a: 1}.a } function no() {`;", "  return t + a + b;"}));
  EXPECT_EQ(targets[0].language, Language::javascript);
  EXPECT_TRUE(extract_javascript(k_javascript).empty());  // nothing reaches 20 lines
}

TEST(ExtractJavaScript, NestedFunctionsAndBracesInTemplatesStringsAndRegexes) {
  EXPECT_EQ(rows(extract_javascript(k_javascript_nested, 1)),
            (std::vector<Row>{
                {"outer", 2, 3, 11},      // `}` in a template, string, class and regex after `)`
                {"inner", 5, 6, 8},       // nested; its body is a template literal's lines
                {"c", 13, 14, 14},        // a.b.c = function: the member property
                {"ownName", 16, 17, 17},  // a function expression's own name beats its variable
                {"block", 21, 22, 22},    // `expr` has an expression body: not a target
                {"handler", 25, 26, 26},
                {"computed", 28, 29, 29},  // [computed]: an identifier key
                {"it's", 31, 32, 32},      // a string key by its value; generators count
                {"area", 36, 37, 37},      // static method
                {"constructor", 39, 40, 42},
                {"asi", 51, 52, 52},  // no `;` before the `[` line: still two statements
                // this.#secret = function: a private member is not named; the second `outer`
                // and the arrow `inner` lose to the first ones; `called`'s function is called
                // with (0) on the next line, so it is not what the variable holds.
            }));
}

TEST(ExtractJavaScript, TwentyBodyLinesAndFirstQualifyingOccurrenceWins) {
  // The short `dup` does not qualify, so the later long one is the target of that name.
  const std::string src = braced_function(Language::javascript, "dup", 19) +
                          braced_function(Language::javascript, "dup", 20) +
                          braced_function(Language::javascript, "dup", 25);
  const auto targets = extract_javascript(src);
  EXPECT_EQ(rows(targets), (std::vector<Row>{{"dup", 22, 23, 42}}));
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(targets[0].body.front(), "  let v0 = a;");
}

TEST(ExtractJavaScript, DeepNestingDoesNotExhaustTheStack) {
  // The walk over the tree is iterative: 100,000 nested arrays are no problem.
  const std::string src = "var deep = " + std::string(100000, '[') + std::string(100000, ']') + ";\n" +
                          braced_function(Language::javascript, "after", 20);
  EXPECT_EQ(rows(extract_javascript(src)), (std::vector<Row>{{"after", 2, 3, 22}}));
}

TEST(ExtractPhp, FunctionsMethodsAndWhatIsNotATarget) {
  EXPECT_EQ(rows(extract_php(k_php, 1)),
            (std::vector<Row>{
                {"top", 4, 5, 13},     // braces in strings, heredoc and nowdoc are no braces
                {"make", 20, 21, 21},  // static; the abstract `shape` has no body
                {"helper", 23, 24, 27},  // the closure inside is not a target of its own
                {"greet", 34, 35, 35},   // trait method; the interface's `name` has no body
                // $handler's closure and the `fn` arrow have no name; the second `top` loses.
            }));
}

TEST(ExtractPhp, BodyLinesInlineHtmlAndThreshold) {
  const auto targets = extract_php(k_php, 1);
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(targets[0].language, Language::php);
  EXPECT_EQ(targets[0].body.front(), "    $s = \"}{\";");
  EXPECT_EQ(targets[0].body[3], "} not a brace {$a}");
  EXPECT_EQ(targets[0].body.back(), "    return $s . $t . $h . $n;");
  // A file that is mostly HTML, with a short function and one of exactly 20 body lines.
  const std::string src = "<!doctype html>\n<title>{x}</title>\n<?php\n" + braced_function(Language::php, "short", 19) +
                          braced_function(Language::php, "long", 20) + "?>\n<p>}</p>\n";
  const auto php = extract_php(src);
  EXPECT_EQ(rows(php), (std::vector<Row>{{"long", 25, 26, 45}}));
  ASSERT_FALSE(php.empty());
  EXPECT_EQ(php[0].body.back(), "    $v19 = $a;");
  EXPECT_TRUE(extract_php("<p>no php at all { }</p>\n", 1).empty());
}

TEST(SplitLines, TerminatorsLikePythonSplitlines) {
  EXPECT_EQ(split_lines("a\nb\r\nc\rd"), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(split_lines("a\n\n"), (std::vector<std::string>{"a", ""}));
  EXPECT_TRUE(split_lines("").empty());
}

std::string python_function(const std::string& name, int lines) {
  std::string s = "def " + name + "():\n";
  for (int i = 0; i < lines; ++i) s += "    " + name + "_" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  return s;
}

TEST(BuildCorpus, OneFileIsItsTextAsIs) {
  const std::vector<SourceFile> files{{"one.py", python_function("alpha", 20)}};
  const auto corpus = build_corpus(files);
  ASSERT_TRUE(corpus.has_value()) << corpus.error().message;
  EXPECT_EQ(corpus->text, files[0].text);
  EXPECT_EQ(corpus->total_lines, 22);
  ASSERT_EQ(corpus->targets.size(), 1u);
  EXPECT_EQ(corpus->targets[0].file, "one.py");
  EXPECT_EQ(corpus->targets[0].body_start_line, 2);
}

TEST(BuildCorpus, SeveralFilesGetHeadersOffsetsAndLoseDuplicateNames) {
  // b.py has no final newline: one is added, then the blank separator line.
  const std::vector<SourceFile> files{{"a.py", python_function("alpha", 20)},
                                      {"b.py", python_function("alpha", 21) + "\n" + python_function("beta", 20) + "x = 1"},
                                      {"c.py", python_function("gamma", 20)}};
  const auto corpus = build_corpus(files);
  ASSERT_TRUE(corpus.has_value()) << corpus.error().message;
  const std::string expected_text = "# ====== a.py ======\n" + files[0].text + "\n" + "# ====== b.py ======\n" +
                                    files[1].text + "\n\n" + "# ====== c.py ======\n" + files[2].text + "\n";
  EXPECT_EQ(corpus->text, expected_text);
  EXPECT_EQ(corpus->files, (std::vector<std::string>{"a.py", "b.py", "c.py"}));
  // a.py: header line 1, def line 2; 1 + 21 lines + the blank = 23 lines. b.py's header is
  // line 24 and its beta def (file line 24) is line 48. b.py takes 1 + 44 newlines + the added
  // one + the blank = 47 lines, so c.py's header is line 71 and gamma's def line 72.
  ASSERT_EQ(corpus->targets.size(), 3u);
  EXPECT_EQ(corpus->targets[0].name, "alpha");
  EXPECT_EQ(corpus->targets[0].file, "a.py");
  EXPECT_EQ(corpus->targets[0].start_line, 2);
  EXPECT_EQ(corpus->targets[0].body.size(), 20u);  // the first file's alpha wins
  EXPECT_EQ(corpus->targets[1].name, "beta");
  EXPECT_EQ(corpus->targets[1].file, "b.py");
  EXPECT_EQ(corpus->targets[1].start_line, 48);
  EXPECT_EQ(corpus->targets[1].body_start_line, 49);
  EXPECT_EQ(corpus->targets[2].name, "gamma");
  EXPECT_EQ(corpus->targets[2].start_line, 72);
  const auto lines = split_lines(corpus->text);
  EXPECT_EQ(lines[47], "def beta():");
  EXPECT_EQ(lines[70], "# ====== c.py ======");
  EXPECT_EQ(lines[71], "def gamma():");
}

TEST(BuildCorpus, RefusesMixedAndUnknownLanguages) {
  const std::vector<SourceFile> mixed{{"a.py", "x = 1\n"}, {"b.js", "var x;\n"}};
  const auto m = build_corpus(mixed);
  ASSERT_FALSE(m.has_value());
  EXPECT_THAT(m.error().message, HasSubstr("mixed languages"));
  const std::vector<SourceFile> unknown{{"a.rb", "x = 1\n"}};
  const auto u = build_corpus(unknown);
  ASSERT_FALSE(u.has_value());
  EXPECT_THAT(u.error().message, HasSubstr(".rb"));
}

TEST(BuildCorpus, PhpFilesByExtensionWithSlashHeaders) {
  EXPECT_EQ(language_of("lib/Thing.PHP").value(), Language::php);
  EXPECT_EQ(to_string(Language::php), "php");
  const std::vector<SourceFile> files{{"a.php", "<?php\n" + braced_function(Language::php, "alpha", 20)},
                                      {"b.php", "<?php\n" + braced_function(Language::php, "beta", 20)}};
  const auto corpus = build_corpus(files);
  ASSERT_TRUE(corpus.has_value()) << corpus.error().message;
  EXPECT_EQ(corpus->language, Language::php);
  const auto lines = split_lines(corpus->text);
  EXPECT_EQ(lines[0], "// ====== a.php ======");
  // a.php: header, `<?php`, 22 function lines, the blank = 25 lines; b.php's header is line 26.
  EXPECT_EQ(lines[25], "// ====== b.php ======");
  ASSERT_EQ(corpus->targets.size(), 2u);
  EXPECT_EQ(corpus->targets[1].name, "beta");
  EXPECT_EQ(corpus->targets[1].start_line, 28);
  EXPECT_EQ(lines[27], "function beta($a) {");
}

TEST(LoadCorpus, ReadsRelativeToBaseDirWithUniversalNewlines) {
  const auto dir = std::filesystem::temp_directory_path() / "kvsweep_corpus_extract_test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "crlf.py", std::ios::binary);
    out << "def f():\r\n    return 1\r\n";
  }
  const std::vector<std::string> paths{"crlf.py"};
  const auto corpus = load_corpus(paths, dir, 1);
  ASSERT_TRUE(corpus.has_value()) << corpus.error().message;
  EXPECT_EQ(corpus->text, "def f():\n    return 1\n");
  ASSERT_EQ(corpus->targets.size(), 1u);
  EXPECT_EQ(corpus->targets[0].file, "crlf.py");
  const std::vector<std::string> missing{"nope.py"};
  const auto bad = load_corpus(missing, dir);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind, core::ErrorKind::io);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kvsweep::corpus
