#pragma once
/// Ground truth for a short answer: a prompt's `expect` (one text, any of several, or a pattern)
/// and whether an answer meets it. The `complete` probe records the result as `correct`, its
/// quality metric (the answer key), beside its change metrics (how the answer moved from the
/// reference's).
///
/// The rule is the one short-answer benchmarks score free text with (TriviaQA's and SQuAD's
/// "exact match after normalisation", relaxed to "contained" because a chat model answers in a
/// sentence): ASCII case folded, the expected text found in the answer as a whole word — neither
/// preceded nor followed by a letter or digit, so "391" is not found in "3910" nor "cat" in
/// "concatenate". A pattern (ECMAScript, case-insensitive, searched anywhere) is for what a word
/// cannot say: `^\W*no\b` for an answer that must begin with "no".

#include <expected>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>


namespace kvsweep::score {

struct Expect {
  std::vector<std::string> any;        // texts, any one of which makes the answer correct
  std::optional<std::string> pattern;  // or: a regular expression the answer must contain
  /// As written in a config or a prompts file: "text", ["text", …] or {"pattern": "…"}.
  nlohmann::json to_json() const;
};

/// Reads `expect` as a config or prompts file gives it: a non-empty string, a non-empty array of
/// non-empty strings, or {"pattern": "<ECMAScript regex>"} (checked to compile). The error says what
/// is wrong, for the caller to place (file and line, or config path).
std::expected<Expect, std::string> parse_expect(const nlohmann::json& j);

/// Whether `answer` meets `expect` (the rule above).
bool answer_correct(std::string_view answer, const Expect& expect);

/// `needle` in `haystack`, ASCII case folded, not touching a letter or digit on either side.
bool contains_word(std::string_view haystack, std::string_view needle);

}  // namespace kvsweep::score
