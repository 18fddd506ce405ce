#pragma once
/// Counting in generated text (prompts, filler): how often a string occurs, and the words that mix
/// digits with letters (the seeded values the toolcall generator plants; filler has none).
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::testing {

inline std::size_t count(std::string_view hay, std::string_view needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string_view::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

/// Words (runs of letters and digits) that mix digits with letters.
inline std::vector<std::string> mixed_words(std::string_view text) {
  std::vector<std::string> out;
  std::string w;
  auto flush = [&] {
    const bool d = std::any_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    const bool a = std::any_of(w.begin(), w.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
    if (d && a) out.push_back(w);
    w.clear();
  };
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) w += c;
    else flush();
  }
  flush();
  return out;
}

}  // namespace kvsweep::testing
