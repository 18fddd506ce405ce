#pragma once
/// The incompressible recall corpus (seed 001's random-bodies): Python functions whose body
/// lines bind random identifiers to random string literals, so no language prior can
/// rebuild a line; the same knobs always give a byte-identical file (stats::SplitMix64 draws).

#include <cstdint>
#include <string>

namespace kvsweep::corpus {

struct RandomBodiesOptions {
  int functions = 200;      // number of `def`s
  int value_len = 24;       // characters in each string literal
  std::uint64_t seed = 42;
  int min_lines = 24;       // assignment lines per function, drawn uniformly from [min_lines, max_lines];
  int max_lines = 40;       // each body then ends with `return None`
};

/// The corpus text: a two-line `#` header naming the knobs, then the functions, each
/// `def <name>():` followed by its body and separated by two blank lines; names are unique
/// and never Python keywords. Requires functions >= 1, value_len >= 1, 1 <= min_lines <= max_lines.
std::string generate_random_bodies(const RandomBodiesOptions& options);

}  // namespace kvsweep::corpus
