#pragma once
/// Scoring of one tool call against the expected one: parsing a model's answer (a JSON object in
/// text, or the server's native tool_calls), a small JSON Schema validator and the 0/1 metrics.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvsweep::score {

/// A tool call as the model made it.
struct ToolCall {
  std::string name;
  nlohmann::json arguments = nlohmann::json::object();
};

/// The call found in an answer, or why there is none.
struct ParsedCall {
  std::optional<ToolCall> call;
  std::string error;  // set when !call
};

/// The text after a leading `<think>…</think>` block (leading whitespace ignored). Text that
/// opens a think block and never closes it leaves nothing; text whose think block was opened by the
/// prompt (a bare `</think>` before any `{`) is cut after that tag.
std::string_view strip_think(std::string_view text);

/// The first balanced `{…}` in `text` that parses as a JSON object (strings and escapes are
/// respected when balancing). Blocks fenced with ``` are searched first, then the whole text.
std::optional<nlohmann::json> first_json_object(std::string_view text);

/// A call answered as text: `{"tool": name, "arguments": {…}}` after strip_think, found by
/// first_json_object. Also accepted: "name" for "tool", "parameters" for "arguments", and
/// arguments given as a string holding a JSON object (as OpenAI's wire format does).
ParsedCall parse_json_call(std::string_view content);

/// The first call of an OpenAI-style `message.tool_calls` array:
/// [{"type": "function", "function": {"name": …, "arguments": "<JSON text>" or {…}}}, …].
ParsedCall parse_native_call(const nlohmann::json& tool_calls);

/// Where `value` breaks `schema`, empty when it is valid. The subset kvsweep generates:
/// "type" (object, string, integer, number, boolean, array), "enum", "properties", "required",
/// "additionalProperties": false, "items". An integer accepts a number with no fractional part
/// (JSON Schema draft 6 and later). Unknown keywords are ignored, as JSON Schema does.
std::vector<std::string> validate_schema(const nlohmann::json& schema, const nlohmann::json& value,
                                         const std::string& path = "arguments");

/// The separate 0/1 outcomes of one call, in the order a call usually breaks.
struct ToolcallScore {
  bool parsed = false;           // a call structure was found (JSON object with a name and arguments / native tool_calls)
  bool right_tool = false;       // its name is the expected tool
  bool schema_valid = false;     // its arguments validate against the chosen tool's schema (required present, types match)
  bool no_extra_params = false;  // every argument name exists in the chosen tool's schema (no hallucinated parameters)
  bool args_exact = false;       // every expected argument is present with exactly the expected value
  bool all_correct = false;      // all of the above
  std::string chosen_tool;       // empty when not parsed
  std::vector<std::string> problems;  // human-readable reasons for every 0
};

/// Scores `parsed` against the tool set and the expected call. `tools` is an array of
/// {"name", "description", "parameters": JSON Schema}. A chosen tool that is not in the set fails
/// schema_valid and no_extra_params; args_exact compares only the expected arguments' values, so
/// a wrong tool that shares parameter names can still carry the right values.
ToolcallScore score_toolcall(const ParsedCall& parsed, const nlohmann::json& tools, std::string_view expected_tool,
                             const nlohmann::json& expected_arguments);

/// The metric names, in report order (all_correct first: it is the pass metric).
const std::vector<std::string>& toolcall_metric_names();
/// {"all_correct": 0|1, "parsed": 0|1, …} in toolcall_metric_names() order.
nlohmann::json to_metrics(const ToolcallScore& score);

}  // namespace kvsweep::score
