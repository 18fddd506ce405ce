#include "kvsweep/score/toolcall_score.hpp"

#include <cmath>

namespace kvsweep::score {

namespace {

using nlohmann::json;

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t'))
    s.remove_prefix(1);
  return s;
}

/// The end (one past the closing brace) of the balanced object starting at `start`, if it closes.
std::optional<std::size_t> balanced_end(std::string_view text, std::size_t start) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{') ++depth;
    else if (c == '}' && --depth == 0) return i + 1;
  }
  return std::nullopt;
}

std::optional<json> first_object_in(std::string_view text) {
  for (std::size_t start = text.find('{'); start != std::string_view::npos; start = text.find('{', start + 1)) {
    auto end = balanced_end(text, start);
    if (!end) continue;
    json j = json::parse(text.substr(start, *end - start), nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded() && j.is_object()) return j;
  }
  return std::nullopt;
}

/// The bodies of ``` fenced blocks, in order (an unclosed fence runs to the end of the text).
std::vector<std::string_view> fenced_blocks(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t open = text.find("```", pos);
    if (open == std::string_view::npos) break;
    std::size_t body = text.find('\n', open + 3);  // skip the info string (```json)
    if (body == std::string_view::npos) break;
    ++body;
    const std::size_t close = text.find("```", body);
    out.push_back(text.substr(body, (close == std::string_view::npos ? text.size() : close) - body));
    if (close == std::string_view::npos) break;
    pos = close + 3;
  }
  return out;
}

/// JSON Schema type names of a value: "integer" for integral numbers, as the schema sees them.
bool has_type(const json& value, std::string_view type) {
  if (type == "object") return value.is_object();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "array") return value.is_array();
  if (type == "null") return value.is_null();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    if (value.is_number_integer()) return true;
    if (!value.is_number_float()) return false;
    const double d = value.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
  }
  return true;  // an unknown type name constrains nothing
}

std::string type_of(const json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number_float()) return "number";
  return value.type_name();
}

std::string short_dump(const json& v) {
  std::string s = v.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

const json* find_tool(const json& tools, std::string_view name) {
  if (!tools.is_array()) return nullptr;
  for (const auto& t : tools)
    if (t.is_object() && t.contains("name") && t["name"].is_string() && t["name"].get<std::string>() == name)
      return &t;
  return nullptr;
}

/// Arguments as an object: an object as is, a string holding a JSON object parsed.
std::optional<json> arguments_object(const json& args) {
  if (args.is_object()) return args;
  if (args.is_string()) {
    json j = json::parse(args.get<std::string>(), nullptr, false);
    if (!j.is_discarded() && j.is_object()) return j;
  }
  return std::nullopt;
}

}  // namespace

std::string_view strip_think(std::string_view text) {
  std::string_view t = trim_left(text);
  constexpr std::string_view open = "<think>", close = "</think>";
  if (t.starts_with(open)) {
    const std::size_t end = t.find(close);
    if (end == std::string_view::npos) return {};
    return trim_left(t.substr(end + close.size()));
  }
  // The prompt opened the block (templates that end the generation prompt with <think>).
  const std::size_t end = t.find(close);
  if (end != std::string_view::npos && t.substr(0, end).find('{') == std::string_view::npos)
    return trim_left(t.substr(end + close.size()));
  return t;
}

std::optional<json> first_json_object(std::string_view text) {
  for (std::string_view block : fenced_blocks(text))
    if (auto j = first_object_in(block)) return j;
  return first_object_in(text);
}

ParsedCall parse_json_call(std::string_view content) {
  const std::string_view text = strip_think(content);
  if (text.empty())
    return {std::nullopt, trim_left(content).starts_with("<think>") ? "the answer is an unterminated <think> block"
                                                                   : "the answer is empty"};
  auto obj = first_json_object(text);
  if (!obj) return {std::nullopt, "no JSON object in the answer"};
  const json* name = nullptr;
  for (const char* key : {"tool", "name"})
    if (obj->contains(key) && (*obj)[key].is_string()) {
      name = &(*obj)[key];
      break;
    }
  if (!name) return {std::nullopt, "the JSON object has no \"tool\" string: " + short_dump(*obj)};
  const json* args = nullptr;
  for (const char* key : {"arguments", "parameters"})
    if (obj->contains(key)) {
      args = &(*obj)[key];
      break;
    }
  if (!args) return {std::nullopt, "the JSON object has no \"arguments\": " + short_dump(*obj)};
  auto a = arguments_object(*args);
  if (!a) return {std::nullopt, "\"arguments\" is not a JSON object: " + short_dump(*args)};
  return {ToolCall{name->get<std::string>(), std::move(*a)}, ""};
}

ParsedCall parse_native_call(const json& tool_calls) {
  if (!tool_calls.is_array() || tool_calls.empty()) return {std::nullopt, "the answer holds no tool_calls"};
  const json& first = tool_calls.front();
  if (!first.is_object() || !first.contains("function") || !first["function"].is_object())
    return {std::nullopt, "tool_calls[0] has no \"function\" object: " + short_dump(first)};
  const json& fn = first["function"];
  if (!fn.contains("name") || !fn["name"].is_string())
    return {std::nullopt, "tool_calls[0].function has no \"name\" string"};
  auto a = arguments_object(fn.value("arguments", json()));
  if (!a)
    return {std::nullopt, "tool_calls[0].function.arguments is not a JSON object: " +
                              short_dump(fn.value("arguments", json()))};
  return {ToolCall{fn["name"].get<std::string>(), std::move(*a)}, ""};
}

