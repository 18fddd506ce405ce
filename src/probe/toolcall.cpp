#include "kvsweep/probe/toolcall.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/score/toolcall_score.hpp"
#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::probe {

namespace {

using nlohmann::json;
using stats::SplitMix64;

// Written for kvsweep. Parameter names overlap across neighbours on purpose (path / file_path /
// dir_path / root, pattern / query / regex / glob, service / service_name), so a model that reads
// a schema fuzzily picks a wrong tool or a neighbour's parameter.
constexpr const char* kCatalogue = R"([
 {"name": "search_files",
  "description": "Search every file below a directory for a literal text pattern; returns the paths of the files that contain it.",
  "parameters": {"type": "object", "properties": {
    "path": {"type": "string", "description": "Directory to search below."},
    "pattern": {"type": "string", "description": "Literal text to look for."},
    "max_results": {"type": "integer", "description": "Stop after this many files."},
    "case_sensitive": {"type": "boolean", "description": "Match letter case exactly."}},
   "required": ["path", "pattern"]}},
 {"name": "search_file",
  "description": "Search inside one file for a literal string; returns the matching lines.",
  "parameters": {"type": "object", "properties": {
    "file_path": {"type": "string", "description": "The file to search in."},
    "query": {"type": "string", "description": "Literal text to look for."},
    "context_lines": {"type": "integer", "description": "Lines of context around each match."}},
   "required": ["file_path", "query"]}},
 {"name": "grep_repo",
  "description": "Run a regular expression over the whole repository checked out at a root directory.",
  "parameters": {"type": "object", "properties": {
    "root": {"type": "string", "description": "Root directory of the checkout."},
    "regex": {"type": "string", "description": "Regular expression (RE2 syntax)."},
    "include_glob": {"type": "string", "description": "Only files matching this glob."}},
   "required": ["root", "regex"]}},
 {"name": "read_file",
  "description": "Read a range of lines from one file.",
  "parameters": {"type": "object", "properties": {
    "file_path": {"type": "string", "description": "The file to read."},
    "start_line": {"type": "integer", "description": "First line to read (1-based)."},
    "end_line": {"type": "integer", "description": "Last line to read (inclusive)."}},
   "required": ["file_path", "start_line", "end_line"]}},
 {"name": "open_file",
  "description": "Open a file in the editor, optionally at a line.",
  "parameters": {"type": "object", "properties": {
    "path": {"type": "string", "description": "The file to open."},
    "line": {"type": "integer", "description": "Line to place the cursor on."},
    "mode": {"type": "string", "enum": ["view", "edit"], "description": "Open read-only or for editing."}},
   "required": ["path"]}},
 {"name": "list_directory",
  "description": "List the entries of a directory.",
  "parameters": {"type": "object", "properties": {
    "dir_path": {"type": "string", "description": "The directory to list."},
    "recursive": {"type": "boolean", "description": "Also list every subdirectory."},
    "max_depth": {"type": "integer", "description": "Deepest level to descend to when recursive."}},
   "required": ["dir_path", "recursive"]}},
 {"name": "list_files",
  "description": "List the files whose paths match a glob pattern.",
  "parameters": {"type": "object", "properties": {
    "glob": {"type": "string", "description": "Glob pattern, e.g. src/**/*.py."},
    "root": {"type": "string", "description": "Directory the glob is relative to."}},
   "required": ["glob"]}},
 {"name": "get_log_entries",
  "description": "Fetch the log entries of one service at one severity level since a point in time.",
  "parameters": {"type": "object", "properties": {
    "service": {"type": "string", "description": "Service name."},
    "level": {"type": "string", "enum": ["debug", "info", "warn", "error"], "description": "Severity level."},
    "since": {"type": "string", "description": "ISO-8601 timestamp of the earliest entry."}},
   "required": ["service", "level", "since"]}},
 {"name": "tail_logs",
  "description": "Show the newest log lines of a service.",
  "parameters": {"type": "object", "properties": {
    "service_name": {"type": "string", "description": "Service name."},
    "lines": {"type": "integer", "description": "How many lines."}},
   "required": ["service_name"]}},
 {"name": "replace_in_file",
  "description": "Replace every occurrence of a text in one file.",
  "parameters": {"type": "object", "properties": {
    "file_path": {"type": "string", "description": "The file to edit."},
    "old_text": {"type": "string", "description": "Text to replace."},
    "new_text": {"type": "string", "description": "Replacement text."}},
   "required": ["file_path", "old_text", "new_text"]}},
 {"name": "run_command",
  "description": "Run a shell command and return its output.",
  "parameters": {"type": "object", "properties": {
    "command": {"type": "string", "description": "The command line."},
    "cwd": {"type": "string", "description": "Working directory."},
    "timeout_s": {"type": "integer", "description": "Seconds before the command is killed."}},
   "required": ["command"]}},
 {"name": "create_ticket",
  "description": "File a ticket in the issue tracker.",
  "parameters": {"type": "object", "properties": {
    "title": {"type": "string", "description": "One-line summary."},
    "priority": {"type": "string", "enum": ["low", "medium", "high", "urgent"], "description": "Priority."},
    "assignee": {"type": "string", "description": "Who should handle it."}},
   "required": ["title", "priority"]}}
])";

