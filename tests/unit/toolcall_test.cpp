// The toolcall probe: the scorer on literal answers, the seeded generation (golden hashes, values
// that appear once, filler shape), config validation, and the probe against a fake server::Api.

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/corpus/filler.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/toolcall.hpp"
#include "kvsweep/score/toolcall_score.hpp"
#include "kvsweep/server/api.hpp"
#include "fake_api.hpp"
#include "metric_declarations.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {

using kvsweep::core::ErrorKind;
using kvsweep::core::Expected;
using kvsweep::core::FatalError;
using kvsweep::corpus::FillerKind;
using kvsweep::probe::ConfigSite;
using kvsweep::probe::ToolcallMode;
using kvsweep::score::parse_json_call;
using kvsweep::score::parse_native_call;
using kvsweep::score::score_toolcall;
using kvsweep::score::ToolcallScore;
using nlohmann::json;

// ---------------------------------------------------------------------------------------
// Scorer
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------

std::size_t count(std::string_view hay, std::string_view needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string_view::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

/// Words (runs of letters and digits) that mix digits with letters.
std::vector<std::string> mixed_words(std::string_view text) {
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

TEST(ToolcallGeneration, GoldenHashes) {
  using kvsweep::probe::build_toolcall_prompt;
  using kvsweep::probe::make_toolcall_task;
  using kvsweep::probe::toolcall_prompt_hash;
  auto hash = [](std::uint64_t seed, int tools, ToolcallMode mode, FillerKind kind, std::size_t chars) {
    return toolcall_prompt_hash(build_toolcall_prompt(make_toolcall_task(seed, tools), mode, kind, chars, seed));
  };
  // If these change, every published toolcall number changes with them: bump on purpose only.
  EXPECT_EQ(hash(1, 0, ToolcallMode::json, FillerKind::code, 7000), "dae36f9db2a22512");
  EXPECT_EQ(hash(2, 4, ToolcallMode::json, FillerKind::prose, 3000), "316c5768e61c54a3");
  EXPECT_EQ(hash(3, 6, ToolcallMode::native, FillerKind::logs, 5000), "eafbdeef956db7aa");
  // Same seed, same prompt; another seed, another prompt.
  EXPECT_EQ(hash(1, 0, ToolcallMode::json, FillerKind::code, 7000), hash(1, 0, ToolcallMode::json, FillerKind::code, 7000));
  EXPECT_NE(hash(1, 0, ToolcallMode::json, FillerKind::code, 7000), hash(4, 0, ToolcallMode::json, FillerKind::code, 7000));
}

TEST(ToolcallGeneration, SameSeedSameTaskAtEveryLength) {
  auto a = kvsweep::probe::make_toolcall_task(7, 5);
  auto b = kvsweep::probe::make_toolcall_task(7, 5);
  EXPECT_EQ(a.tools, b.tools);
  EXPECT_EQ(a.expected_arguments, b.expected_arguments);
  EXPECT_EQ(a.note, b.note);
  auto p1 = kvsweep::probe::build_toolcall_prompt(a, ToolcallMode::json, FillerKind::code, 4000, 7);
  auto p2 = kvsweep::probe::build_toolcall_prompt(a, ToolcallMode::json, FillerKind::code, 16000, 7);
  EXPECT_EQ(p1.system, p2.system);
  EXPECT_GT(p2.user.size(), 3 * p1.user.size());
}

TEST(ToolcallGeneration, ValuesAppearOnceDeepInTheFillerAndNeverInTheQuestion) {
  std::set<std::string> targets;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    auto task = kvsweep::probe::make_toolcall_task(seed, 0);
    targets.insert(task.expected_tool);
    EXPECT_EQ(task.tools.size(), kvsweep::probe::toolcall_catalogue().size());
    EXPECT_GE(task.depth, 0.1);
    EXPECT_LE(task.depth, 0.5);
    for (FillerKind kind : {FillerKind::code, FillerKind::prose, FillerKind::logs}) {
      const std::size_t chars = 2000 + 500 * (seed % 7);
      for (ToolcallMode mode : {ToolcallMode::json, ToolcallMode::native}) {
        auto p = kvsweep::probe::build_toolcall_prompt(task, mode, kind, chars, seed);
        const std::string all = p.system + p.user;
        EXPECT_LE(p.filler_chars, chars);
        EXPECT_GT(p.filler_chars, chars / 2);
        for (auto it = task.expected_arguments.begin(); it != task.expected_arguments.end(); ++it) {
          // Values carrying a seeded word such as 7f2a are unique; enum words (warn) and numbers are not.
          if (!it.value().is_string() || mixed_words(it.value().get<std::string>()).empty()) continue;
          const std::string v = it.value().get<std::string>();
          EXPECT_EQ(count(all, v), 1u) << "seed " << seed << " " << kvsweep::corpus::to_string(kind) << " " << v;
          EXPECT_EQ(count(task.question, v), 0u);
          EXPECT_GE(p.user.find(v), p.note_offset);
        }
        // The note is named by the question and sits in the first half of the filler.
        EXPECT_EQ(count(all, task.note_id), 2u) << seed;
        const double at = static_cast<double>(p.note_offset) / static_cast<double>(p.user.size());
        EXPECT_GT(at, 0.02) << seed;
        EXPECT_LT(at, 0.65) << seed << " " << kvsweep::corpus::to_string(kind);
      }
    }
  }
  // Every task template is reached.
  EXPECT_EQ(targets, (std::set<std::string>{"search_files", "search_file", "grep_repo", "read_file", "get_log_entries",
                                            "list_directory"}));
}

TEST(ToolcallGeneration, ExpectedArgumentsValidateAgainstTheTargetSchema) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    auto task = kvsweep::probe::make_toolcall_task(seed, 3);
    ASSERT_EQ(task.tools.size(), 3u);
    std::set<std::string> names;
    for (const auto& t : task.tools) names.insert(t["name"].get<std::string>());
    EXPECT_EQ(names.size(), 3u);
    EXPECT_TRUE(names.contains(task.expected_tool));
    // The expected call scores 1 everywhere: the generator and the scorer agree.
    json answer = {{"tool", task.expected_tool}, {"arguments", task.expected_arguments}};
    auto s = score_toolcall(parse_json_call(answer.dump()), task.tools, task.expected_tool, task.expected_arguments);
    EXPECT_TRUE(s.all_correct) << seed << " " << answer.dump();
  }
  for (const auto& t : kvsweep::probe::toolcall_catalogue())
    for (const auto& r : t["parameters"]["required"]) EXPECT_TRUE(t["parameters"]["properties"].contains(r)) << t.dump();
}

