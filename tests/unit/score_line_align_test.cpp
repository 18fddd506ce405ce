#include "kvsweep/score/line_align.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvsweep::score {
namespace {

using Lines = std::vector<std::string>;

// One character per line: '_' is a blank line, an upper-case letter is the lower-case
// letter indented by four spaces, anything else is the character itself.
Lines lines(std::string_view code) {
  Lines out;
  for (char c : code) {
    if (c == '_') {
      out.emplace_back();
    } else if (c >= 'A' && c <= 'Z') {
      out.push_back("    " + std::string(1, static_cast<char>(c - 'A' + 'a')));
    } else {
      out.emplace_back(1, c);
    }
  }
  return out;
}

void expect_valid_lcs(const Lines& a, const Lines& b, const std::vector<MatchedPair>& pairs) {
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    ASSERT_LT(pairs[k].a_index, a.size());
    ASSERT_LT(pairs[k].b_index, b.size());
    EXPECT_EQ(a[pairs[k].a_index], b[pairs[k].b_index]);
    if (k > 0) {
      EXPECT_LT(pairs[k - 1].a_index, pairs[k].a_index);
      EXPECT_LT(pairs[k - 1].b_index, pairs[k].b_index);
    }
  }
}

TEST(LineAlign, LcsOfTextbookExampleIsBdab) {
  // CLRS 15.4: X = ABCBDAB, Y = BDCABA, LCS length 4. The tie rule (match equal heads,
  // else drop from a when that keeps the length) picks B D A B.
  const Lines a = lines("abcbdab");
  const Lines b = lines("bdcaba");
  const auto pairs = lcs_pairs(a, b);
  EXPECT_EQ(pairs, (std::vector<MatchedPair>{{1, 0}, {4, 1}, {5, 3}, {6, 4}}));
}

TEST(LineAlign, LcsTieDropsFromAFirst) {
  // a = [a, b], b = [b, a]: either line could be the LCS; skipping a[0] keeps length 1.
  const auto pairs = lcs_pairs(lines("ab"), lines("ba"));
  EXPECT_EQ(pairs, (std::vector<MatchedPair>{{1, 0}}));
}

TEST(LineAlign, EmptyInputsGiveNoPairsAndNoBlocks) {
  const Lines none;
  const Lines some = lines("abc");
  EXPECT_TRUE(lcs_pairs(none, some).empty());
  EXPECT_TRUE(lcs_pairs(some, none).empty());
  EXPECT_TRUE(difflib_matching_blocks(none, none).empty());
  EXPECT_TRUE(difflib_matching_blocks(some, none).empty());
}

TEST(LineAlign, DifflibSimpleSubstitution) {
  // python3: SequenceMatcher(None, [a,b,c,d], [a,x,c,d], autojunk=False).get_matching_blocks()
  //   -> [(0,0,1), (2,2,2), (4,4,0)]
  const Lines a{"a", "b", "c", "d"};
  const Lines b{"a", "x", "c", "d"};
  EXPECT_EQ(difflib_matching_blocks(a, b), (std::vector<MatchingBlock>{{0, 0, 1}, {2, 2, 2}}));
}

TEST(LineAlign, DifflibRepeatedLinesPicksEarliestInA) {
  // [x,y,x,y,x] vs [y,x,y]: "yxy" occurs only at a=1, b=0; the leftover ranges are empty on one side.
  // python3 -> [(1,0,3), (5,3,0)]
  const Lines a{"x", "y", "x", "y", "x"};
  const Lines b{"y", "x", "y"};
  EXPECT_EQ(difflib_matching_blocks(a, b), (std::vector<MatchingBlock>{{1, 0, 3}}));
}

TEST(LineAlign, DifflibTieEarliestIThenEarliestJ) {
  // a=[a,b,a,b], b=[b,a,b,a]: longest blocks of size 3 are (0,1) "aba" and (1,0) "bab";
  // the one starting earliest in a wins. python3 -> [(0,1,3), (4,4,0)]
  EXPECT_EQ(difflib_matching_blocks(lines("abab"), lines("baba")), (std::vector<MatchingBlock>{{0, 1, 3}}));
  // a=[q,a,b,q,a,b], b=[a,b,q,a,b]: "abqab" at (1,0). python3 -> [(1,0,5), (6,5,0)]
  EXPECT_EQ(difflib_matching_blocks(lines("qabqab"), lines("abqab")), (std::vector<MatchingBlock>{{1, 0, 5}}));
}

TEST(LineAlign, DifflibWithBlankLines) {
  // python3 -> [(0,1,1), (2,2,2), (5,5,0)]: the blank a[1] cannot pair with b[0] once
  // "def f():" is matched at b[1].
  const Lines a{"def f():", "", "  return 1", "", "x"};
  const Lines b{"", "def f():", "  return 1", "", ""};
  EXPECT_EQ(difflib_matching_blocks(a, b), (std::vector<MatchingBlock>{{0, 1, 1}, {2, 2, 2}}));
  EXPECT_EQ(lcs_pairs(a, b).size(), 3u);
}

