#include "kvsweep/score/recall_score.hpp"

#include <algorithm>
#include <cstddef>

namespace kvsweep::score {
namespace {

// The ASCII whitespace Python's str.strip() removes (it also removes Unicode spaces, which
// source code recalled verbatim does not use for indentation).
constexpr std::string_view kSpace = " \t\n\r\v\f";

std::string_view rstrip(std::string_view s) {
  const auto end = s.find_last_not_of(kSpace);
  return end == std::string_view::npos ? std::string_view{} : s.substr(0, end + 1);
}

std::string_view lstrip(std::string_view s) {
  const auto begin = s.find_first_not_of(kSpace);
  return begin == std::string_view::npos ? std::string_view{} : s.substr(begin);
}

std::string normalise(std::string_view line, bool relax_indent) {
  std::string_view out = rstrip(line);
  if (relax_indent) out = lstrip(out);
  return std::string(out);
}

bool is_fence(std::string_view normalised) { return lstrip(normalised).starts_with("```"); }

}  // namespace

std::string_view strip_leading_think(std::string_view text) {
  constexpr std::string_view open = "<think>";
  constexpr std::string_view close = "</think>";
  const std::string_view body = lstrip(text);
  if (!body.starts_with(open)) return text;
  const auto end = body.find(close, open.size());
  if (end == std::string_view::npos) return {};
  return body.substr(end + close.size());
}

std::vector<std::string> answer_lines(std::string_view produced, const RecallOptions& options) {
  const std::string_view text = strip_leading_think(produced);
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    const auto stop = nl == std::string_view::npos ? text.size() : nl;
    lines.push_back(normalise(text.substr(start, stop - start), options.relax_indent));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }

  std::vector<std::size_t> fences;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (is_fence(lines[i])) fences.push_back(i);
  }
  if (fences.size() >= 2) {
    // Keep the code block(s): prose before the first fence and after the last one is chatter,
    // not recall. Fences in between stay and count as produced lines.
    lines = std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(fences.front()) + 1,
                                     lines.begin() + static_cast<std::ptrdiff_t>(fences.back()));
  } else if (fences.size() == 1) {
    // A lone fence: an opening one whose answer was cut off, or a stray closing one.
    lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(fences.front()));
  }

  const auto not_blank = [](const std::string& s) { return !s.empty(); };
  const auto first = std::find_if(lines.begin(), lines.end(), not_blank);
  const auto last = std::find_if(lines.rbegin(), lines.rend(), not_blank).base();
  if (first >= last) return {};
  return std::vector<std::string>(first, last);
}

RecallScore score_recall(std::span<const std::string> primary, std::span<const std::string> bonus,
                         std::string_view produced, const RecallOptions& options) {
  std::vector<std::string> expected;
  expected.reserve(primary.size() + bonus.size());
  for (const auto& line : primary) expected.push_back(normalise(line, options.relax_indent));
  for (const auto& line : bonus) expected.push_back(normalise(line, options.relax_indent));
  const std::size_t primary_count =
      std::min(primary.size(), static_cast<std::size_t>(std::max(options.primary_lines, 0)));

  const std::vector<std::string> answer = answer_lines(produced, options);
  const std::vector<MatchedPair> pairs = align_lines(expected, answer, options.align);

  RecallScore score;
  std::vector<bool> produced_matched(answer.size(), false);
  for (const MatchedPair& p : pairs) {
    if (p.a_index < primary_count) {
      ++score.primary_matched;
    } else {
      ++score.bonus_matched;
    }
    produced_matched[p.b_index] = true;
  }
  for (std::size_t j = 0; j < answer.size(); ++j) {
    if (!produced_matched[j] && !answer[j].empty()) ++score.hallucinated;
  }
  score.produced_lines = static_cast<int>(answer.size());
  score.passed = score.primary_matched >= options.pass_lines;
  return score;
}

}  // namespace kvsweep::score
