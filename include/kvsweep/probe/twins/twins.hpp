#pragma once
/// The `twins` probe: key → value lookups among near-twin keys, with the margin as a dial (how many
/// twins, how far apart their keys are, where they differ, whether their values differ too) and the
/// margin measured: on the reference cell, the log-probability gap between the true answer's token and
/// the best twin's at the first answer token where the two continuations diverge. Items are binned by
/// that measured margin, so a flip rate can be read per bin (issue 54).
///
/// Config: {"kind": "twins", "name": "twins", "seed": 42, "families": 16, "twins": 4, "key_words": 6,
/// "value_words": 3, "distance": 1 | [1, 2, …], "at": "end" | "start" | "both", "value": "distinct" | "near", "gap": 0,
/// "queries": twins, "tables": 1, "top_n": 20, "bins": [1, 4, 10]}.
/// - families × twins records "- <key>: <value>", one a line, then the question, then "- <key>:";
///   the answer is " <value>". `twins` 1 makes every key unique (the control: its rivals are all the
///   other records).
/// - A family's keys share all but `distance` words (1–4), replaced at the key's `at` side, each twin
///   its own words there; `value` "distinct" gives each twin its own value words, "near" the family's
///   base value with `distance` words replaced at the same side. `distance` may be a list and `at`
///   "both": family f takes distance[f mod n] and, with "both", the end when (f / n) is even, else the
///   start — one table then spans the dial, and the measured margins spread over the bins.
/// - `gap`: records between two twins of a family (families are laid out in blocks of gap + 1,
///   round-robin), so `families` must be a multiple of gap + 1.
/// - `queries`: how many twins of each family are asked (the first ones, in seeded order).
/// - `bins`: ascending margin edges in nats; bin 0 is margin < bins[0] (the low-margin bin).
/// - `tables`: independent tables of that shape (table t drawn from seed + t), each item asked in its
///   own table's prompt: more items for a model whose context or recall holds only a short table.
/// Items are "f<family>.t<twin>" ("s<table>.f<family>.t<twin>" with tables > 1); the same config gives
/// byte-identical records and prompts.
///
/// Metrics: `recalled` (the answer's first line is the value), `took_twin` (it is a rival's value),
/// `recalled_low` (`recalled` in the lowest bin, null elsewhere: the gateable low-margin read-out),
/// `margin` (the reference's measured margin, nats) and `cell_margin` (this cell's gap at the same
/// token), `token_distance` (token edits between the key and its best rival's, the server's tokens).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

enum class TwinsSide { start, end };
enum class TwinsValue { distinct, near };

struct TwinsConfig {
  std::string name = "twins";
  std::uint64_t seed = 42;
  int families = 16;
  int twins = 4;
  int key_words = 6;
  int value_words = 3;
  std::vector<int> distances = {1};          // "distance": one number, or a list the families cycle through
  std::vector<TwinsSide> sides = {TwinsSide::end};  // "at": "end", "start" or "both" (families alternate)
  TwinsValue value = TwinsValue::distinct;
  int gap = 0;
  int queries = 0;  // 0: every twin
  int tables = 1;   // independent tables (table t drawn from seed + t), each its own prompt
  int top_n = 20;
  std::vector<double> bins = {1.0, 4.0, 10.0};
};

/// Reads and validates a `{"kind": "twins", …}` object; throws core::FatalError
/// "<file>: <path>.<key>: what is wrong (did you mean …?)".
TwinsConfig parse_twins_config(const nlohmann::json& config, const ConfigSource& site);

/// One record of the lookup table.
struct TwinsRecord {
  int family = 0;
  int twin = 0;
  int table = -1;    // which table (-1: the only one)
  int distance = 0;  // words its key differs from its twins' by (0: no twins)
  TwinsSide at = TwinsSide::end;
  std::string key;    // words joined by spaces
  std::string value;  // words joined by spaces
};

/// The generated table: records in prompt order, and the items asked (indices into records).
struct TwinsSet {
  std::vector<TwinsRecord> records;
  std::vector<std::size_t> asked;
};

/// The table a config makes; the same config always gives the same set (stats::SplitMix64 draws).
TwinsSet generate_twins(const TwinsConfig& config);

/// "f<family>.t<twin>", prefixed "s<table>." when the config has several tables.
std::string twins_item_key(const TwinsRecord& record);

/// The prompt for `query`: a line of instructions, every record of its table "- key: value", a blank
/// line, the question and "- <key>:". The text before the last line is the same for every item of a
/// table (prefix cache).
std::string twins_prompt(const TwinsSet& set, const TwinsRecord& query);

/// The rivals of records[i]: its family's other twins, or every other record of its table when it has none.
std::vector<std::size_t> twins_rivals(const TwinsSet& set, std::size_t i);

// What run() measures, pure so the unit tests read it off literal tables.

/// One entry of a top-N list: a token id and its log-probability.
struct TwinsTop {
  std::int32_t id = -1;
  double logprob = 0;
};

/// How a margin was read from a top-N list: both tokens listed (exact); the rival beyond the list (the
/// gap is at least the value); the true token beyond it (at most); neither listed (unknown, NaN).
enum class MarginBound { exact, at_least, at_most, unknown };
std::string to_string(MarginBound bound);

struct TwinsMargin {
  double value = 0;  // logprob(true) − logprob(rival), nats; NaN when unknown
  MarginBound bound = MarginBound::exact;
};

/// The gap between `true_id` and `rival_id` in `top`; a token not listed counts at the list's lowest
/// log-probability (a bound, said by `bound`).
TwinsMargin margin_from_top(const std::vector<TwinsTop>& top, std::int32_t true_id, std::int32_t rival_id);

/// The first index where `a` and `b` differ; nullopt when one is a prefix of the other.
std::optional<std::size_t> first_divergence(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b);

/// The margin's bin: how many of the ascending `edges` are ≤ margin; nullopt for NaN.
std::optional<int> margin_bin(double margin, const std::vector<double>& edges);
/// "< 1", "1–4", "≥ 10".
std::string margin_bin_label(int bin, const std::vector<double>& edges);

/// What an answer took: the true value, a rival's, or neither.
enum class TwinsOutcome { correct, twin, other };
/// The answer's first line, trimmed, against the value and the rivals' values.
TwinsOutcome classify_answer(const std::string& content, const std::string& value,
                             const std::vector<std::string>& rival_values);

/// Token edits (Levenshtein over ids) between two token lists.
std::size_t token_edit_distance(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b);

std::unique_ptr<Probe> make_twins_probe(const nlohmann::json& config, const ConfigSource& site);

}  // namespace kvsweep::probe