TEST(LineAlign, LcsBeatsDifflibWhenTheLongestBlockBlocksTheRest) {
  // difflib takes the 4-line block L1..L4 (a=5, b=0) first; everything of a before it then
  // faces an empty range of b. LCS instead takes x1..x5 scattered in b. python3 -> [(5,0,4), (9,13,0)]
  const Lines a{"x1", "x2", "x3", "x4", "x5", "L1", "L2", "L3", "L4"};
  const Lines b{"L1", "L2", "L3", "L4", "x1", "z", "x2", "z", "x3", "z", "x4", "z", "x5"};
  EXPECT_EQ(difflib_matching_blocks(a, b), (std::vector<MatchingBlock>{{5, 0, 4}}));
  EXPECT_EQ(align_lines(a, b, Alignment::difflib).size(), 4u);
  const auto pairs = align_lines(a, b, Alignment::lcs);
  EXPECT_EQ(pairs, (std::vector<MatchedPair>{{0, 4}, {1, 6}, {2, 8}, {3, 10}, {4, 12}}));
}

TEST(LineAlign, PairsFromBlocksExpandsRuns) {
  const std::vector<MatchingBlock> blocks{{0, 2, 2}, {5, 4, 1}};
  EXPECT_EQ(pairs_from_blocks(blocks), (std::vector<MatchedPair>{{0, 2}, {1, 3}, {5, 4}}));
}

struct TableRow {
  const char* a;
  const char* b;
  std::vector<MatchingBlock> blocks;  // difflib, sentinel removed
  std::size_t lcs_length;
};

// Generated once with python3 3.11:
//   difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()[:-1]
// and a textbook LCS length, over random line sequences (encoding: see lines()).
const std::vector<TableRow> kTable = {
    {"", "abc", {}, 0},
    {"abc", "", {}, 0},
    {"bbbabbab", "babbbbaab", {{0, 3, 4}, {6, 7, 2}}, 7},
    {"b___a__bb", "b", {{0, 0, 1}}, 1},
    {"bdadccbacb", "cdad", {{1, 1, 3}}, 3},
    {"cac", "_aabb_", {{1, 1, 1}}, 1},
    {"dbcadbb", "ddddb", {{0, 3, 2}}, 3},
    {"b_", "bbb_baab_", {{0, 2, 2}}, 2},
    {"b_b", "_c_ac_ba_c", {{1, 5, 2}}, 2},
    {"c_aaac_b", "a", {{2, 0, 1}}, 1},
    {"baabbbbaa", "bababababba", {{0, 0, 2}, {2, 7, 3}, {7, 10, 1}}, 8},
    {"aa", "aAbbAbAbabbA", {{0, 0, 1}, {1, 8, 1}}, 2},
    {"abdbca", "b", {{1, 0, 1}}, 1},
    {"aab", "bbabbabaa", {{0, 7, 2}}, 3},
    {"__babab__b", "__a_bbb", {{0, 0, 2}, {3, 2, 1}, {8, 3, 2}}, 6},
    {"_cb__c_cc", "abcbbbacb_", {{1, 7, 3}}, 4},
    {"ab___bab__ab", "_", {{2, 0, 1}}, 1},
    {"bbbbababbaab", "baaaaaab", {{8, 0, 3}, {11, 7, 1}}, 6},
    {"AbaabAbaA", "bbAAaAbabaAb", {{0, 5, 3}, {6, 8, 3}}, 6},
    {"_bab_aaab_b", "_a____", {{4, 0, 2}, {9, 2, 1}}, 4},
    {"AAAAAA", "AbaaAbbaAA", {{0, 8, 2}}, 4},
    {"cdddbcbcb", "dabbccbdc", {{1, 0, 1}, {4, 3, 2}, {7, 5, 2}}, 5},
    {"bAab", "aabbAaaAAAb", {{0, 3, 3}, {3, 10, 1}}, 4},
    {"a", "cabccbd", {{0, 1, 1}}, 1},
    {"cacb_a", "b_bbcbb", {{2, 4, 2}}, 2},
    {"a__b_a_a", "b_a", {{3, 0, 3}}, 3},
    {"bb", "bb__bba_bab", {{0, 0, 2}}, 2},
    {"baba", "bbab_aaa_", {{0, 1, 3}, {3, 5, 1}}, 4},
    {"_a__c_c", "bcc__aabaa", {{0, 4, 2}}, 2},
    {"ccaa", "b_caa_", {{1, 2, 3}}, 3},
};

TEST(LineAlign, DifflibMatchesPythonOnRandomTable) {
  for (const TableRow& row : kTable) {
    SCOPED_TRACE(std::string(row.a) + " vs " + row.b);
    EXPECT_EQ(difflib_matching_blocks(lines(row.a), lines(row.b)), row.blocks);
  }
}

TEST(LineAlign, LcsIsOptimalAndValidOnRandomTable) {
  for (const TableRow& row : kTable) {
    SCOPED_TRACE(std::string(row.a) + " vs " + row.b);
    const Lines a = lines(row.a);
    const Lines b = lines(row.b);
    const auto pairs = lcs_pairs(a, b);
    EXPECT_EQ(pairs.size(), row.lcs_length);
    expect_valid_lcs(a, b, pairs);
    // Never fewer than difflib, which is one (not necessarily longest) common subsequence.
    EXPECT_GE(pairs.size(), align_lines(a, b, Alignment::difflib).size());
  }
}

}  // namespace
}  // namespace kvsweep::score
