#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/twins/twins.hpp"
#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::probe {

namespace {

// Short common English words, each one token with its leading space in the llama SPM vocabulary (the
// tiny and copy models') and in GPT-2-style BPE vocabularies (SmolLM2): key and value words apart, so a
// value never reads as a key. A word's token count is not assumed: run() measures token_distance.
const std::vector<std::string> kKeyWords = {
    "apple", "river", "stone", "cloud", "table", "house", "paper", "green", "north", "water", "light", "music",
    "glass", "field", "train", "bread", "chair", "night", "plant", "smile", "horse", "sugar", "metal", "dream",
    "storm", "money", "earth", "ocean", "heart", "sound", "point", "voice", "power", "space", "world", "story",
    "party", "order", "month", "image", "state", "price", "class", "level", "model", "group", "value", "place",
    "watch", "paint", "coast", "floor", "board", "wheel", "truck", "beach", "grass", "shirt", "phone", "radio",
    "forest", "garden", "window", "summer", "winter", "silver", "market", "school", "letter", "number", "mother",
    "father", "friend", "animal", "circle", "bridge", "engine", "island", "palace", "rocket", "pocket", "basket",
    "camera", "candle", "doctor", "farmer", "hammer", "ladder", "mirror", "pepper", "rabbit", "saddle", "temple",
    "tunnel", "valley", "wallet"};
const std::vector<std::string> kValueWords = {
    "red",   "blue",  "gold",  "pink",  "gray",  "black", "white", "brown", "one",  "two",  "three", "four",
    "five",  "six",   "seven", "eight", "nine",  "ten",   "cat",   "dog",   "cow",  "pig",  "bird",  "fish",
    "bear",  "wolf",  "lion",  "duck",  "king",  "queen", "car",   "bus",   "ship", "ring", "hat",   "cup",
    "box",   "bag",   "key",   "pen",   "book",  "door",  "road",  "hill",  "lake", "tree", "rain",  "snow",
    "wind",  "fire",  "sun",   "moon",  "star",  "salt",  "milk",  "rice",  "corn", "egg",  "tea",   "wine"};

using Words = std::vector<std::string>;

std::string join(const Words& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

Words draw(stats::SplitMix64& rng, const Words& pool, int n) {
  Words out;
  for (int i = 0; i < n; ++i) out.push_back(pool[rng.below(pool.size())]);
  return out;
}

/// `base` with `distance` words at `at` replaced by fresh words, distinct per position from the family's
/// earlier replacements there (`used[k]`), so two twins differ in exactly `distance` words.
Words edited(stats::SplitMix64& rng, const Words& base, int distance, TwinsSide at, const Words& pool,
             std::vector<Words>& used) {
  Words out = base;
  const int n = static_cast<int>(base.size());
  for (int k = 0; k < distance; ++k) {
    const int pos = at == TwinsSide::end ? n - 1 - k : k;
    std::string word;
    do {
      word = pool[rng.below(pool.size())];
    } while (std::find(used[k].begin(), used[k].end(), word) != used[k].end());
    used[k].push_back(word);
    out[static_cast<std::size_t>(pos)] = word;
  }
  return out;
}

}  // namespace

namespace {

/// One table (`table` -1: the only one), appended to `set`.
void generate_table(const TwinsConfig& c, std::uint64_t seed, int table, TwinsSet& set) {
  stats::SplitMix64 rng(seed);
  // Families one after another: a base key and value, then each twin's edits.
  std::vector<std::vector<TwinsRecord>> families;
  std::vector<std::string> seen_keys;
  for (int f = 0; f < c.families; ++f) {
    std::vector<TwinsRecord> family;
    const std::size_t nd = c.distances.size();
    const int distance = c.distances[static_cast<std::size_t>(f) % nd];
    const TwinsSide at = c.sides[(static_cast<std::size_t>(f) / nd) % c.sides.size()];
    // A base key whose kept words (those no twin edits) no earlier family shares: redrawn until new.
    const int edits = c.twins > 1 ? distance : 0;
    const auto kept = [&](const Words& key) {
      return at == TwinsSide::end ? Words(key.begin(), key.end() - edits) : Words(key.begin() + edits, key.end());
    };
    Words base_key;
    do {
      base_key = draw(rng, kKeyWords, c.key_words);
    } while (std::find(seen_keys.begin(), seen_keys.end(), join(kept(base_key))) != seen_keys.end());
    seen_keys.push_back(join(kept(base_key)));
    const Words base_value = draw(rng, kValueWords, c.value_words);
    std::vector<Words> used_key(static_cast<std::size_t>(distance));
    std::vector<Words> used_value(static_cast<std::size_t>(distance));
    for (int t = 0; t < c.twins; ++t) {
      TwinsRecord r;
      r.family = f;
      r.twin = t;
      r.distance = edits;
      r.at = at;
      r.key = join(c.twins == 1 ? base_key : edited(rng, base_key, distance, at, kKeyWords, used_key));
      Words value = base_value;
      if (c.value == TwinsValue::near && c.twins > 1) {
        value = edited(rng, base_value, std::min(distance, c.value_words), at, kValueWords, used_value);
      } else if (t > 0) {
        // Distinct values: redrawn until no twin of the family has it.
        bool taken = true;
        while (taken) {
          value = draw(rng, kValueWords, c.value_words);
          taken = std::any_of(family.begin(), family.end(), [&](const TwinsRecord& o) { return o.value == join(value); });
        }
      }
      r.value = join(value);
      family.push_back(std::move(r));
    }
    families.push_back(std::move(family));
  }
  // Layout: blocks of gap + 1 families, round-robin inside a block, so twins sit `gap` records apart.
  const std::size_t first = set.records.size();
  const int block = c.gap + 1;
  for (int b = 0; b * block < c.families; ++b) {
    for (int t = 0; t < c.twins; ++t) {
      for (int f = b * block; f < std::min(c.families, (b + 1) * block); ++f) {
        set.records.push_back(families[static_cast<std::size_t>(f)][static_cast<std::size_t>(t)]);
        set.records.back().table = table;
      }
    }
  }
  // The asked twins: per family a seeded order, its first `queries`.
  const int queries = c.queries > 0 ? std::min(c.queries, c.twins) : c.twins;
  for (int f = 0; f < c.families; ++f) {
    std::vector<int> order(static_cast<std::size_t>(c.twins));
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    for (int q = 0; q < queries; ++q) {
      for (std::size_t i = first; i < set.records.size(); ++i) {
        if (set.records[i].family == f && set.records[i].twin == order[static_cast<std::size_t>(q)])
          set.asked.push_back(i);
      }
    }
  }
}

}  // namespace

TwinsSet generate_twins(const TwinsConfig& c) {
  TwinsSet set;
  if (c.tables <= 1) {
    generate_table(c, c.seed, -1, set);
  } else {
    for (int t = 0; t < c.tables; ++t) generate_table(c, c.seed + static_cast<std::uint64_t>(t), t, set);
  }
  return set;
}

std::string twins_item_key(const TwinsRecord& r) {
  return (r.table >= 0 ? "s" + std::to_string(r.table) + "." : std::string()) + "f" + std::to_string(r.family) +
         ".t" + std::to_string(r.twin);
}

std::string twins_prompt(const TwinsSet& set, const TwinsRecord& query) {
  // "Look up one key" measured best of three wordings on SmolLM2-135M (12 of 16 eight-record lookups);
  // the copy model reads only the last line.
  std::string out = "Each line below pairs a key with its value.\n";
  for (const auto& r : set.records) {
    if (r.table == query.table) out += "- " + r.key + ": " + r.value + "\n";
  }
  out += "\nLook up one key in the list above.\n";
  out += "- " + query.key + ":";
  return out;
}

std::vector<std::size_t> twins_rivals(const TwinsSet& set, std::size_t i) {
  const TwinsRecord& q = set.records[i];
  bool has_twins = false;
  for (std::size_t j = 0; j < set.records.size(); ++j)
    has_twins |= j != i && set.records[j].table == q.table && set.records[j].family == q.family;
  std::vector<std::size_t> out;
  for (std::size_t j = 0; j < set.records.size(); ++j) {
    if (j == i || set.records[j].table != q.table || (has_twins && set.records[j].family != q.family)) continue;
    if (set.records[j].value != q.value) out.push_back(j);  // an equal value cannot flip
  }
  return out;
}

std::string to_string(MarginBound bound) {
  switch (bound) {
    case MarginBound::exact: return "exact";
    case MarginBound::at_least: return "at_least";
    case MarginBound::at_most: return "at_most";
    case MarginBound::unknown: break;
  }
  return "unknown";
}

TwinsMargin margin_from_top(const std::vector<TwinsTop>& top, std::int32_t true_id, std::int32_t rival_id) {
  std::optional<double> t, r;
  double lowest = std::numeric_limits<double>::infinity();
  for (const auto& e : top) {
    lowest = std::min(lowest, e.logprob);
    if (e.id == true_id) t = e.logprob;
    if (e.id == rival_id) r = e.logprob;
  }
  if (t && r) return {*t - *r, MarginBound::exact};
  if (t) return {*t - lowest, MarginBound::at_least};
  if (r) return {lowest - *r, MarginBound::at_most};
  return {std::numeric_limits<double>::quiet_NaN(), MarginBound::unknown};
}

std::optional<std::size_t> first_divergence(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return i;
  }
  return std::nullopt;
}

