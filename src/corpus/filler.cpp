#include "kvsweep/corpus/filler.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::corpus {

namespace {

using stats::SplitMix64;

// Word lists written for kvsweep: the vocabulary of an ordinary backend codebase and its team.
// No entry holds a digit, so no generated word mixes digits with letters (see the header).
constexpr std::array kNouns = {
    "account", "invoice", "ledger",  "order",   "payment", "customer", "session", "token",   "report",
    "shipment", "catalog", "price",  "refund",  "batch",   "queue",    "worker",  "cache",   "index",
    "profile", "record",  "message", "channel", "export",  "import",   "tenant",  "quota",   "schedule",
    "webhook", "receipt", "warehouse", "parcel", "coupon", "audit",    "metric",  "bucket",  "snapshot",
    "manifest", "region", "cluster", "replica", "segment", "partition", "policy", "template", "config",
};
constexpr std::array kVerbs = {
    "load",    "save",    "sync",    "fetch",   "build",    "parse",    "render",  "merge",   "split",
    "validate", "resolve", "apply",  "collect", "publish",  "archive",  "refresh", "compute", "update",
    "register", "release", "reserve", "cancel", "normalize", "enqueue", "drain",   "rotate",  "prune",
};
constexpr std::array kPastVerbs = {
    "rewrote",  "reviewed", "migrated", "profiled", "patched", "documented", "split up", "rolled back",
    "benchmarked", "retired", "audited", "simplified", "moved", "instrumented",
};
constexpr std::array kAdjectives = {
    "stale", "nightly", "legacy", "shared", "pending", "partial", "duplicate", "cached", "regional",
    "archived", "primary", "fallback", "batched", "throttled", "orphaned", "sharded",
};
constexpr std::array kAreas = {"billing", "orders", "accounts", "shipping", "catalog", "reports", "auth", "search",
                               "notifications", "inventory"};
constexpr std::array kRoles = {"api", "worker", "scheduler", "gateway", "indexer", "consumer"};
constexpr std::array kPeople = {"Amara", "Bruno", "Chen", "Dalia", "Emeka", "Farah", "Goran", "Hana",
                                "Ines", "Jonas", "Keiko", "Lucia", "Mateo", "Nadia", "Omar", "Priya"};
constexpr std::array kTeams = {"platform", "payments", "data", "storefront", "infrastructure", "mobile",
                               "search", "support tooling"};
constexpr std::array kWhen = {"last sprint", "before the freeze", "over the weekend", "during the incident review",
                              "after the outage", "in the spring", "ahead of the audit", "on Monday"};
constexpr std::array kProblems = {
    "drops entries when the queue is full", "retries far too aggressively", "holds a lock across a network call",
    "silently ignores malformed input", "leaks connections under load", "double counts partial refunds",
    "times out on large tenants", "never expires old entries", "logs the same warning thousands of times",
};

template <class Array>
std::string pick(SplitMix64& rng, const Array& words) {
  return words[rng.below(words.size())];
}

std::string capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string number(SplitMix64& rng, std::uint64_t lo, std::uint64_t hi) {
  return std::to_string(lo + rng.below(hi - lo + 1));
}

// ---- code -------------------------------------------------------------------------------

std::string var_name(SplitMix64& rng) {
  return rng.below(2) == 0 ? pick(rng, kNouns) : pick(rng, kAdjectives) + "_" + pick(rng, kNouns);
}

/// One statement (possibly a small block) at four spaces of indentation.
std::string code_statement(SplitMix64& rng, const std::string& first_param) {
  const std::string v = var_name(rng);
  switch (rng.below(9)) {
    case 0:
      return "    " + v + " = " + first_param + "." + pick(rng, kVerbs) + "_" + pick(rng, kNouns) + "(" +
             var_name(rng) + ")\n";
    case 1:
      return "    if " + v + " is None:\n        return " + (rng.below(2) ? "None" : "[]") + "\n";
    case 2: {
      const std::string item = pick(rng, kNouns);
      return "    for " + item + " in " + v + ":\n        " + first_param + "." + pick(rng, kVerbs) + "(" + item +
             ")\n";
    }
    case 3:
      return "    log." + std::string(rng.below(3) == 0 ? "warning" : "debug") + "(\"" + pick(rng, kVerbs) + " " +
             pick(rng, kNouns) + " %s\", " + v + ")\n";
    case 4: {
      const std::string item = pick(rng, kNouns);
      return "    " + v + " = [" + item + " for " + item + " in " + var_name(rng) + " if " + item + "." +
             pick(rng, kAdjectives) + "]\n";
    }
    case 5:
      return "    " + v + " = " + number(rng, 2, 500) + "\n";
    case 6:
      return "    if not " + v + ":\n        raise " + capitalized(pick(rng, kNouns)) + "Error(\"" +
             pick(rng, kAdjectives) + " " + pick(rng, kNouns) + "\")\n";
    case 7:
      return "    " + v + " = " + first_param + ".get(\"" + pick(rng, kNouns) + "_" + pick(rng, kNouns) + "\", " +
             number(rng, 0, 64) + ")\n";
    default:
      return "    " + v + ".update(" + pick(rng, kNouns) + "=" + var_name(rng) + ")\n";
  }
}

std::string code_unit(SplitMix64& rng) {
  std::string out;
  if (rng.below(3) == 0)
    out += "# file: src/" + pick(rng, kAreas) + "/" + pick(rng, kNouns) + "_" + pick(rng, kNouns) + ".py\n\n";
  const std::string verb = pick(rng, kVerbs);
  const std::string noun = pick(rng, kNouns);
  const std::string noun2 = pick(rng, kNouns);
  const std::string first = pick(rng, kNouns);
  std::string params = first;
  if (rng.below(2)) params += ", " + pick(rng, kAdjectives) + "_" + pick(rng, kNouns);
  if (rng.below(2)) params += ", retries=" + number(rng, 1, 9);
  out += "def " + verb + "_" + noun + "_" + noun2 + "(" + params + "):\n";
  out += "    \"\"\"" + capitalized(verb) + " the " + noun + " " + noun2 + " of one " + first + ".\"\"\"\n";
  const auto lines = 3 + rng.below(6);
  std::string last = first;
  for (std::uint64_t i = 0; i < lines; ++i) out += code_statement(rng, first);
  out += "    return " + last + "\n\n";
  return out;
}

std::string code_note(std::string_view note) {
  // One comment line, never wrapped: a wrap could split a quoted value in two.
  return "# " + std::string(note) + "\n\n";
}

// ---- prose ------------------------------------------------------------------------------

std::string sentence(SplitMix64& rng) {
  const std::string a = pick(rng, kNouns), b = pick(rng, kNouns);
  switch (rng.below(7)) {
    case 0:
      return "The " + pick(rng, kTeams) + " team " + pick(rng, kPastVerbs) + " the " + a + " " + b + " service " +
             pick(rng, kWhen) + ".";
    case 1:
      return pick(rng, kPeople) + " pointed out that the " + a + " " + b + " job " + pick(rng, kProblems) + ".";
    case 2:
      return "After the review we agreed to " + pick(rng, kVerbs) + " the " + pick(rng, kAdjectives) + " " + a +
             " records before the next release.";
    case 3:
      return "Nobody has touched the " + a + " module since " + pick(rng, kWhen) + ", which is why " +
             pick(rng, kPeople) + " wants a second pair of eyes on it.";
    case 4:
      return "It turned out that the " + pick(rng, kAdjectives) + " " + a + " table was the real bottleneck, not the " +
             b + " cache.";
    case 5:
      return pick(rng, kPeople) + " will " + pick(rng, kVerbs) + " the " + a + " " + b + " data and report back in " +
             number(rng, 2, 9) + " days.";
    default:
      return "The " + a + " dashboard shows " + number(rng, 3, 97) + " percent of " + b + " requests waiting on the " +
             pick(rng, kAdjectives) + " path.";
  }
}

std::string prose_unit(SplitMix64& rng) {
  std::string out;
  const auto n = 3 + rng.below(4);
  for (std::uint64_t i = 0; i < n; ++i) out += (i ? " " : "") + sentence(rng);
  return out + "\n\n";
}

// ---- logs -------------------------------------------------------------------------------

/// A wall clock for log lines: milliseconds since midnight, advancing per line.
struct LogClock {
  std::uint64_t day = 1;
  std::uint64_t ms = 0;
  std::string stamp() const {
    auto two = [](std::uint64_t v) { return (v < 10 ? "0" : "") + std::to_string(v); };
    const std::uint64_t s = ms / 1000;
    std::string frac = std::to_string(ms % 1000);
    frac.insert(0, 3 - frac.size(), '0');
    return "2026-03-" + two(day) + " " + two(s / 3600 % 24) + ":" + two(s / 60 % 60) + ":" + two(s % 60) + "." + frac;
  }
};

std::string service_name(SplitMix64& rng) { return pick(rng, kAreas) + "-" + pick(rng, kRoles); }

std::string log_unit(SplitMix64& rng, LogClock& clock) {
  clock.ms += 1 + rng.below(900);
  static constexpr std::array kLevels = {"INFO ", "INFO ", "INFO ", "DEBUG", "DEBUG", "WARN ", "ERROR"};
  std::string line = clock.stamp() + " " + pick(rng, kLevels) + " " + service_name(rng) + "[" +
                     number(rng, 100, 32000) + "] ";
  const std::string a = pick(rng, kNouns), b = pick(rng, kNouns);
  switch (rng.below(9)) {
    case 0:
      return line + "GET /api/" + a + "s/" + number(rng, 1000, 999999) + " status=200 took " + number(rng, 1, 900) +
             " ms\n";
    case 1:
      return line + "POST /api/" + a + "s status=201 took " + number(rng, 3, 1500) + " ms\n";
    case 2:
      return line + "retrying " + a + " sync attempt=" + number(rng, 1, 7) + " backoff=" + number(rng, 50, 8000) +
             " ms\n";
    case 3:
      return line + "cache miss key=" + a + ":" + number(rng, 1, 999999) + "\n";
    case 4:
      return line + "heartbeat ok queue_depth=" + number(rng, 0, 400) + "\n";
    case 5:
      return line + "slow query on table " + a + "_" + b + " took " + number(rng, 200, 9000) + " ms\n";
    case 6:
      return line + "flushed " + number(rng, 1, 5000) + " " + a + " records to the " + b + " store\n";
    case 7:
      return line + "connection to " + service_name(rng) + " reset by peer; reconnecting\n";
    default:
      return line + "config reloaded from /etc/" + pick(rng, kAreas) + "/" + a + "_" + b + ".yaml\n";
  }
}

}  // namespace

