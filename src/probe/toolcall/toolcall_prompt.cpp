/// build_toolcall_prompt: a task's system and user messages around seeded filler, and their hash.

#include "kvsweep/probe/toolcall/toolcall.hpp"

#include "kvsweep/core/fnv1a.hpp"

namespace kvsweep::probe {

namespace {

using nlohmann::json;

/// The filler's own seed: fixed per task seed, the same at every length.
std::uint64_t filler_seed(std::uint64_t seed) { return seed * 0x9e3779b97f4a7c15ULL ^ 0x66696c6c6572ULL; }

std::string tool_lines(const json& tools) {
  std::string out;
  for (const auto& t : tools) out += t.dump() + "\n";
  return out;
}

json native_tools(const json& tools) {
  json out = json::array();
  for (const auto& t : tools)
    out.push_back({{"type", "function"},
                   {"function", {{"name", t["name"]}, {"description", t["description"]}, {"parameters", t["parameters"]}}}});
  return out;
}

constexpr const char* kSystemJson =
    "You are a coding agent working in a large repository. These are the tools you can call, one per line, "
    "each with its parameters as a JSON Schema:\n\n";
constexpr const char* kAnswerJson =
    "To call a tool, answer with only a JSON object of the form {\"tool\": \"<tool name>\", \"arguments\": "
    "{\"<parameter>\": <value>, ...}} and nothing else.";
constexpr const char* kSystemNative =
    "You are a coding agent working in a large repository. Act only through the tools you are given: answer "
    "with exactly one tool call.";
constexpr const char* kIntro = "Below is material gathered from the repository, its notes and its logs.\n\n";

std::string system_text(const ToolcallTask& task, ToolcallMode mode) {
  if (mode == ToolcallMode::native) return kSystemNative;
  return std::string(kSystemJson) + tool_lines(task.tools) + "\n" + kAnswerJson;
}

std::string question_text(const ToolcallTask& task, ToolcallMode mode) {
  std::string q = "\n" + task.question + " Make exactly one tool call.";
  if (mode == ToolcallMode::json) q += " Answer with only the JSON object.";
  return q;
}


}  // namespace

ToolcallPrompt build_toolcall_prompt(const ToolcallTask& task, ToolcallMode mode, corpus::FillerKind filler,
                                     std::size_t filler_chars, std::uint64_t seed) {
  const corpus::Filler f = corpus::make_filler({filler, filler_chars, filler_seed(seed)}, task.note, task.depth);
  ToolcallPrompt p;
  p.system = system_text(task, mode);
  p.user = std::string(kIntro) + f.text + question_text(task, mode);
  if (mode == ToolcallMode::native) p.tools = native_tools(task.tools);
  p.filler_chars = f.text.size();
  p.note_offset = std::string_view(kIntro).size() + f.note_offset;
  return p;
}

std::size_t toolcall_fixed_chars(const ToolcallTask& task, ToolcallMode mode) {
  std::size_t n = system_text(task, mode).size() + std::string_view(kIntro).size() + question_text(task, mode).size();
  if (mode == ToolcallMode::native) n += native_tools(task.tools).dump().size();
  return n;
}

std::string toolcall_prompt_hash(const ToolcallPrompt& prompt) {
  std::uint64_t h = core::fnv1a64(prompt.system);
  h = core::fnv1a64(std::string_view("\x1f", 1), h);
  h = core::fnv1a64(prompt.user, h);
  h = core::fnv1a64(std::string_view("\x1f", 1), h);
  if (!prompt.tools.is_null()) h = core::fnv1a64(prompt.tools.dump(), h);
  return core::hex16(h);
}

}  // namespace kvsweep::probe