std::vector<std::string> validate_schema(const json& schema, const json& value, const std::string& path) {
  std::vector<std::string> problems;
  if (!schema.is_object()) return problems;
  if (schema.contains("enum") && schema["enum"].is_array()) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == value;
    if (!found) problems.push_back(path + ": " + short_dump(value) + " is not one of " + short_dump(schema["enum"]));
  }
  if (schema.contains("type")) {
    const json& t = schema["type"];
    bool ok = true;
    if (t.is_string()) {
      ok = has_type(value, t.get<std::string>());
    } else if (t.is_array()) {
      ok = false;
      for (const auto& one : t) ok = ok || (one.is_string() && has_type(value, one.get<std::string>()));
    }
    if (!ok) {
      problems.push_back(path + ": expected " + (t.is_string() ? t.get<std::string>() : t.dump()) + ", got " +
                         type_of(value));
      return problems;  // nothing below a wrong type is meaningful
    }
  }
  if (value.is_object()) {
    if (schema.contains("required") && schema["required"].is_array())
      for (const auto& r : schema["required"])
        if (r.is_string() && !value.contains(r.get<std::string>()))
          problems.push_back(path + ": missing required \"" + r.get<std::string>() + "\"");
    const json* props = schema.contains("properties") && schema["properties"].is_object() ? &schema["properties"] : nullptr;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (props && props->contains(it.key())) {
        auto sub = validate_schema((*props)[it.key()], it.value(), path + "." + it.key());
        problems.insert(problems.end(), sub.begin(), sub.end());
      } else if (schema.contains("additionalProperties") && schema["additionalProperties"] == false) {
        problems.push_back(path + ": \"" + it.key() + "\" is not allowed (additionalProperties is false)");
      }
    }
  }
  if (value.is_array() && schema.contains("items"))
    for (std::size_t i = 0; i < value.size(); ++i) {
      auto sub = validate_schema(schema["items"], value[i], path + "[" + std::to_string(i) + "]");
      problems.insert(problems.end(), sub.begin(), sub.end());
    }
  return problems;
}

ToolcallScore score_toolcall(const ParsedCall& parsed, const json& tools, std::string_view expected_tool,
                             const json& expected_arguments) {
  ToolcallScore s;
  if (!parsed.call) {
    s.problems.push_back("not parsed: " + parsed.error);
    return s;
  }
  const ToolCall& call = *parsed.call;
  s.parsed = true;
  s.chosen_tool = call.name;
  s.right_tool = call.name == expected_tool;
  if (!s.right_tool) s.problems.push_back("called " + call.name + ", expected " + std::string(expected_tool));

  const json* tool = find_tool(tools, call.name);
  if (!tool) {
    s.problems.push_back("no tool named " + call.name + " was offered");
  } else {
    const json schema = tool->value("parameters", json::object());
    auto problems = validate_schema(schema, call.arguments);
    s.schema_valid = problems.empty();
    s.problems.insert(s.problems.end(), problems.begin(), problems.end());
    const json props = schema.value("properties", json::object());
    s.no_extra_params = true;
    for (auto it = call.arguments.begin(); it != call.arguments.end(); ++it)
      if (!props.contains(it.key())) {
        s.no_extra_params = false;
        s.problems.push_back("parameter \"" + it.key() + "\" is not in " + call.name + "'s schema");
      }
  }

  s.args_exact = expected_arguments.is_object();
  if (s.args_exact)
    for (auto it = expected_arguments.begin(); it != expected_arguments.end(); ++it) {
      if (!call.arguments.contains(it.key())) {
        s.args_exact = false;
        s.problems.push_back("argument \"" + it.key() + "\" missing (expected " + short_dump(it.value()) + ")");
      } else if (call.arguments[it.key()] != it.value()) {
        // nlohmann compares integers and floats by value, so 12 and 12.0 are equal, as the schema's integer is.
        s.args_exact = false;
        s.problems.push_back("argument \"" + it.key() + "\" is " + short_dump(call.arguments[it.key()]) +
                             ", expected " + short_dump(it.value()));
      }
    }
  s.all_correct = s.parsed && s.right_tool && s.schema_valid && s.no_extra_params && s.args_exact;
  return s;
}

const std::vector<std::string>& toolcall_metric_names() {
  static const std::vector<std::string> names = {"all_correct",     "parsed",     "right_tool", "schema_valid",
                                                 "no_extra_params", "args_exact"};
  return names;
}

json to_metrics(const ToolcallScore& s) {
  json m = json::object();
  m["all_correct"] = s.all_correct ? 1 : 0;
  m["parsed"] = s.parsed ? 1 : 0;
  m["right_tool"] = s.right_tool ? 1 : 0;
  m["schema_valid"] = s.schema_valid ? 1 : 0;
  m["no_extra_params"] = s.no_extra_params ? 1 : 0;
  m["args_exact"] = s.args_exact ? 1 : 0;
  return m;
}

}  // namespace kvsweep::score
