#include "kvsweep/score/answer_key.hpp"

#include <cctype>

namespace kvsweep::score {

namespace {

char fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::regex compile(const std::string& pattern) {
  return std::regex(pattern, std::regex::ECMAScript | std::regex::icase);
}

}  // namespace

nlohmann::json Expect::to_json() const {
  if (pattern) return {{"pattern", *pattern}};
  if (any.size() == 1) return any.front();
  return any;
}

bool contains_word(std::string_view haystack, std::string_view needle) {
  if (needle.empty() || needle.size() > haystack.size()) return false;
  for (std::size_t at = 0; at + needle.size() <= haystack.size(); ++at) {
    std::size_t n = 0;
    while (n < needle.size() && fold(haystack[at + n]) == fold(needle[n])) ++n;
    if (n < needle.size()) continue;
    // A boundary is needed only where the expected text itself starts or ends with a word
    // character: "3.5" ends in a digit, so "3.55" is refused; "U.S." may be followed by anything.
    const bool left = at == 0 || !word_char(needle.front()) || !word_char(haystack[at - 1]);
    const std::size_t end = at + needle.size();
    const bool right = end == haystack.size() || !word_char(needle.back()) || !word_char(haystack[end]);
    if (left && right) return true;
  }
  return false;
}

std::expected<Expect, std::string> parse_expect(const nlohmann::json& j) {
  Expect out;
  const auto text = [](const nlohmann::json& v) { return v.is_string() && !v.get<std::string>().empty(); };
  if (text(j)) {
    out.any.push_back(j.get<std::string>());
  } else if (j.is_array() && !j.empty()) {
    for (const auto& v : j) {
      if (!text(v)) return std::unexpected("expect: every answer in the list must be a non-empty string");
      out.any.push_back(v.get<std::string>());
    }
  } else if (j.is_object() && j.size() == 1 && j.contains("pattern") && text(j["pattern"])) {
    out.pattern = j["pattern"].get<std::string>();
    try {
      (void)compile(*out.pattern);
    } catch (const std::regex_error& e) {
      return std::unexpected("expect: pattern \"" + *out.pattern + "\" is not a regular expression (" + e.what() + ")");
    }
  } else {
    return std::unexpected(
        "expect: expected an answer (\"Paris\"), any of several ([\"8\", \"eight\"]) or a pattern "
        "({\"pattern\": \"^\\\\W*no\\\\b\"})");
  }
  return out;
}

bool answer_correct(std::string_view answer, const Expect& expect) {
  if (expect.pattern) {
    const std::string text(answer);
    return std::regex_search(text, compile(*expect.pattern));
  }
  for (const auto& a : expect.any)
    if (contains_word(answer, a)) return true;
  return false;
}

}  // namespace kvsweep::score