std::string_view to_string(FillerKind kind) {
  switch (kind) {
    case FillerKind::code: return "code";
    case FillerKind::prose: return "prose";
    case FillerKind::logs: return "logs";
  }
  return "code";
}

std::optional<FillerKind> parse_filler_kind(std::string_view name) {
  for (FillerKind k : {FillerKind::code, FillerKind::prose, FillerKind::logs})
    if (to_string(k) == name) return k;
  return std::nullopt;
}

std::vector<std::string> filler_kind_names() { return {"code", "prose", "logs"}; }

Filler make_filler(const FillerOptions& options, std::string_view note, double depth) {
  SplitMix64 rng(options.seed);
  LogClock clock;
  clock.day = 1 + rng.below(28);
  clock.ms = rng.below(20 * 3600 * 1000ULL);

  std::uint64_t last_stamp = clock.ms;  // a log note shares the time of the line before it
  auto note_unit = [&]() -> std::string {
    switch (options.kind) {
      case FillerKind::code: return code_note(note);
      case FillerKind::prose: return std::string(note) + "\n\n";
      case FillerKind::logs: return LogClock{clock.day, last_stamp}.stamp() + " WARN  ops-notes[1] " + std::string(note) + "\n";
    }
    return std::string(note);
  };
  auto next_unit = [&]() -> std::string {
    switch (options.kind) {
      case FillerKind::code: return code_unit(rng);
      case FillerKind::prose: return prose_unit(rng);
      case FillerKind::logs: return log_unit(rng, clock);
    }
    return {};
  };

  Filler out;
  const bool has_note = !note.empty();
  // The note's size, reserved up front so the whole filler stays within `chars` (a log note
  // gains a timestamp and a prefix of fixed width, a code note "# ").
  const std::size_t reserve = has_note ? note.size() + 48 : 0;
  const double at = std::clamp(depth, 0.0, 1.0) * static_cast<double>(options.chars);
  constexpr int kMaxMisses = 16;
  int misses = 0;
  for (;;) {
    const std::uint64_t before = clock.ms;
    std::string unit = next_unit();
    // The note goes to the unit boundary nearest its depth: before the first unit whose middle is past it.
    if (has_note && out.note_offset == std::string::npos &&
        static_cast<double>(out.text.size()) + static_cast<double>(unit.size()) / 2.0 >= at) {
      last_stamp = before;
      out.note_offset = out.text.size();
      out.text += note_unit();
    }
    const std::size_t pending = has_note && out.note_offset == std::string::npos ? reserve : 0;
    if (out.text.size() + unit.size() + pending > options.chars) {
      // Units vary in size: a few more draws may find one that still fits, so the filler ends
      // within about one small unit of `chars` rather than one large one.
      if (++misses >= kMaxMisses) break;
      continue;
    }
    misses = 0;
    out.text += unit;
    ++out.units;
    last_stamp = clock.ms;
  }
  if (has_note && out.note_offset == std::string::npos) {
    out.note_offset = out.text.size();
    out.text += note_unit();
  }
  return out;
}

}  // namespace kvsweep::corpus
