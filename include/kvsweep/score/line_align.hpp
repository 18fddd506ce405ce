#pragma once
/// Alignment of two sequences of lines: an optimal LCS, and an exact port of the matching blocks of Python's difflib.SequenceMatcher.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace kvsweep::score {

/// How produced lines are aligned to expected lines.
enum class Alignment {
  lcs,      // an optimal longest common subsequence
  difflib,  // difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
};

/// One matched pair: a[a_index] == b[b_index].
struct MatchedPair {
  std::size_t a_index = 0;
  std::size_t b_index = 0;
  friend bool operator==(const MatchedPair&, const MatchedPair&) = default;
};

/// A run of equal lines: a[a_start + k] == b[b_start + k] for k < size (difflib's Match(a, b, size)).
struct MatchingBlock {
  std::size_t a_start = 0;
  std::size_t b_start = 0;
  std::size_t size = 0;
  friend bool operator==(const MatchingBlock&, const MatchingBlock&) = default;
};

/// An optimal LCS of a and b as matched pairs, increasing in both indices.
/// Among optimal alignments the one chosen matches a[i] with b[j] as soon as they are
/// equal while walking both sequences front to back (equal heads are always part of some
/// LCS), and otherwise skips the line of a when that keeps the LCS length.
std::vector<MatchedPair> lcs_pairs(std::span<const std::string> a, std::span<const std::string> b);

/// Exactly the blocks of difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks(),
/// in the same order, adjacent blocks merged, WITHOUT the final (len(a), len(b), 0) sentinel.
std::vector<MatchingBlock> difflib_matching_blocks(std::span<const std::string> a, std::span<const std::string> b);

/// The matched pairs covered by blocks, in block order.
std::vector<MatchedPair> pairs_from_blocks(std::span<const MatchingBlock> blocks);

/// The matched pairs of a and b under the chosen alignment.
std::vector<MatchedPair> align_lines(std::span<const std::string> a, std::span<const std::string> b, Alignment alignment);

}  // namespace kvsweep::score