// Word lists for argument values (written for kvsweep).
constexpr const char* kAreas[] = {"billing", "orders", "accounts", "shipping", "catalog", "reports", "auth", "search"};
constexpr const char* kNouns[] = {"ledger", "invoice", "quota", "refund", "tenant", "coupon", "parcel", "webhook",
                                  "receipt", "snapshot", "replica", "policy"};
constexpr const char* kRoles[] = {"api", "worker", "scheduler", "gateway", "indexer"};
constexpr const char* kVerbs[] = {"reconcile", "settle", "archive", "validate", "publish", "reserve"};

template <std::size_t N>
std::string pick(SplitMix64& rng, const char* const (&words)[N]) {
  return words[rng.below(N)];
}

/// Four hex digits mixing at least one digit with at least one letter (e.g. 7f2a): a word the
/// filler never produces (see corpus::make_filler), so a value holding it appears only in the note.
std::string hex_word(SplitMix64& rng) {
  constexpr std::string_view digits = "0123456789abcdef";
  for (;;) {
    std::string w;
    for (int i = 0; i < 4; ++i) w += digits[rng.below(16)];
    const bool has_digit = std::any_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
    const bool has_letter = std::any_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'f'; });
    if (has_digit && has_letter) return w;
  }
}

std::string two_digits(std::uint64_t v) { return (v < 10 ? "0" : "") + std::to_string(v); }

