#include "kvsweep/corpus/random_bodies.hpp"

#include <string_view>
#include <unordered_set>

#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::corpus {

namespace {

using stats::SplitMix64;

constexpr std::string_view k_lower = "abcdefghijklmnopqrstuvwxyz";
constexpr std::string_view k_ident_tail = "abcdefghijklmnopqrstuvwxyz0123456789_";
constexpr std::string_view k_literal = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

bool is_python_keyword(const std::string& word) {
  static const std::unordered_set<std::string> keywords = {
      "and",   "as",    "assert", "async",  "await",    "break", "class",  "continue", "def",  "del",
      "elif",  "else",  "except", "finally", "for",     "from",  "global", "if",       "import", "in",
      "is",    "lambda", "nonlocal", "not", "or",       "pass",  "raise",  "return",   "try",  "while",
      "with",  "yield", "match",  "case",   "type",     "None",  "True",   "False"};
  return keywords.contains(word);
}

std::string identifier(SplitMix64& rng, int min_len, int max_len) {
  const auto len = static_cast<std::size_t>(min_len) + rng.below(static_cast<std::uint64_t>(max_len - min_len + 1));
  std::string s;
  s += k_lower[rng.below(k_lower.size())];
  while (s.size() < len) s += k_ident_tail[rng.below(k_ident_tail.size())];
  return s;
}

}  // namespace

std::string generate_random_bodies(const RandomBodiesOptions& options) {
  SplitMix64 rng(options.seed);
  std::string out;
  out += "# Incompressible recall corpus: kvsweep corpus random-bodies --functions " +
         std::to_string(options.functions) + " --value-len " + std::to_string(options.value_len) + " --seed " +
         std::to_string(options.seed) + "\n";
  out += "# Every body line binds a random identifier to a random literal: no prior can rebuild it.\n";
  std::unordered_set<std::string> names;
  for (int f = 0; f < options.functions; ++f) {
    std::string name;
    do {
      name = identifier(rng, 10, 16);
    } while (is_python_keyword(name) || !names.insert(name).second);
    out += "\n\ndef " + name + "():\n";
    const auto lines = static_cast<std::uint64_t>(options.min_lines) +
                       rng.below(static_cast<std::uint64_t>(options.max_lines - options.min_lines + 1));
    for (std::uint64_t l = 0; l < lines; ++l) {
      std::string var;
      do {
        var = identifier(rng, 6, 14);
      } while (is_python_keyword(var));
      out += "    " + var + " = \"";
      for (int c = 0; c < options.value_len; ++c) out += k_literal[rng.below(k_literal.size())];
      out += "\"\n";
    }
    out += "    return None\n";
  }
  return out;
}

}  // namespace kvsweep::corpus