TEST(Filler, KindsHaveTheirShapeAndNoMixedWords) {
  using kvsweep::corpus::make_filler;
  auto code = make_filler({FillerKind::code, 20000, 5});
  auto prose = make_filler({FillerKind::prose, 20000, 5});
  auto logs = make_filler({FillerKind::logs, 20000, 5});
  EXPECT_GT(count(code.text, "def "), 20u);
  EXPECT_GT(count(code.text, "# file: src/"), 3u);
  EXPECT_EQ(count(prose.text, "def "), 0u);
  EXPECT_GT(count(logs.text, "\n2026-03-"), 100u);
  for (const auto* f : {&code, &prose, &logs}) {
    EXPECT_LE(f->text.size(), 20000u);
    EXPECT_GT(f->text.size(), 19000u);
    EXPECT_EQ(f->note_offset, std::string::npos);
    EXPECT_EQ(mixed_words(f->text), std::vector<std::string>{});
  }
  // Seeded: the same options give the same bytes, another seed other bytes.
  EXPECT_EQ(make_filler({FillerKind::logs, 20000, 5}).text, logs.text);
  EXPECT_NE(make_filler({FillerKind::logs, 20000, 6}).text, logs.text);
  EXPECT_EQ(kvsweep::corpus::parse_filler_kind("prose"), FillerKind::prose);
  EXPECT_FALSE(kvsweep::corpus::parse_filler_kind("poetry"));
}

TEST(Filler, NoteIsOneUnitInTheKindsStyleAtItsDepth) {
  using kvsweep::corpus::make_filler;
  const std::string note = "OPS-1234: look at services/a-7f2a/b for \"x\".";
  auto code = make_filler({FillerKind::code, 10000, 3}, note, 0.3);
  ASSERT_NE(code.note_offset, std::string::npos);
  EXPECT_EQ(code.text.substr(code.note_offset, 12), "# OPS-1234: ");
  EXPECT_NEAR(static_cast<double>(code.note_offset) / 10000.0, 0.3, 0.08);
  EXPECT_LE(code.text.size(), 10000u);
  auto logs = make_filler({FillerKind::logs, 10000, 3}, note, 0.5);
  const std::string line = logs.text.substr(logs.note_offset, logs.text.find('\n', logs.note_offset) - logs.note_offset);
  EXPECT_THAT(line, HasSubstr(" WARN  ops-notes[1] " + note)) << line;
  // Too little room: the note alone.
  auto tiny = make_filler({FillerKind::prose, 10, 3}, note, 0.5);
  EXPECT_EQ(tiny.text, note + "\n\n");
  EXPECT_EQ(tiny.units, 0u);
}