/// Fills the target, its arguments, the note and the question of `task` from one of six templates.
void make_call(SplitMix64& rng, ToolcallTask& task) {
  const std::string id = task.note_id;
  const std::string hex = hex_word(rng);
  std::string hex2 = hex_word(rng);
  while (hex2 == hex) hex2 = hex_word(rng);
  switch (rng.below(6)) {
    case 0: {
      const std::string path = "services/" + pick(rng, kAreas) + "-" + hex + "/" + pick(rng, kNouns);
      const std::string pattern = pick(rng, kNouns) + "_" + pick(rng, kNouns) + "_flag_" + hex2;
      task.expected_tool = "search_files";
      task.expected_arguments = {{"path", path}, {"pattern", pattern}};
      task.note = id + ": the deprecated flag is still referenced somewhere below the directory " + path +
                  "; every file there that contains the text \"" + pattern + "\" has to be found.";
      task.question = "Follow note " + id + ": find every file below the directory it names that contains the text it quotes.";
      break;
    }
    case 1: {
      const std::string file = "services/" + pick(rng, kAreas) + "-" + hex + "/" + pick(rng, kNouns) + "_" +
                               pick(rng, kNouns) + ".py";
      const std::string query = "could not " + pick(rng, kVerbs) + " " + pick(rng, kNouns) + " " + hex2;
      task.expected_tool = "search_file";
      task.expected_arguments = {{"file_path", file}, {"query", query}};
      task.note = id + ": the broken assertion lives in the single file " + file +
                  "; its failure message contains \"" + query + "\".";
      task.question = "Follow note " + id + ": search inside the one file it names for the message it quotes.";
      break;
    }
    case 2: {
      const std::string root = "/srv/checkouts/" + pick(rng, kAreas) + "-" + hex;
      const std::string regex = pick(rng, kNouns) + "_[0-9]+_" + hex2;
      task.expected_tool = "grep_repo";
      task.expected_arguments = {{"root", root}, {"regex", regex}};
      task.note = id + ": before the release, the whole repository checked out at " + root +
                  " must be scanned with the regular expression \"" + regex + "\".";
      task.question = "Follow note " + id + ": scan the whole repository it names with the regular expression it gives.";
      break;
    }
    case 3: {
      const std::string file = "lib/" + pick(rng, kAreas) + "/" + pick(rng, kNouns) + "_" + hex + ".py";
      const int start = 10 + static_cast<int>(rng.below(890));
      const int end = start + 5 + static_cast<int>(rng.below(56));
      task.expected_tool = "read_file";
      task.expected_arguments = {{"file_path", file}, {"start_line", start}, {"end_line", end}};
      task.note = id + ": the suspicious code is lines " + std::to_string(start) + " to " + std::to_string(end) +
                  " of " + file + ".";
      task.question = "Follow note " + id + ": read exactly the lines it points to.";
      break;
    }
    case 4: {
      static const char* const kLevels[] = {"debug", "info", "warn", "error"};
      const std::string service = pick(rng, kAreas) + "-" + pick(rng, kRoles) + "-" + hex;
      const std::string level = pick(rng, kLevels);
      const std::string since = "2026-04-" + two_digits(1 + rng.below(28)) + "T" + two_digits(rng.below(24)) + ":" +
                                two_digits(rng.below(60)) + ":00Z";
      task.expected_tool = "get_log_entries";
      task.expected_arguments = {{"service", service}, {"level", level}, {"since", since}};
      task.note = id + ": the service " + service + " started misbehaving at " + since + "; only its " + level +
                  "-level entries matter.";
      task.question = "Follow note " + id + ": fetch the log entries it asks for.";
      break;
    }
    default: {
      const std::string dir = "data/" + pick(rng, kAreas) + "-" + hex + "/" + pick(rng, kNouns) + "s";
      const bool recursive = rng.below(2) == 0;
      task.expected_tool = "list_directory";
      task.expected_arguments = {{"dir_path", dir}, {"recursive", recursive}};
      task.note = id + ": we need " +
                  (recursive ? std::string("a full recursive listing") : std::string("a top-level listing only (not recursive)")) +
                  " of the directory " + dir + ".";
      task.question = "Follow note " + id + ": list the directory it names, the way it asks.";
      break;
    }
  }
}

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

std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string item_key(int length, std::uint64_t seed) {
  return "L" + std::to_string(length) + "-s" + std::to_string(seed);
}

bool exceeds_context_error(const core::Error& e) {
  return e.http_status == 400 && (e.message.find("exceed_context_size") != std::string::npos ||
                                  e.message.find("exceeds the available context") != std::string::npos);
}

class ToolcallProbe final : public Probe {
 public:
  explicit ToolcallProbe(ToolcallOptions options) : m_options(std::move(options)) {}

  std::string kind() const override { return "toolcall"; }
  std::string name() const override { return m_options.name; }
  int min_context() const override {
    return *std::max_element(m_options.lengths.begin(), m_options.lengths.end()) + m_options.max_tokens + 512;
  }

  std::vector<Item> items() const override {
    std::vector<Item> out;
    for (int length : m_options.lengths)
      for (std::uint64_t seed : m_options.seeds) {
        ToolcallTask task = make_toolcall_task(seed, m_options.tools);
        out.push_back({item_key(length, seed),
                       {{"length", length},
                        {"seed", seed},
                        {"filler", std::string(corpus::to_string(m_options.filler))},
                        {"mode", mode_name()},
                        {"tool", task.expected_tool},
                        {"arguments", task.expected_arguments},
                        {"note_id", task.note_id},
                        {"depth", task.depth},
                        {"tools", task.tools.size()}}});
      }
    return out;
  }

  std::optional<Calibration> calibration() const override { return Calibration{"all_correct", 0, 1}; }

