// The toolcall scorer on literal answers: JSON and native calls, each flag on its own.

#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/score/toolcall_score.hpp"

using ::testing::HasSubstr;

namespace {

using kvsweep::score::parse_json_call;
using kvsweep::score::parse_native_call;
using kvsweep::score::score_toolcall;
using kvsweep::score::ToolcallScore;
using nlohmann::json;

// Two confusable tools, as the catalogue has them.
const json kTools = json::parse(R"([
  {"name": "search_file", "description": "Search inside one file.",
   "parameters": {"type": "object", "properties": {
     "file_path": {"type": "string"}, "query": {"type": "string"}, "context_lines": {"type": "integer"}},
     "required": ["file_path", "query"]}},
  {"name": "search_files", "description": "Search below a directory.",
   "parameters": {"type": "object", "properties": {
     "path": {"type": "string"}, "pattern": {"type": "string"}, "case_sensitive": {"type": "boolean"}},
     "required": ["path", "pattern"]}},
  {"name": "get_log_entries", "description": "Logs.",
   "parameters": {"type": "object", "properties": {
     "service": {"type": "string"}, "level": {"type": "string", "enum": ["info", "error"]},
     "lines": {"type": "integer"}},
     "required": ["service", "level"]}}
])");
const json kExpected = {{"file_path", "svc/a-7f2a/x.py"}, {"query", "could not settle 3c9e"}};

ToolcallScore score_text(std::string_view text, const char* tool = "search_file", const json& expected = kExpected) {
  return score_toolcall(parse_json_call(text), kTools, tool, expected);
}

// parsed, right_tool, schema_valid, no_extra_params, args_exact, all_correct
std::vector<int> flags(const ToolcallScore& s) {
  return {s.parsed, s.right_tool, s.schema_valid, s.no_extra_params, s.args_exact, s.all_correct};
}