// ---------------------------------------------------------------------------------------
// Config
// ---------------------------------------------------------------------------------------

ConfigSite site() { return {"sweep.json", "probes[0]", "/tmp"}; }

std::string config_error(const json& cfg) {
  try {
    (void)kvsweep::probe::parse_toolcall_config(cfg, site());
  } catch (const FatalError& e) {
    return e.message;
  }
  return "(no error)";
}

TEST(ToolcallConfig, Defaults) {
  auto o = kvsweep::probe::parse_toolcall_config({{"kind", "toolcall"}}, site());
  EXPECT_EQ(o.name, "toolcall");
  EXPECT_EQ(o.lengths, (std::vector<int>{2048, 8192}));
  EXPECT_EQ(o.seeds, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(o.filler, FillerKind::code);
  EXPECT_EQ(o.mode, ToolcallMode::json);
  EXPECT_EQ(o.max_tokens, 256);
  EXPECT_EQ(o.tools, static_cast<int>(kvsweep::probe::toolcall_catalogue().size()));
}

TEST(ToolcallConfig, ErrorsNameFileAndKey) {
  EXPECT_EQ(config_error({{"kind", "toolcall"}, {"lenghts", {2048}}}).rfind("sweep.json: probes[0]", 0), 0u);
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"lenghts", {2048}}}), HasSubstr("lengths"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"filler", "prosa"}}),
              HasSubstr("probes[0].filler: unknown value 'prosa' (did you mean 'prose'?)"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"mode", "tools"}}),
              HasSubstr("probes[0].mode: unknown value 'tools' (one of: json, native)"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"lengths", json::array()}}),
              HasSubstr("probes[0].lengths: expected a non-empty list"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"lengths", {2048, "8k"}}}),
              HasSubstr("probes[0].lengths[1]: expected an integer"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"lengths", {2048, 2048}}}),
              HasSubstr("lengths[1]: 2048 is listed twice"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"seeds", {1, -2}}}),
              HasSubstr("probes[0].seeds[1]: expected a non-negative"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"tools", 0}}), HasSubstr("probes[0].tools: expected 1 … 12"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"max_tokens", 0}}), HasSubstr("probes[0].max_tokens: must be >= 1"));
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"chat_template_kwargs", "off"}}),
              HasSubstr("chat_template_kwargs: expected an object"));
  // Twelve tool schemas do not fit in 512 tokens; two do.
  EXPECT_THAT(config_error({{"kind", "toolcall"}, {"lengths", {512, 2048}}}),
              HasSubstr("probes[0].lengths[0]: 512 tokens leave no room for filler"));
  EXPECT_EQ(config_error({{"kind", "toolcall"}, {"lengths", {512, 1024}}, {"tools", 2}}), "(no error)");
  // The registry knows the kind.
  auto probe = kvsweep::probe::make_probe({{"kind", "toolcall"}, {"lengths", {1024}}, {"tools", 4}}, site());
  EXPECT_EQ(probe->kind(), "toolcall");
}

// ---------------------------------------------------------------------------------------
// The probe against a fake server
// ---------------------------------------------------------------------------------------

/// The probe against a server that answers every chat with `answer`, or fails as llama-server does
/// past its context (`fail_exceed`), and tokenizes at `chars_per_token` (0: no tokenizer).
struct ProbeRun {
  std::unique_ptr<kvsweep::probe::Probe> probe;
  kvsweep::server::CompletionResponse answer;
  double chars_per_token = 0;
  bool fail_exceed = false;
  kvsweep::testing::FakeApi api;
  kvsweep::probe::CellInfo cell;

