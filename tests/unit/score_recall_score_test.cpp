#include "kvsweep/score/recall_score.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvsweep::score {
namespace {

using Lines = std::vector<std::string>;

// A random-bodies style function body: `vNN = "..."` lines, indented by four spaces.
Lines body(int from, int count) {
  Lines out;
  for (int i = from; i < from + count; ++i) out.push_back("    v" + std::to_string(i) + " = \"q" + std::to_string(i * 7) + "\"");
  return out;
}

std::string join(const Lines& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

RecallScore expect_score(int primary, int bonus, int hallucinated, int produced, bool passed) {
  return RecallScore{primary, bonus, hallucinated, produced, passed};
}

TEST(RecallScore, StripLeadingThink) {
  EXPECT_EQ(strip_leading_think("<think>\n</think>\nx = 1"), "\nx = 1");
  EXPECT_EQ(strip_leading_think("  \n<think>plan</think>y"), "y");
  EXPECT_EQ(strip_leading_think("x\n<think>a</think>"), "x\n<think>a</think>");  // not leading
  EXPECT_EQ(strip_leading_think("<think>still thinking when cut"), "");           // unclosed
}

TEST(RecallScore, PerfectRecallWithThinkEchoAndFences) {
  // The prefill_no_think echo and the fences are not produced lines, so the seed-001
  // "+2 hallucinated" artefact does not appear here.
  const Lines primary = body(0, 20);
  const std::string produced = "<think>\n</think>\n```python\n" + join(primary) + "```\n";
  EXPECT_EQ(score_recall(primary, {}, produced), expect_score(20, 0, 0, 20, true));
}

TEST(RecallScore, RunOnCopyCountsBonusThenHallucinated) {
  // 20 primary lines, 3 of the 40 bonus lines, then 2 lines of the next function.
  const Lines primary = body(0, 20);
  const Lines bonus = body(20, 40);
  const std::string produced = join(body(0, 23)) + "\ndef next_fn():\n    w = 1\n";
  // produced lines: 23 + one blank + 2 = 26; the blank is neither matched nor hallucinated.
  EXPECT_EQ(score_recall(primary, bonus, produced), expect_score(20, 3, 2, 26, true));
}

TEST(RecallScore, PassThresholdIsInclusive) {
  const Lines primary = body(0, 20);
  const std::string eight = join(body(0, 8));
  const std::string seven = join(body(0, 7));
  EXPECT_EQ(score_recall(primary, {}, eight), expect_score(8, 0, 0, 8, true));
  EXPECT_EQ(score_recall(primary, {}, seven), expect_score(7, 0, 0, 7, false));
  RecallOptions strict;
  strict.pass_lines = 9;
  EXPECT_FALSE(score_recall(primary, {}, eight, strict).passed);
}

TEST(RecallScore, RelaxIndentStripsBothSides) {
  const Lines primary{"    a = 1", "\tb = 2", "    c = 3"};
  const std::string produced = "a = 1\n  b = 2\n    c = 3   \n";
  RecallOptions exact;
  EXPECT_EQ(score_recall(primary, {}, produced, exact), expect_score(1, 0, 2, 3, false));
  RecallOptions relaxed;
  relaxed.relax_indent = true;
  EXPECT_EQ(score_recall(primary, {}, produced, relaxed), expect_score(3, 0, 0, 3, false));
}

TEST(RecallScore, TrailingWhitespaceAndCrlfAreIgnored) {
  const Lines primary{"x = 1", "y = 2  "};
  EXPECT_EQ(score_recall(primary, {}, "x = 1 \r\ny = 2\r\n"), expect_score(2, 0, 0, 2, false));
}

TEST(RecallScore, ProseOutsideFencesIsDropped) {
  const Lines primary{"a", "b"};
  const std::string produced = "Here is the code:\n```\na\nb\n```\nHope this helps.\n";
  EXPECT_EQ(answer_lines(produced, {}), (Lines{"a", "b"}));
  EXPECT_EQ(score_recall(primary, {}, produced), expect_score(2, 0, 0, 2, false));
}

TEST(RecallScore, InnerFencesBetweenFirstAndLastAreKept) {
  const std::string produced = "```\na\n```\ntext\n```js\nb\n```";
  EXPECT_EQ(answer_lines(produced, {}), (Lines{"a", "```", "text", "```js", "b"}));
  // "```", "text", "```js" match nothing.
  EXPECT_EQ(score_recall(Lines{"a", "b"}, {}, produced), expect_score(2, 0, 3, 5, false));
}

TEST(RecallScore, SingleFenceIsDroppedAndTheRestKept) {
  // An answer cut off before its closing fence.
  EXPECT_EQ(answer_lines("Sure.\n  ```python\na\nb", {}), (Lines{"Sure.", "a", "b"}));
  EXPECT_EQ(score_recall(Lines{"a", "b"}, {}, "Sure.\n```python\na\nb"), expect_score(2, 0, 1, 3, false));
}

TEST(RecallScore, BlankLinesTrimmedAtEndsKeptInside) {
  const std::string produced = "\n\n   \na\n\n\nb\n  \n";
  EXPECT_EQ(answer_lines(produced, {}), (Lines{"a", "", "", "b"}));
  // An expected blank line matches one produced blank line; the other is not hallucinated.
  EXPECT_EQ(score_recall(Lines{"a", "", "b"}, {}, produced), expect_score(3, 0, 0, 4, false));
}

TEST(RecallScore, EmptyAndThinkOnlyAnswers) {
  const Lines primary = body(0, 20);
  EXPECT_EQ(score_recall(primary, {}, ""), expect_score(0, 0, 0, 0, false));
  EXPECT_EQ(score_recall(primary, {}, "<think>\n</think>\n"), expect_score(0, 0, 0, 0, false));
  EXPECT_EQ(score_recall(primary, {}, "<think>never closed\n" + join(primary)), expect_score(0, 0, 0, 0, false));
}

TEST(RecallScore, PrimaryLinesOptionMovesExtraPrimaryToBonus) {
  const Lines primary = body(0, 6);
  RecallOptions options;
  options.primary_lines = 4;
  options.pass_lines = 4;
  EXPECT_EQ(score_recall(primary, body(6, 2), join(body(0, 8)), options), expect_score(4, 4, 0, 8, true));
}

TEST(RecallScore, AlignmentChoiceMatters) {
  // The published-order lines x1..x5 come after a block L1..L4 that the model emitted first.
  // difflib anchors on the 4-line block and loses x1..x5; LCS keeps the 5 scattered lines.
  const Lines primary{"x1", "x2", "x3", "x4", "x5", "L1", "L2", "L3", "L4"};
  const std::string produced = "L1\nL2\nL3\nL4\nx1\nz\nx2\nz\nx3\nz\nx4\nz\nx5\n";
  RecallOptions difflib;
  difflib.align = Alignment::difflib;
  RecallOptions lcs;
  lcs.align = Alignment::lcs;
  EXPECT_EQ(score_recall(primary, {}, produced, difflib), expect_score(4, 0, 9, 13, false));
  EXPECT_EQ(score_recall(primary, {}, produced, lcs), expect_score(5, 0, 8, 13, false));
}

TEST(RecallScore, RepeatedExpectedLinesMatchAtMostOnceEach) {
  // Expected has "}" twice; produced has it three times: one is hallucinated.
  const Lines primary{"if (x) {", "}", "if (y) {", "}"};
  const std::string produced = "if (x) {\n}\n}\nif (y) {\n}\n";
  EXPECT_EQ(score_recall(primary, {}, produced), expect_score(4, 0, 1, 5, false));
}

}  // namespace
}  // namespace kvsweep::score
