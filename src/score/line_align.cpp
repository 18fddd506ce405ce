#include "kvsweep/score/line_align.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace kvsweep::score {
namespace {

// Lines are compared many times; map each distinct line to a small integer once.
struct Interned {
  std::vector<std::size_t> a;
  std::vector<std::size_t> b;
  std::size_t distinct = 0;
};

Interned intern(std::span<const std::string> a, std::span<const std::string> b) {
  std::unordered_map<std::string_view, std::size_t> ids;
  Interned out;
  auto id_of = [&](const std::string& line) {
    auto [it, inserted] = ids.try_emplace(line, ids.size());
    return it->second;
  };
  out.a.reserve(a.size());
  out.b.reserve(b.size());
  for (const auto& line : a) out.a.push_back(id_of(line));
  for (const auto& line : b) out.b.push_back(id_of(line));
  out.distinct = ids.size();
  return out;
}

// State shared by the find_longest_match calls of one get_matching_blocks.
class LongestMatchFinder {
 public:
  explicit LongestMatchFinder(const Interned& seq)
      : m_a(seq.a), m_b(seq.b), m_b2j(seq.distinct), m_prev(seq.b.size() + 1, 0), m_cur(seq.b.size() + 1, 0) {
    // difflib's __chain_b: for each element of b, the ascending list of its positions.
    // With isjunk=None and autojunk=False nothing is purged, so every element is kept.
    for (std::size_t j = 0; j < m_b.size(); ++j) m_b2j[m_b[j]].push_back(j);
  }

  // difflib.SequenceMatcher.find_longest_match(alo, ahi, blo, bhi): the longest block with
  // alo <= i, i+k <= ahi, blo <= j, j+k <= bhi; among the longest, the smallest i, then the
  // smallest j. The scan runs over the end position i ascending and, for each i, over j
  // ascending, and only a strictly longer run replaces the best, which yields that tie rule.
  MatchingBlock find(std::size_t alo, std::size_t ahi, std::size_t blo, std::size_t bhi) {
    std::size_t besti = alo;
    std::size_t bestj = blo;
    std::size_t bestsize = 0;
    // j2len in difflib: length of the run ending at (i-1, j). Slot j+1 holds the run ending at j,
    // so slot j holds difflib's j2len.get(j-1, 0). Only touched slots are reset.
    for (std::size_t i = alo; i < ahi; ++i) {
      for (std::size_t j : m_b2j[m_a[i]]) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const std::size_t k = m_prev[j] + 1;
        m_cur[j + 1] = k;
        m_cur_touched.push_back(j + 1);
        if (k > bestsize) {
          besti = i + 1 - k;
          bestj = j + 1 - k;
          bestsize = k;
        }
      }
      for (std::size_t slot : m_prev_touched) m_prev[slot] = 0;
      m_prev_touched.clear();
      std::swap(m_prev, m_cur);
      std::swap(m_prev_touched, m_cur_touched);
    }
    for (std::size_t slot : m_prev_touched) m_prev[slot] = 0;
    m_prev_touched.clear();

    // difflib then extends the block by equal non-junk elements on both sides. Without junk
    // the run found is already maximal, so these loops never fire; they are kept so the port
    // stays step-for-step faithful.
    while (besti > alo && bestj > blo && m_a[besti - 1] == m_b[bestj - 1]) {
      --besti;
      --bestj;
      ++bestsize;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && m_a[besti + bestsize] == m_b[bestj + bestsize]) {
      ++bestsize;
    }
    return MatchingBlock{besti, bestj, bestsize};
  }

 private:
  const std::vector<std::size_t>& m_a;
  const std::vector<std::size_t>& m_b;
  std::vector<std::vector<std::size_t>> m_b2j;
  std::vector<std::size_t> m_prev;
  std::vector<std::size_t> m_cur;
  std::vector<std::size_t> m_prev_touched;
  std::vector<std::size_t> m_cur_touched;
};

}  // namespace