  explicit ProbeRun(const json& cfg) : probe(kvsweep::probe::make_toolcall_probe(cfg, site())) {
    cell.n_ctx = 1 << 20;
    api.on_complete = [this](const kvsweep::server::CompletionRequest&,
                             int) -> Expected<kvsweep::server::CompletionResponse> {
      if (fail_exceed)
        // What http::Client makes of llama-server's exceed_context_size_error (servers.md A3).
        return kvsweep::core::fail(ErrorKind::http_status,
                                   "POST /v1/chat/completions: HTTP 400: request (3000 tokens) exceeds the available "
                                   "context size (2048 tokens), try increasing it",
                                   400);
      kvsweep::server::CompletionResponse out = answer;
      out.timings.prompt_n = 100;
      out.timings.cache_n = 20;
      return out;
    };
    api.on_tokenize = [this](const std::string& text, bool) -> Expected<std::vector<std::int32_t>> {
      if (chars_per_token <= 0) return kvsweep::core::fail(ErrorKind::unsupported, "fake: no tokenizer");
      return std::vector<std::int32_t>(static_cast<std::size_t>(static_cast<double>(text.size()) / chars_per_token), 1);
    };
  }
  ProbeRun(const ProbeRun&) = delete;  // the api's scripts point at this one
  ProbeRun& operator=(const ProbeRun&) = delete;

  Expected<kvsweep::probe::ItemResult> run(std::size_t i) {
    kvsweep::probe::Context ctx{api, cell, nullptr, nullptr};
    return probe->run(probe->items().at(i), ctx);
  }
};

TEST(ToolcallProbe, ItemsAreLengthsTimesSeeds) {
  ProbeRun r({{"kind", "toolcall"}, {"lengths", {1024, 4096}}, {"seeds", {5, 9}}, {"tools", 5}, {"max_tokens", 64}});
  auto items = r.probe->items();
  std::vector<std::string> keys;
  for (const auto& i : items) keys.push_back(i.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"L1024-s5", "L1024-s9", "L4096-s5", "L4096-s9"}));
  EXPECT_EQ(items[0].spec["tool"], items[2].spec["tool"]);
  EXPECT_EQ(items[0].spec["arguments"], items[2].spec["arguments"]);
  EXPECT_EQ(r.probe->min_context(), 4096 + 64 + 512);
  auto metrics = r.probe->metrics();
  ASSERT_EQ(metrics.size(), 6u + 12u);
  EXPECT_EQ(metrics[0].name, "all_correct");
  EXPECT_EQ(metrics[6].name, "all_correct_L1024");
  EXPECT_EQ(metrics[17].name, "args_exact_L4096");
}

TEST(ToolcallProbe, JsonModeScoresTheAnswerAndSendsGreedyCachedChat) {
  ProbeRun r({{"kind", "toolcall"}, {"lengths", {1024, 2048}}, {"seeds", {5}}, {"tools", 4}, {"max_tokens", 64}});
  auto item = r.probe->items().at(1);
  json answer = {{"tool", item.spec["tool"]}, {"arguments", item.spec["arguments"]}};
  r.answer.content = "```json\n" + answer.dump() + "\n```";
  auto res = r.run(1);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->metrics["all_correct"], 1);
  EXPECT_EQ(res->metrics["all_correct_L2048"], 1);
  EXPECT_FALSE(res->metrics.contains("all_correct_L1024"));
  EXPECT_EQ(res->response["prompt_tokens"], 120);
  EXPECT_EQ(res->response["call"]["name"], item.spec["tool"]);
  ASSERT_EQ(r.api.requests.size(), 1u);
  const auto& req = r.api.requests[0];
  ASSERT_EQ(req.messages.size(), 2u);
  EXPECT_EQ(req.messages[0].role, "system");
  EXPECT_THAT(req.messages[0].content, HasSubstr("\"name\":\"" + item.spec["tool"].get<std::string>() + "\""));
  EXPECT_EQ(req.temperature, 0.0);
  EXPECT_TRUE(req.cache_prompt);
  EXPECT_EQ(req.n_predict, 64);
  EXPECT_FALSE(req.extra.contains("tools"));
  // Without a tokenizer the characters stand at 3.5 per token.
  const double chars = static_cast<double>(req.messages[0].content.size() + req.messages[1].content.size());
  EXPECT_NEAR(chars / 2048.0, kvsweep::corpus::kCharsPerToken, 0.3);

  // A wrong answer is a scored 0, not an error.
  r.answer.content = "I cannot help with that.";
  res = r.run(0);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->metrics["parsed"], 0);
  EXPECT_EQ(res->metrics["all_correct_L1024"], 0);
}