std::optional<int> margin_bin(double margin, const std::vector<double>& edges) {
  if (std::isnan(margin)) return std::nullopt;
  return static_cast<int>(std::count_if(edges.begin(), edges.end(), [&](double e) { return e <= margin; }));
}

namespace {
std::string number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}
}  // namespace

std::string margin_bin_label(int bin, const std::vector<double>& edges) {
  if (edges.empty()) return "all";
  if (bin <= 0) return "< " + number(edges.front());
  if (bin >= static_cast<int>(edges.size())) return "≥ " + number(edges.back());
  return number(edges[static_cast<std::size_t>(bin - 1)]) + "–" + number(edges[static_cast<std::size_t>(bin)]);
}

namespace {
std::string first_line_trimmed(const std::string& content) {
  std::string line = content.substr(0, content.find('\n'));
  const auto b = line.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = line.find_last_not_of(" \t\r");
  return line.substr(b, e - b + 1);
}
}  // namespace

TwinsOutcome classify_answer(const std::string& content, const std::string& value,
                             const std::vector<std::string>& rival_values) {
  const std::string answer = first_line_trimmed(content);
  if (answer == value) return TwinsOutcome::correct;
  if (std::find(rival_values.begin(), rival_values.end(), answer) != rival_values.end()) return TwinsOutcome::twin;
  return TwinsOutcome::other;
}

std::size_t token_edit_distance(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace kvsweep::probe
