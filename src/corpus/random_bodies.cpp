#include "kvsweep/corpus/random_bodies.hpp"

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>
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

std::string random_bodies_command(const RandomBodiesOptions& o) {
  std::string cmd = "kvsweep corpus random-bodies --functions " + std::to_string(o.functions) + " --value-len " +
                    std::to_string(o.value_len) + " --seed " + std::to_string(o.seed);
  const RandomBodiesOptions defaults;
  if (o.min_lines != defaults.min_lines || o.max_lines != defaults.max_lines) {
    cmd += " --min-lines " + std::to_string(o.min_lines) + " --max-lines " + std::to_string(o.max_lines);
  }
  if (o.confusable) {
    const ConfusableOptions& c = *o.confusable;
    char mutate[32];
    std::snprintf(mutate, sizeof mutate, "%g", c.mutate);
    cmd += " --confusable --family-size " + std::to_string(c.family_size) + " --prefix-len " +
           std::to_string(c.prefix_len) + " --suffix-len " + std::to_string(c.suffix_len) + " --mutate " + mutate +
           " --literal-tail " + std::to_string(c.literal_tail);
  }
  return cmd;
}

std::size_t estimate_spm_tokens(std::string_view text) {
  // Literal characters: those between the quotes of each `name = "…"` line.
  std::size_t literal = 0;
  for (std::size_t at = text.find(" = \""); at != std::string_view::npos; at = text.find(" = \"", at + 1)) {
    const std::size_t open = at + 4;
    const std::size_t close = text.find('"', open);
    if (close == std::string_view::npos) break;
    literal += close - open;
  }
  const double other = static_cast<double>(text.size() - literal);
  return static_cast<std::size_t>(std::llround(0.631 * other + 0.809 * static_cast<double>(literal)));
}

std::string check_random_bodies(const RandomBodiesOptions& o) {
  if (o.functions < 1) return "--functions must be at least 1, got " + std::to_string(o.functions);
  if (o.value_len < 1) return "--value-len must be at least 1, got " + std::to_string(o.value_len);
  if (o.min_lines < 1) return "--min-lines must be at least 1, got " + std::to_string(o.min_lines);
  if (o.max_lines < o.min_lines) {
    return "--max-lines (" + std::to_string(o.max_lines) + ") must not be below --min-lines (" +
           std::to_string(o.min_lines) + ")";
  }
  if (!o.confusable) return {};
  const ConfusableOptions& c = *o.confusable;
  if (c.family_size < 2) return "--family-size must be at least 2, got " + std::to_string(c.family_size);
  if (c.prefix_len < 1 || c.prefix_len > 200) return "--prefix-len must be 1..200, got " + std::to_string(c.prefix_len);
  if (c.suffix_len < 1 || c.suffix_len > 8) return "--suffix-len must be 1..8, got " + std::to_string(c.suffix_len);
  // 37^suffix_len names per family; keep room so drawing unique suffixes ends quickly.
  double room = 1;
  for (int i = 0; i < c.suffix_len; ++i) room *= 37;
  if (c.family_size > room / 2) {
    return "--family-size " + std::to_string(c.family_size) + " needs a longer --suffix-len than " +
           std::to_string(c.suffix_len);
  }
  if (!(c.mutate >= 0 && c.mutate <= 1)) return "--mutate must be between 0 and 1";
  if (c.literal_tail < 1 || c.literal_tail > o.value_len) {
    return "--literal-tail must be 1..--value-len (" + std::to_string(o.value_len) + "), got " +
           std::to_string(c.literal_tail);
  }
  return {};
}

namespace {

std::string literal(SplitMix64& rng, int len) {
  std::string s;
  for (int c = 0; c < len; ++c) s += k_literal[rng.below(k_literal.size())];
  return s;
}

std::string variable(SplitMix64& rng) {
  std::string var;
  do {
    var = identifier(rng, 6, 14);
  } while (is_python_keyword(var));
  return var;
}

std::string header(const RandomBodiesOptions& options) {
  std::string out = "# Incompressible recall corpus: " + random_bodies_command(options) + "\n";
  out += options.confusable
             ? "# Families of functions share a name prefix and near-duplicate bodies: the lookup margin is small.\n"
             : "# Every body line binds a random identifier to a random literal: no prior can rebuild it.\n";
  return out;
}

std::string confusable_bodies(const RandomBodiesOptions& options) {
  const ConfusableOptions& c = *options.confusable;
  SplitMix64 rng(options.seed);
  std::vector<std::string> functions;
  std::unordered_set<std::string> stems;
  const auto tail = static_cast<std::size_t>(c.literal_tail);
  while (static_cast<int>(functions.size()) < options.functions) {
    std::string stem;
    do {
      stem = identifier(rng, c.prefix_len, c.prefix_len);
    } while (!stems.insert(stem).second);
    const auto lines = static_cast<std::uint64_t>(options.min_lines) +
                       rng.below(static_cast<std::uint64_t>(options.max_lines - options.min_lines + 1));
    std::vector<std::pair<std::string, std::string>> base;
    for (std::uint64_t l = 0; l < lines; ++l) {
      std::string var = variable(rng);
      base.emplace_back(std::move(var), literal(rng, options.value_len));
    }
    std::unordered_set<std::string> suffixes;
    const int members = std::min(c.family_size, options.functions - static_cast<int>(functions.size()));
    for (int m = 0; m < members; ++m) {
      std::string suffix;
      do {
        suffix.clear();
        for (int i = 0; i < c.suffix_len; ++i) suffix += k_ident_tail[rng.below(k_ident_tail.size())];
      } while (!suffixes.insert(suffix).second);
      std::string fn = "def " + stem + suffix + "():\n";
      for (const auto& [var, value] : base) {
        std::string v = value;
        // mutate as a probability in 1/2^32 steps, drawn for every line so the stream is fixed.
        const bool changed = static_cast<double>(rng.below(1ULL << 32)) < c.mutate * 4294967296.0;
        if (changed) {
          std::string new_tail;
          do {
            new_tail = literal(rng, static_cast<int>(tail));
          } while (new_tail == v.substr(v.size() - tail));
          v.replace(v.size() - tail, tail, new_tail);
        }
        fn += "    " + var + " = \"" + v + "\"\n";
      }
      fn += "    return None\n";
      functions.push_back(std::move(fn));
    }
  }
  // Fisher-Yates with the same generator: siblings end up at different depths.
  for (std::size_t i = functions.size(); i-- > 1;) std::swap(functions[i], functions[rng.below(i + 1)]);
  std::string out = header(options);
  for (const auto& fn : functions) out += "\n\n" + fn;
  return out;
}

}  // namespace

std::string generate_random_bodies(const RandomBodiesOptions& options) {
  if (options.confusable) return confusable_bodies(options);
  SplitMix64 rng(options.seed);
  std::string out = header(options);
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
      const std::string var = variable(rng);  // drawn before the literal: the stream order is part of the format
      out += "    " + var + " = \"" + literal(rng, options.value_len) + "\"\n";
    }
    out += "    return None\n";
  }
  return out;
}

}  // namespace kvsweep::corpus