TEST(ToolcallProbe, NativeModeSendsToolsAndReadsToolCalls) {
  ProbeRun r({{"kind", "toolcall"}, {"lengths", {2048}}, {"seeds", {2}}, {"tools", 4}, {"mode", "native"},
              {"chat_template_kwargs", {{"enable_thinking", false}}}});
  auto item = r.probe->items().at(0);
  r.answer.content = "";
  r.answer.tool_calls = json::array({{{"type", "function"},
                                          {"function", {{"name", item.spec["tool"]}, {"arguments", item.spec["arguments"].dump()}}}}});
  auto res = r.run(0);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->metrics["all_correct"], 1);
  EXPECT_FALSE(res->metrics.contains("all_correct_L2048"));  // one length: no per-length copies
  const auto& req = r.api.requests.at(0);
  ASSERT_TRUE(req.extra.contains("tools"));
  EXPECT_EQ(req.extra["tools"].size(), 4u);
  EXPECT_EQ(req.extra["tools"][0]["type"], "function");
  EXPECT_EQ(req.extra["tool_choice"], "auto");
  EXPECT_EQ(req.extra["chat_template_kwargs"]["enable_thinking"], false);
  // The schemas travel as tools, not in the system message.
  EXPECT_THAT(req.messages[0].content, Not(HasSubstr("\"parameters\"")));
}

TEST(ToolcallProbe, CalibratesTheFillerAgainstTheServersTokenizer) {
  ProbeRun r({{"kind", "toolcall"}, {"lengths", {4096}}, {"seeds", {3}}, {"tools", 4}});
  r.chars_per_token = 2.0;  // a tokenizer much denser than the 3.5 estimate
  r.answer.content = "{}";
  auto res = r.run(0);
  ASSERT_TRUE(res) << res.error().message;
  ASSERT_EQ(r.api.tokenized.size(), 2u);  // the prompt without filler, then with it
  EXPECT_NEAR(res->response["calibration"]["filler_chars_per_token"].get<double>(), 2.0, 0.01);
  EXPECT_GT(res->response["calibration"]["fixed_tokens"].get<int>(), 500);
  EXPECT_LT(res->response["calibration"]["fixed_tokens"].get<int>(), res->response["calibration"]["first_tokens"].get<int>());
  const auto& req = r.api.requests.at(0);
  const double chars = static_cast<double>(req.messages[0].content.size() + req.messages[1].content.size());
  EXPECT_NEAR(chars / 4096.0, 2.0, 0.1);
}

TEST(ToolcallProbe, LengthsBeyondTheContextAreItemErrors) {
  ProbeRun r({{"kind", "toolcall"}, {"lengths", {1024, 8192}}, {"seeds", {1}}, {"tools", 4}, {"max_tokens", 64}});
  r.cell.n_ctx = 4096;
  auto res = r.run(1);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::exceeds_context);
  EXPECT_EQ(res.error().message.rfind("exceeds context: L8192-s1 needs 8192 prompt + 64 answer tokens", 0), 0u)
      << res.error().message;
  EXPECT_TRUE(r.api.requests.empty());
  // The server's own refusal (its context turned out smaller than asked) reads the same.
  r.fail_exceed = true;
  res = r.run(0);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::exceeds_context);
  EXPECT_EQ(res.error().message.rfind("exceeds context: L1024-s1: ", 0), 0u) << res.error().message;
}

}  // namespace

TEST(ToolcallProbe, DeclaresExactlyTheMetricsItsItemsEmit) {
  for (const json& lengths : {json::array({1024}), json::array({1024, 2048})}) {
    ProbeRun r({{"kind", "toolcall"}, {"lengths", lengths}, {"seeds", {5}}, {"tools", 4}, {"max_tokens", 64}});
    std::vector<json> emitted;
    for (std::size_t i = 0; i < r.probe->items().size(); ++i) {
      r.answer.content = "not a call";
      auto res = r.run(i);
      ASSERT_TRUE(res) << res.error().message;
      emitted.push_back(res->metrics);
    }
    kvsweep::probe::testing::expect_declarations_match(*r.probe, emitted);
    for (const auto& m : r.probe->metrics()) EXPECT_EQ(m.kind, kvsweep::probe::MetricKind::binary) << m.name;
  }
}
