#pragma once
/// Scoring of one verbatim-recall answer against the expected function body, compatible with codeneedle.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvsweep/score/line_align.hpp"

namespace kvsweep::score {

struct RecallOptions {
  bool relax_indent = false;  // strip leading whitespace too, on both sides (re-indenting builds)
  int pass_lines = 8;         // an answer passes with at least this many primary lines matched
  int primary_lines = 20;     // how many expected lines are primary; the rest are bonus
  Alignment align = Alignment::difflib;  // what the published codeneedle numbers used
};

struct RecallScore {
  int primary_matched = 0;  // expected primary lines matched by the alignment
  int bonus_matched = 0;    // expected bonus lines (after the primary ones) matched
  int hallucinated = 0;     // non-blank produced lines that match no expected line
  int produced_lines = 0;   // produced lines after cleaning (blank interior lines included)
  bool passed = false;      // primary_matched >= pass_lines
  friend bool operator==(const RecallScore&, const RecallScore&) = default;
};

/// text without a leading `<think>…</think>` block (after optional leading whitespace).
/// An unclosed leading `<think>` means the answer never left its reasoning: the result is empty.
std::string_view strip_leading_think(std::string_view text);

/// The produced lines as scored: think block stripped, split on '\n', each line right-stripped
/// (and left-stripped with relax_indent), markdown fence lines removed (two or more fences:
/// only what lies between the first and the last is kept; a single fence line is dropped),
/// blank lines trimmed at both ends.
std::vector<std::string> answer_lines(std::string_view produced, const RecallOptions& options);

/// Scores produced against expected = primary ++ bonus, aligned with a = expected, b = produced.
/// Only the first options.primary_lines lines of primary count as primary; any further lines of
/// primary are treated as bonus lines ahead of bonus. Expected lines get the same per-line
/// normalisation as produced lines (no fence removal, no trimming).
RecallScore score_recall(std::span<const std::string> primary, std::span<const std::string> bonus,
                         std::string_view produced, const RecallOptions& options = {});

}  // namespace kvsweep::score
