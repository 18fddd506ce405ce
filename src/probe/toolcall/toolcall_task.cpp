/// make_toolcall_task: one seed's tools, target call, argument values and the note that carries them.

#include "kvsweep/probe/toolcall/toolcall.hpp"

#include <algorithm>

#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::probe {

namespace {

using nlohmann::json;
using stats::SplitMix64;

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

/// The call a task expects, with the note that asks for it and the question that points at the note.
void expect_call(ToolcallTask& task, const char* tool, nlohmann::json arguments, const std::string& note,
                 const std::string& question) {
  task.expected_tool = tool;
  task.expected_arguments = std::move(arguments);
  task.note = task.note_id + ": " + note;
  task.question = "Follow note " + task.note_id + ": " + question;
}

/// Fills the target, its arguments, the note and the question of `task` from one of six templates.
void make_call(SplitMix64& rng, ToolcallTask& task) {
  const std::string hex = hex_word(rng);
  std::string hex2 = hex_word(rng);
  while (hex2 == hex) hex2 = hex_word(rng);
  switch (rng.below(6)) {
    case 0: {
      const std::string path = "services/" + pick(rng, kAreas) + "-" + hex + "/" + pick(rng, kNouns);
      const std::string pattern = pick(rng, kNouns) + "_" + pick(rng, kNouns) + "_flag_" + hex2;
      return expect_call(task, "search_files", {{"path", path}, {"pattern", pattern}},
                         "the deprecated flag is still referenced somewhere below the directory " + path +
                             "; every file there that contains the text \"" + pattern + "\" has to be found.",
                         "find every file below the directory it names that contains the text it quotes.");
    }
    case 1: {
      const std::string file = "services/" + pick(rng, kAreas) + "-" + hex + "/" + pick(rng, kNouns) + "_" +
                               pick(rng, kNouns) + ".py";
      const std::string query = "could not " + pick(rng, kVerbs) + " " + pick(rng, kNouns) + " " + hex2;
      return expect_call(task, "search_file", {{"file_path", file}, {"query", query}},
                         "the broken assertion lives in the single file " + file + "; its failure message contains \"" +
                             query + "\".",
                         "search inside the one file it names for the message it quotes.");
    }
    case 2: {
      const std::string root = "/srv/checkouts/" + pick(rng, kAreas) + "-" + hex;
      const std::string regex = pick(rng, kNouns) + "_[0-9]+_" + hex2;
      return expect_call(task, "grep_repo", {{"root", root}, {"regex", regex}},
                         "before the release, the whole repository checked out at " + root +
                             " must be scanned with the regular expression \"" + regex + "\".",
                         "scan the whole repository it names with the regular expression it gives.");
    }
    case 3: {
      const std::string file = "lib/" + pick(rng, kAreas) + "/" + pick(rng, kNouns) + "_" + hex + ".py";
      const int start = 10 + static_cast<int>(rng.below(890));
      const int end = start + 5 + static_cast<int>(rng.below(56));
      return expect_call(task, "read_file", {{"file_path", file}, {"start_line", start}, {"end_line", end}},
                         "the suspicious code is lines " + std::to_string(start) + " to " + std::to_string(end) +
                             " of " + file + ".",
                         "read exactly the lines it points to.");
    }
    case 4: {
      static const char* const kLevels[] = {"debug", "info", "warn", "error"};
      const std::string service = pick(rng, kAreas) + "-" + pick(rng, kRoles) + "-" + hex;
      const std::string level = pick(rng, kLevels);
      const std::string since = "2026-04-" + two_digits(1 + rng.below(28)) + "T" + two_digits(rng.below(24)) + ":" +
                                two_digits(rng.below(60)) + ":00Z";
      return expect_call(task, "get_log_entries", {{"service", service}, {"level", level}, {"since", since}},
                         "the service " + service + " started misbehaving at " + since + "; only its " + level +
                             "-level entries matter.",
                         "fetch the log entries it asks for.");
    }
    default: {
      const std::string dir = "data/" + pick(rng, kAreas) + "-" + hex + "/" + pick(rng, kNouns) + "s";
      const bool recursive = rng.below(2) == 0;
      return expect_call(task, "list_directory", {{"dir_path", dir}, {"recursive", recursive}},
                         std::string("we need ") +
                             (recursive ? "a full recursive listing" : "a top-level listing only (not recursive)") +
                             " of the directory " + dir + ".",
                         "list the directory it names, the way it asks.");
    }
  }
}

}  // namespace

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

}  // namespace kvsweep::probe