  std::vector<MetricSpec> metrics() const override {
    std::vector<MetricSpec> out;
    for (const auto& m : score::toolcall_metric_names())
      out.push_back(quality(m, Direction::higher_better, MetricKind::binary));
    if (m_options.lengths.size() > 1)
      for (int length : m_options.lengths)
        for (const auto& m : score::toolcall_metric_names())
          out.push_back(quality(length_metric(m, length), Direction::higher_better, MetricKind::binary));
    return out;
  }
  bool deterministic() const override { return true; }  // greedy

  core::Expected<ItemResult> run(const Item& item, Context& ctx) override {
    const int length = item.spec.at("length").get<int>();
    const std::uint64_t seed = item.spec.at("seed").get<std::uint64_t>();
    if (ctx.cell.n_ctx > 0 && length + m_options.max_tokens > ctx.cell.n_ctx)
      return core::fail(core::ErrorKind::exceeds_context,
                        "exceeds context: " + item.key + " needs " + std::to_string(length) + " prompt + " +
                            std::to_string(m_options.max_tokens) + " answer tokens but the server's context is " +
                            std::to_string(ctx.cell.n_ctx) + " (raise server.ctx or drop the length)");
    const ToolcallTask task = make_toolcall_task(seed, m_options.tools);
    const std::size_t fixed = toolcall_fixed_chars(task, m_options.mode);
    const double target = static_cast<double>(length) * corpus::kCharsPerToken;
    std::size_t filler_chars = target > static_cast<double>(fixed) ? static_cast<std::size_t>(target) - fixed : 0;
    ToolcallPrompt prompt = build_toolcall_prompt(task, m_options.mode, m_options.filler, filler_chars, seed);

    // Calibrate once against the server's own tokenizer, so a length means tokens. The fixed text
    // (schemas, instructions, question, the note alone) and the filler are measured apart: JSON
    // schemas and filler tokenize at different rates, and at short lengths the schemas dominate.
    json calibration = nullptr;
    const ToolcallPrompt bare = build_toolcall_prompt(task, m_options.mode, m_options.filler, 0, seed);
    const auto n_bare = count_tokens(ctx, bare);
    const auto n_full = n_bare ? count_tokens(ctx, prompt) : std::nullopt;
    if (n_bare && n_full) {
      const double filler_tokens = static_cast<double>(*n_full) - static_cast<double>(*n_bare);
      const double filler_text = static_cast<double>(prompt.filler_chars) - static_cast<double>(bare.filler_chars);
      const double per_token = filler_tokens > 0 && filler_text > 0 ? filler_text / filler_tokens : corpus::kCharsPerToken;
      calibration = {{"fixed_tokens", *n_bare}, {"first_tokens", *n_full}, {"filler_chars_per_token", per_token}};
      if (std::abs(static_cast<double>(*n_full) - length) > 0.01 * length) {
        const double room = static_cast<double>(length) - static_cast<double>(*n_bare);
        filler_chars = bare.filler_chars + (room > 0 ? static_cast<std::size_t>(room * per_token) : 0);
        prompt = build_toolcall_prompt(task, m_options.mode, m_options.filler, filler_chars, seed);
      }
    }

    server::CompletionRequest req;
    req.messages = {{"system", prompt.system}, {"user", prompt.user}};
    req.n_predict = m_options.max_tokens;
    req.temperature = 0.0;
    req.top_k = 40;
    req.top_p = 1.0;
    req.min_p = 0.0;
    req.seed = 42;
    req.cache_prompt = true;
    if (m_options.mode == ToolcallMode::native) {
      req.extra["tools"] = prompt.tools;
      req.extra["tool_choice"] = "auto";
    }
    if (!m_options.chat_template_kwargs.is_null()) req.extra["chat_template_kwargs"] = m_options.chat_template_kwargs;
    auto res = ctx.api.complete(req);
    if (!res) {
      if (exceeds_context_error(res.error()))
        return core::fail(core::ErrorKind::exceeds_context, "exceeds context: " + item.key + ": " + res.error().message,
                          res.error().http_status);
      return std::unexpected(res.error());
    }

    const score::ParsedCall parsed = m_options.mode == ToolcallMode::native ? score::parse_native_call(res->tool_calls)
                                                                           : score::parse_json_call(res->content);
    const score::ToolcallScore s =
        score::score_toolcall(parsed, task.tools, task.expected_tool, task.expected_arguments);

    ItemResult out;
    out.timings = res->timings;
    out.metrics = score::to_metrics(s);
    if (m_options.lengths.size() > 1)
      for (const auto& m : score::toolcall_metric_names()) out.metrics[length_metric(m, length)] = out.metrics[m];
    json call = nullptr;
    if (parsed.call) call = {{"name", parsed.call->name}, {"arguments", parsed.call->arguments}};
    out.response = {{"content", res->content},
                    {"reasoning", res->reasoning},
                    {"tool_calls", res->tool_calls},
                    {"stop_type", res->stop_type},
                    {"call", call},
                    {"parse_error", parsed.error},
                    {"problems", s.problems},
                    {"prompt_hash", toolcall_prompt_hash(prompt)},
                    {"filler_chars", prompt.filler_chars},
                    {"prompt_tokens", res->timings.prompt_n + res->timings.cache_n},
                    {"calibration", calibration}};
    return out;
  }