TEST(ToolcallScore, ValidCallScoresOneEverywhere) {
  auto s = score_text(R"({"tool": "search_file", "arguments": {"file_path": "svc/a-7f2a/x.py", "query": "could not settle 3c9e"}})");
  EXPECT_EQ(flags(s), (std::vector<int>{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(s.chosen_tool, "search_file");
  EXPECT_TRUE(s.problems.empty());
  json m = kvsweep::score::to_metrics(s);
  EXPECT_EQ(m.size(), 6u);
  EXPECT_EQ(m["all_correct"], 1);
  EXPECT_EQ(kvsweep::score::toolcall_metric_names().front(), "all_correct");
}

TEST(ToolcallScore, WrongToolWithItsOwnParametersFailsRightToolAndArgs) {
  auto s = score_text(R"({"tool": "search_files", "arguments": {"path": "svc/a-7f2a/x.py", "pattern": "could not settle 3c9e"}})");
  // Valid for the tool it chose, but neither the tool nor the parameter names are the expected ones.
  EXPECT_EQ(flags(s), (std::vector<int>{1, 0, 1, 1, 0, 0}));
}

TEST(ToolcallScore, WrongToolWithTheRightParameterNamesIsHallucinatedParameters) {
  auto s = score_text(R"({"tool": "search_files", "arguments": {"file_path": "svc/a-7f2a/x.py", "query": "could not settle 3c9e"}})");
  // search_files requires path and pattern, knows neither file_path nor query; the values are right.
  EXPECT_EQ(flags(s), (std::vector<int>{1, 0, 0, 0, 1, 0}));
}

TEST(ToolcallScore, ExtraParameterFailsOnlyNoExtraParams) {
  auto s = score_text(R"({"tool": "search_file", "arguments": {"file_path": "svc/a-7f2a/x.py", "query": "could not settle 3c9e", "recursive": true}})");
  EXPECT_EQ(flags(s), (std::vector<int>{1, 1, 1, 0, 1, 0}));
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_THAT(s.problems[0], HasSubstr("\"recursive\" is not in search_file's schema")) << s.problems[0];
}

TEST(ToolcallScore, OptionalParameterOfTheSchemaIsNotExtra) {
  auto s = score_text(R"({"tool": "search_file", "arguments": {"file_path": "svc/a-7f2a/x.py", "query": "could not settle 3c9e", "context_lines": 3}})");
  EXPECT_EQ(flags(s), (std::vector<int>{1, 1, 1, 1, 1, 1}));
}

TEST(ToolcallScore, WrongValueFailsOnlyArgsExact) {
  auto s = score_text(R"({"tool": "search_file", "arguments": {"file_path": "svc/a-7f2a/y.py", "query": "could not settle 3c9e"}})");
  EXPECT_EQ(flags(s), (std::vector<int>{1, 1, 1, 1, 0, 0}));
  EXPECT_THAT(s.problems.at(0), HasSubstr("\"svc/a-7f2a/y.py\", expected \"svc/a-7f2a/x.py\""));
}

TEST(ToolcallScore, MissingRequiredFailsSchemaAndArgs) {
  auto s = score_text(R"({"tool": "search_file", "arguments": {"file_path": "svc/a-7f2a/x.py"}})");
  EXPECT_EQ(flags(s), (std::vector<int>{1, 1, 0, 1, 0, 0}));
}

TEST(ToolcallScore, NotJsonScoresZeroEverywhere) {
  for (const char* text : {"I would search the file for the message.", "", "{\"tool\": \"search_file\", \"arguments\": {",
                           "[1, 2, 3]"}) {
    auto s = score_text(text);
    EXPECT_EQ(flags(s), (std::vector<int>{0, 0, 0, 0, 0, 0})) << text;
    EXPECT_FALSE(s.problems.empty());
  }
}

TEST(ToolcallScore, JsonWithoutTheCallShapeIsNotParsed) {
  auto p = parse_json_call(R"({"file_path": "svc/a-7f2a/x.py"})");
  EXPECT_FALSE(p.call);
  EXPECT_THAT(p.error, HasSubstr("no \"tool\"")) << p.error;
  p = parse_json_call(R"({"tool": "search_file", "arguments": [1]})");
  EXPECT_FALSE(p.call);
  EXPECT_THAT(p.error, HasSubstr("not a JSON object")) << p.error;
}

TEST(ToolcallScore, JsonInFencesAfterProseWithBraces) {
  // The prose holds a brace pair that is not JSON; the fenced block is searched first.
  auto s = score_text("Sure {here} it is:\n```json\n{\"tool\": \"search_file\", \"arguments\": "
                      "{\"file_path\": \"svc/a-7f2a/x.py\", \"query\": \"could not settle 3c9e\"}}\n```\nDone.");
  EXPECT_EQ(flags(s), (std::vector<int>{1, 1, 1, 1, 1, 1}));
}

TEST(ToolcallScore, FirstBalancedObjectWinsAndBracesInStringsAreText) {
  json expected = {{"service", "a}b{c"}, {"level", "error"}};
  auto s = score_text(R"(Call: {"tool": "get_log_entries", "arguments": {"service": "a}b{c", "level": "error"}} and then {"tool": "x", "arguments": {}})",
                      "get_log_entries", expected);
  EXPECT_EQ(flags(s), (std::vector<int>{1, 1, 1, 1, 1, 1}));
}

TEST(ToolcallScore, LeadingThinkBlockIsStripped) {
  // The think block holds a decoy call; only the answer after it counts.
  auto s = score_text("<think>\nMaybe {\"tool\": \"search_files\", \"arguments\": {}}? No.\n</think>\n\n"
                      "{\"tool\": \"search_file\", \"arguments\": {\"file_path\": \"svc/a-7f2a/x.py\", "
                      "\"query\": \"could not settle 3c9e\"}}");
  EXPECT_EQ(flags(s), (std::vector<int>{1, 1, 1, 1, 1, 1}));
  // A think block the prompt opened (only the closing tag is generated).
  EXPECT_EQ(kvsweep::score::strip_think("reasoning here\n</think>\n{\"a\": 1}"), "{\"a\": 1}");
  // Thinking that never ended is no answer at all.
  auto cut = parse_json_call("<think>\nLet me look at {\"tool\": \"search_file\", \"arguments\": {}} first");
  EXPECT_FALSE(cut.call);
  EXPECT_THAT(cut.error, HasSubstr("unterminated <think>")) << cut.error;
}

TEST(ToolcallScore, AliasesAndArgumentsAsJsonText) {
  auto p = parse_json_call(R"({"name": "search_file", "parameters": {"file_path": "f", "query": "q"}})");
  ASSERT_TRUE(p.call);
  EXPECT_EQ(p.call->name, "search_file");
  EXPECT_EQ(p.call->arguments["query"], "q");
  p = parse_json_call(R"({"tool": "search_file", "arguments": "{\"file_path\": \"f\", \"query\": \"q\"}"})");
  ASSERT_TRUE(p.call);
  EXPECT_EQ(p.call->arguments["file_path"], "f");
}

TEST(ToolcallScore, TypesIntegersAndEnums) {
  json expected = {{"service", "s"}, {"level", "error"}, {"lines", 12}};
  // 12.0 is an integer for JSON Schema and equals 12.
  auto s = score_text(R"({"tool": "get_log_entries", "arguments": {"service": "s", "level": "error", "lines": 12.0}})",
                      "get_log_entries", expected);
  EXPECT_EQ(flags(s), (std::vector<int>{1, 1, 1, 1, 1, 1}));
  // "12" is a string, 12.5 is not integral, "fatal" is not in the enum.
  for (const char* text : {R"({"tool": "get_log_entries", "arguments": {"service": "s", "level": "error", "lines": "12"}})",
                           R"({"tool": "get_log_entries", "arguments": {"service": "s", "level": "error", "lines": 12.5}})",
                           R"({"tool": "get_log_entries", "arguments": {"service": "s", "level": "fatal", "lines": 12}})"}) {
    s = score_text(text, "get_log_entries", expected);
    EXPECT_EQ(flags(s), (std::vector<int>{1, 1, 0, 1, 0, 0})) << text;
  }
}

TEST(ToolcallScore, UnknownToolFailsSchemaAndParams) {
  auto s = score_text(R"({"tool": "find_in_file", "arguments": {"file_path": "svc/a-7f2a/x.py", "query": "could not settle 3c9e"}})");
  EXPECT_EQ(flags(s), (std::vector<int>{1, 0, 0, 0, 1, 0}));
}

TEST(ToolcallScore, ValidateSchemaReportsWhere) {
  json schema = json::parse(R"({"type": "object", "additionalProperties": false,
    "properties": {"a": {"type": "boolean"}, "b": {"type": "array", "items": {"type": "string"}}}, "required": ["a"]})");
  EXPECT_TRUE(kvsweep::score::validate_schema(schema, json{{"a", true}, {"b", {"x"}}}).empty());
  auto p = kvsweep::score::validate_schema(schema, json{{"b", {"x", 3}}, {"c", 1}});
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0], "arguments: missing required \"a\"");
  EXPECT_EQ(p[1], "arguments.b[1]: expected string, got integer");
  EXPECT_EQ(p[2], "arguments: \"c\" is not allowed (additionalProperties is false)");
  EXPECT_EQ(kvsweep::score::validate_schema(schema, json("x")).at(0), "arguments: expected object, got string");
}

TEST(ToolcallScore, NativeToolCalls) {
  json calls = json::parse(R"([{"type": "function", "id": "c1", "function": {"name": "search_file",
    "arguments": "{\"file_path\": \"svc/a-7f2a/x.py\", \"query\": \"could not settle 3c9e\"}"}}])");
  auto s = score_toolcall(parse_native_call(calls), kTools, "search_file", kExpected);
  EXPECT_EQ(flags(s), (std::vector<int>{1, 1, 1, 1, 1, 1}));
  // Arguments as an object are accepted too.
  calls[0]["function"]["arguments"] = kExpected;
  EXPECT_TRUE(parse_native_call(calls).call);
  // Broken argument text, no calls, and null (the server answered with content only) are not parsed.
  calls[0]["function"]["arguments"] = "{\"file_path\": ";
  EXPECT_FALSE(parse_native_call(calls).call);
  EXPECT_FALSE(parse_native_call(json::array()).call);
  auto none = parse_native_call(nullptr);
  EXPECT_FALSE(none.call);
  EXPECT_EQ(none.error, "the answer holds no tool_calls");
}

}  // namespace