std::vector<MatchedPair> lcs_pairs(std::span<const std::string> a, std::span<const std::string> b) {
  const Interned seq = intern(a, b);
  const std::size_t la = a.size();
  const std::size_t lb = b.size();
  // Classic dynamic programme (Wagner & Fischer 1974; Cormen et al., "Introduction to
  // Algorithms", LCS-LENGTH) over suffixes: len(i, j) = LCS length of a[i:] and b[j:].
  // O(la * lb) time and memory, fine for 60 expected lines against thousands produced.
  const std::size_t width = lb + 1;
  std::vector<std::uint32_t> len((la + 1) * width, 0);
  for (std::size_t i = la; i-- > 0;) {
    for (std::size_t j = lb; j-- > 0;) {
      len[i * width + j] = seq.a[i] == seq.b[j] ? len[(i + 1) * width + j + 1] + 1
                                                : std::max(len[(i + 1) * width + j], len[i * width + j + 1]);
    }
  }
  std::vector<MatchedPair> pairs;
  pairs.reserve(len[0]);
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < la && j < lb) {
    if (seq.a[i] == seq.b[j]) {
      // Equal heads belong to some LCS: taking them never loses length.
      pairs.push_back({i, j});
      ++i;
      ++j;
    } else if (len[(i + 1) * width + j] >= len[i * width + j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  return pairs;
}

std::vector<MatchingBlock> difflib_matching_blocks(std::span<const std::string> a, std::span<const std::string> b) {
  // CPython Lib/difflib.py, SequenceMatcher.get_matching_blocks: take the longest match of the
  // whole range, then recurse on the ranges to its left and right. CPython keeps pending ranges
  // in a list used as a stack; the ranges are disjoint and the blocks are sorted afterwards,
  // so the visiting order does not change the result.
  const Interned seq = intern(a, b);
  LongestMatchFinder finder(seq);
  struct Range {
    std::size_t alo, ahi, blo, bhi;
  };
  std::vector<Range> pending{{0, a.size(), 0, b.size()}};
  std::vector<MatchingBlock> blocks;
  while (!pending.empty()) {
    const Range r = pending.back();
    pending.pop_back();
    const MatchingBlock m = finder.find(r.alo, r.ahi, r.blo, r.bhi);
    if (m.size == 0) continue;
    blocks.push_back(m);
    if (r.alo < m.a_start && r.blo < m.b_start) pending.push_back({r.alo, m.a_start, r.blo, m.b_start});
    if (m.a_start + m.size < r.ahi && m.b_start + m.size < r.bhi) {
      pending.push_back({m.a_start + m.size, r.ahi, m.b_start + m.size, r.bhi});
    }
  }
  std::sort(blocks.begin(), blocks.end(), [](const MatchingBlock& x, const MatchingBlock& y) {
    return std::tie(x.a_start, x.b_start, x.size) < std::tie(y.a_start, y.b_start, y.size);
  });
  // get_matching_blocks collapses blocks that continue each other before appending its sentinel.
  // That only happens when junk extension splits a run; with no junk every block found is
  // maximal, so no two can abut, but the step is kept so the port stays faithful.
  std::vector<MatchingBlock> merged;
  for (const MatchingBlock& m : blocks) {
    if (!merged.empty() && merged.back().a_start + merged.back().size == m.a_start &&
        merged.back().b_start + merged.back().size == m.b_start) {
      merged.back().size += m.size;
    } else {
      merged.push_back(m);
    }
  }
  return merged;
}

std::vector<MatchedPair> pairs_from_blocks(std::span<const MatchingBlock> blocks) {
  std::vector<MatchedPair> pairs;
  for (const MatchingBlock& m : blocks) {
    for (std::size_t k = 0; k < m.size; ++k) pairs.push_back({m.a_start + k, m.b_start + k});
  }
  return pairs;
}

std::vector<MatchedPair> align_lines(std::span<const std::string> a, std::span<const std::string> b, Alignment alignment) {
  if (alignment == Alignment::lcs) return lcs_pairs(a, b);
  const auto blocks = difflib_matching_blocks(a, b);
  return pairs_from_blocks(blocks);
}

}  // namespace kvsweep::score