 private:
  std::string mode_name() const { return m_options.mode == ToolcallMode::native ? "native" : "json"; }

  static std::string length_metric(const std::string& metric, int length) {
    return metric + "_L" + std::to_string(length);
  }

  /// Tokens of the prompt's text (without the chat template's few framing tokens); nullopt when the
  /// backend cannot tokenize, in which case the character estimate stands.
  static std::optional<std::size_t> count_tokens(Context& ctx, const ToolcallPrompt& prompt) {
    std::string text = prompt.system + "\n" + prompt.user;
    if (!prompt.tools.is_null()) text += "\n" + prompt.tools.dump();
    auto tokens = ctx.api.tokenize(text, false);
    if (!tokens) return std::nullopt;
    return tokens->size();
  }

  ToolcallOptions m_options;
};

std::vector<int> get_lengths(const json& cfg, const config::Site& s) {
  if (!cfg.contains("lengths")) return {2048, 8192};
  const config::Site site = s.child("lengths");
  const json& v = cfg["lengths"];
  if (!v.is_array() || v.empty()) site.fail("expected a non-empty list of context lengths in tokens, e.g. [2048, 8192]");
  std::vector<int> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer()) site.index(i).fail("expected an integer number of tokens, got " + v[i].dump());
    const long long n = v[i].get<long long>();
    if (n < 256 || n > 4'194'304) site.index(i).fail("expected 256 … 4194304 tokens, got " + std::to_string(n));
    if (std::find(out.begin(), out.end(), static_cast<int>(n)) != out.end())
      site.index(i).fail(std::to_string(n) + " is listed twice");
    out.push_back(static_cast<int>(n));
  }
  return out;
}

std::vector<std::uint64_t> get_seeds(const json& cfg, const config::Site& s) {
  if (!cfg.contains("seeds")) return {1, 2, 3};
  const config::Site site = s.child("seeds");
  const json& v = cfg["seeds"];
  if (!v.is_array() || v.empty()) site.fail("expected a non-empty list of integer seeds, e.g. [1, 2, 3]");
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer() || v[i].get<long long>() < 0)
      site.index(i).fail("expected a non-negative integer seed, got " + v[i].dump());
    const auto n = v[i].get<std::uint64_t>();
    if (std::find(out.begin(), out.end(), n) != out.end()) site.index(i).fail(std::to_string(n) + " is listed twice");
    out.push_back(n);
  }
  return out;
}

}  // namespace

const json& toolcall_catalogue() {
  static const json catalogue = json::parse(kCatalogue);
  return catalogue;
}

