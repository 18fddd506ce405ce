#pragma once
/// The `toolcall` probe (seed 003): tool schemas at the start of a long context, seeded filler,
/// and a request that needs one exact tool call whose argument values appear only once, deep in
/// the filler; scored by score::score_toolcall per context length.
///
/// Config: {"kind": "toolcall", "name": …, "lengths": [2048, 8192], "seeds": [1, 2, 3],
/// "filler": "code"|"prose"|"logs", "mode": "json"|"native", "max_tokens": 256, "tools": N,
/// "chat_template_kwargs": {…}}. Items are (length × seed), keys `L2048-s1`, lengths outer.
///
/// - A seed fixes everything but the filler's length: the offered tools (N of the catalogue,
///   always including the target, in a seeded order), the task, its argument values, the note
///   that carries them and its relative depth (10–50 % into the filler), so the lengths of one
///   seed form a clean axis.
/// - A length is the prompt's size in tokens. The filler's characters start from
///   corpus::kCharsPerToken; when the server can tokenize, the probe measures the prompt without
///   and with filler once and regenerates the filler at the measured characters per filler token
///   (the same prompt for every cell of one model). Filler comes in whole units, so a short
///   length may end a unit short.
/// - mode json: the tools are listed in the system message and the model must answer with only
///   {"tool": name, "arguments": {…}}. mode native: /v1/chat/completions with "tools" and
///   tool_choice "auto"; the call is read from message.tool_calls.
/// - Greedy (temperature 0, every sampling field sent), cache_prompt on: the lengths of one seed
///   share their prefix.
/// - A length that cannot fit (length + max_tokens > the cell's n_ctx, or the server's
///   exceed_context_size_error) is an item error "exceeds context", never a zero metric.
/// - Metrics (0/1): all_correct, parsed, right_tool, schema_valid, no_extra_params, args_exact;
///   with more than one length, each also as `<metric>_L<length>` on that length's items.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/corpus/filler.hpp"
#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

enum class ToolcallMode { json, native };

struct ToolcallConfig {
  std::string name = "toolcall";
  std::vector<int> lengths = {2048, 8192};
  std::vector<std::uint64_t> seeds = {1, 2, 3};
  corpus::FillerKind filler = corpus::FillerKind::code;
  ToolcallMode mode = ToolcallMode::json;
  int max_tokens = 256;
  int tools = 0;  // how many tools to offer; 0 = the whole catalogue
  nlohmann::json chat_template_kwargs = nullptr;  // passed to the chat template when set (e.g. enable_thinking)
};

/// Validates a probe config; throws core::FatalError naming the file and key.
ToolcallConfig parse_toolcall_config(const nlohmann::json& config, const ConfigSource& site);
std::unique_ptr<Probe> make_toolcall_probe(const nlohmann::json& config, const ConfigSource& site);

/// Every tool the probe can offer: [{"name", "description", "parameters": JSON Schema}], with
/// confusable neighbours on purpose (search_files / search_file / grep_repo, read_file /
/// open_file, list_directory / list_files, get_log_entries / tail_logs).
const nlohmann::json& toolcall_catalogue();

/// One seed's task, without the filler.
struct ToolcallTask {
  nlohmann::json tools = nlohmann::json::array();  // offered tools in prompt order (catalogue entries)
  std::string expected_tool;
  nlohmann::json expected_arguments = nlohmann::json::object();
  std::string note_id;   // e.g. OPS-4417: named by the note and by the question
  std::string note;      // the sentence planted in the filler, holding the argument values
  std::string question;  // the request at the end; names the note, never the values
  double depth = 0.0;    // where the note sits, as a fraction of the filler
};

/// The task of `seed` with `n_tools` offered tools (0 or more than the catalogue = all).
ToolcallTask make_toolcall_task(std::uint64_t seed, int n_tools);

struct ToolcallPrompt {
  std::string system;
  std::string user;
  nlohmann::json tools = nullptr;  // mode native: the OpenAI "tools" array sent with the request
  std::size_t filler_chars = 0;    // the filler's actual size
  std::size_t note_offset = 0;     // where the note starts in `user`
};

/// The messages for `task` with about `filler_chars` characters of filler (seeded by `seed`).
ToolcallPrompt build_toolcall_prompt(const ToolcallTask& task, ToolcallMode mode, corpus::FillerKind filler,
                                     std::size_t filler_chars, std::uint64_t seed);

/// Characters of the prompt other than the filler (system, question, and in native mode the tool
/// schemas the template will render), which the length's budget must also hold.
std::size_t toolcall_fixed_chars(const ToolcallTask& task, ToolcallMode mode);

/// FNV-1a 64 of the generated prompt (system, user and the native tools), as 16 hex digits:
/// the golden value that pins generation in the tests.
std::string toolcall_prompt_hash(const ToolcallPrompt& prompt);

}  // namespace kvsweep::probe
