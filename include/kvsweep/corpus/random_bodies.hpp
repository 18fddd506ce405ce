#pragma once
/// The incompressible recall corpus (seed 001's random-bodies): Python functions whose body
/// lines bind random identifiers to random string literals, so no language prior can
/// rebuild a line; the same knobs always give a byte-identical file (stats::SplitMix64 draws).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvsweep::corpus {

/// Knobs of the confusable variant (beyond seed 001, its "next step"): functions come in
/// families whose names share a long prefix and differ only in their last characters, and whose
/// bodies are near-duplicates (the same identifiers; some literals differ only in their tail),
/// so the attention lookup that finds the asked-for function has a small margin.
struct ConfusableOptions {
  int family_size = 8;      // functions per family (the last family may be smaller)
  int prefix_len = 24;      // characters of the shared name prefix (a family's stem)
  int suffix_len = 3;       // characters after it that tell the members apart
  double mutate = 0.5;      // probability that a member's line differs from the family's base line
  int literal_tail = 4;     // how many trailing characters of such a line's literal differ (<= value_len)
  friend bool operator==(const ConfusableOptions&, const ConfusableOptions&) = default;
};

struct RandomBodiesOptions {
  int functions = 200;      // number of `def`s
  int value_len = 24;       // characters in each string literal
  std::uint64_t seed = 42;
  // Assignment lines per function, drawn uniformly from [min_lines, max_lines]; each body then
  // ends with `return None`, so every function is a 20-line recall target. 20..25 makes the seed
  // knobs (200 functions, 24-character values) ~207 KB, the size seed 001 gives (~206 KB, ~140K tokens).
  int min_lines = 20;
  int max_lines = 25;
  std::optional<ConfusableOptions> confusable;  // set: the confusable variant
};

/// The corpus text: a two-line `#` header naming the knobs, then the functions, each
/// `def <name>():` followed by its body and separated by two blank lines; names are unique
/// and never Python keywords. Requires functions >= 1, value_len >= 1, 1 <= min_lines <= max_lines.
/// With `confusable`, the header names those knobs too; families are built one after another
/// (a base body of random lines, then each member's copy with its mutations) and the functions
/// are then placed in a seeded shuffled order, so siblings sit at different depths.
std::string generate_random_bodies(const RandomBodiesOptions& options);

/// The tokens a random-bodies corpus `text` makes for the llama SPM tokenizer (llama.cpp's
/// ggml-vocab-llama-spm, the tiny and copy models' vocabulary), estimated as 0.631 per byte outside the
/// string literals plus 0.809 per literal character: a least-squares fit to /tokenize counts of 16-function
/// corpora at --value-len 1, 4, 8, 16, 24, 48 and 96 (5403 … 33143 tokens), each within 1%. Other
/// tokenizers differ; `kvsweep run CONFIG --dry-run` counts with the model's own.
std::size_t estimate_spm_tokens(std::string_view text);

/// The command line that regenerates `options` (written into the corpus header).
std::string random_bodies_command(const RandomBodiesOptions& options);

/// An `invalid` message naming the first knob out of range ("--value-len must be at least 1"),
/// or empty when the options can be generated.
std::string check_random_bodies(const RandomBodiesOptions& options);

}  // namespace kvsweep::corpus