ToolcallTask make_toolcall_task(std::uint64_t seed, int n_tools) {
  SplitMix64 rng(seed ^ 0x746f6f6c63616c6cULL);  // "toolcall"
  ToolcallTask task;
  task.note_id = "OPS-" + std::to_string(1000 + rng.below(9000));
  make_call(rng, task);
  task.depth = 0.1 + 0.4 * static_cast<double>(rng.below(1001)) / 1000.0;

  // The target and a seeded choice of the others, in a seeded order (Fisher–Yates).
  const json& all = toolcall_catalogue();
  const std::size_t n = n_tools <= 0 ? all.size() : std::min<std::size_t>(static_cast<std::size_t>(n_tools), all.size());
  std::vector<json> others;
  json target;
  for (const auto& t : all) {
    if (t["name"] == task.expected_tool) target = t;
    else others.push_back(t);
  }
  for (std::size_t i = others.size(); i > 1; --i) std::swap(others[i - 1], others[rng.below(i)]);
  std::vector<json> chosen = {target};
  chosen.insert(chosen.end(), others.begin(), others.begin() + static_cast<std::ptrdiff_t>(n - 1));
  for (std::size_t i = chosen.size(); i > 1; --i) std::swap(chosen[i - 1], chosen[rng.below(i)]);
  task.tools = json(chosen);
  return task;
}

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
  std::uint64_t h = fnv1a64(prompt.system);
  h = fnv1a64(std::string_view("\x1f", 1), h);
  h = fnv1a64(prompt.user, h);
  h = fnv1a64(std::string_view("\x1f", 1), h);
  if (!prompt.tools.is_null()) h = fnv1a64(prompt.tools.dump(), h);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = kHex[h & 0xf];
  return out;
}

ToolcallOptions parse_toolcall_config(const json& cfg, const ConfigSite& site) {
  config::Site s(site.file, site.path);
  config::check_keys(cfg, {"kind", "name", "lengths", "seeds", "filler", "mode", "max_tokens", "tools",
                           "chat_template_kwargs"},
                     s);
  ToolcallOptions o;
  o.name = config::get_string(cfg, "name", "toolcall", s);
  o.lengths = get_lengths(cfg, s);
  o.seeds = get_seeds(cfg, s);
  const std::string filler = config::get_string(cfg, "filler", "code", s);
  if (auto k = corpus::parse_filler_kind(filler)) {
    o.filler = *k;
  } else {
    std::string msg = "unknown filler \"" + filler + "\"";
    if (auto n = config::nearest(filler, corpus::filler_kind_names())) msg += " (did you mean \"" + *n + "\"?)";
    s.child("filler").fail(msg + "; expected \"code\", \"prose\" or \"logs\"");
  }
  const std::string mode = config::get_string(cfg, "mode", "json", s);
  if (mode == "json") o.mode = ToolcallMode::json;
  else if (mode == "native") o.mode = ToolcallMode::native;
  else s.child("mode").fail("expected \"json\" or \"native\", got \"" + mode + "\"");
  o.max_tokens = static_cast<int>(config::get_int(cfg, "max_tokens", 256, s));
  if (o.max_tokens < 1) s.child("max_tokens").fail("must be >= 1");
  const auto catalogue = static_cast<long long>(toolcall_catalogue().size());
  o.tools = static_cast<int>(config::get_int(cfg, "tools", catalogue, s));
  if (o.tools < 1 || o.tools > catalogue)
    s.child("tools").fail("expected 1 … " + std::to_string(catalogue) + " tools to offer, got " + std::to_string(o.tools));
  if (cfg.contains("chat_template_kwargs")) {
    if (!cfg["chat_template_kwargs"].is_object())
      s.child("chat_template_kwargs").fail("expected an object, e.g. {\"enable_thinking\": false}");
    o.chat_template_kwargs = cfg["chat_template_kwargs"];
  }
  // Every length must leave room for filler after the fixed text (tools, instructions, question).
  for (std::size_t i = 0; i < o.lengths.size(); ++i) {
    std::size_t fixed = 0;
    for (std::uint64_t seed : o.seeds) fixed = std::max(fixed, toolcall_fixed_chars(make_toolcall_task(seed, o.tools), o.mode));
    const auto fixed_tokens = static_cast<long long>(std::ceil(static_cast<double>(fixed) / corpus::kCharsPerToken));
    if (fixed_tokens >= o.lengths[i])
      s.child("lengths").index(i).fail(std::to_string(o.lengths[i]) + " tokens leave no room for filler: the " +
                                       std::to_string(o.tools) + " tool schemas, instructions and question take about " +
                                       std::to_string(fixed_tokens) + "; use a longer length or fewer \"tools\"");
  }
  return o;
}

std::unique_ptr<Probe> make_toolcall_probe(const json& cfg, const ConfigSite& site) {
  return std::make_unique<ToolcallProbe>(parse_toolcall_config(cfg, site));
}

}  // namespace kvsweep::probe
