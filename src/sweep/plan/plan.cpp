#include "kvsweep/sweep/plan/plan.hpp"

#include <algorithm>

#include "kvsweep/core/error.hpp"
#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::sweep {

std::optional<Shard> parse_shard(const std::string& text) {
  auto slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  try {
    std::size_t a = 0, b = 0;
    int i = std::stoi(text.substr(0, slash), &a);
    int n = std::stoi(text.substr(slash + 1), &b);
    if (a != slash || b != text.size() - slash - 1 || n < 1 || i < 0 || i >= n) return std::nullopt;
    return Shard{i, n};
  } catch (...) {
    return std::nullopt;
  }
}

namespace {

constexpr const char* kFilterKeys[] = {"model", "variant", "k", "v", "cell", "probe"};

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(by, start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

Filter::Term parse_term(const std::string& term) {
  const auto eq = term.find('=');
  const std::string key = eq == std::string::npos ? "" : term.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : term.substr(eq + 1);
  std::vector<std::string> values = split(value, '|');
  const bool empty_value = std::ranges::any_of(values, [](const std::string& v) { return v.empty(); });
  if (std::ranges::find(kFilterKeys, key) == std::end(kFilterKeys) || empty_value)
    throw core::FatalError("--only: '" + term + "': expected key=value with key one of model, variant, k, v, cell, probe"
                           " and values separated by | (e.g. --only cell=q8_0/f16,probe=recall, --only k=q4_0|q8_0"
                           " or --only variant=rot-off)");
  return {key, std::move(values)};
}

bool term_holds(const Filter::Term& t, const std::string& value) { return std::ranges::find(t.values, value) != t.values.end(); }

/// Whether the clause's cell terms hold for `c`; `keys_of_reference`: only model and variant count.
bool clause_matches_cell(const Filter::Clause& clause, const Cell& c, bool keys_of_reference) {
  for (const auto& t : clause) {
    if (t.key == "model" && !term_holds(t, c.model)) return false;
    if (t.key == "variant" && !term_holds(t, c.variant)) return false;
    if (keys_of_reference) continue;
    if (t.key == "k" && !term_holds(t, c.type_k)) return false;
    if (t.key == "v" && !term_holds(t, c.type_v)) return false;
    if (t.key == "cell" && !term_holds(t, c.types())) return false;
  }
  return true;
}

bool clause_matches_probe(const Filter::Clause& clause, const std::string& probe) {
  return std::ranges::all_of(clause, [&](const Filter::Term& t) { return t.key != "probe" || term_holds(t, probe); });
}

}  // namespace

std::string clause_text(const Filter::Clause& clause) {
  std::string out;
  for (const auto& t : clause) {
    out += (out.empty() ? "" : ",") + t.key + "=";
    for (std::size_t i = 0; i < t.values.size(); ++i) out += (i ? "|" : "") + t.values[i];
  }
  return out;
}

Filter parse_filter(const std::vector<std::string>& clauses) {
  Filter f;
  for (const auto& text : clauses) {
    Filter::Clause clause;
    for (const auto& term : split(text, ','))
      if (!term.empty()) clause.push_back(parse_term(term));
    if (!clause.empty()) f.clauses.push_back(std::move(clause));
  }
  return f;
}

bool Filter::matches_cell(const Cell& c) const {
  return clauses.empty() ||
         std::ranges::any_of(clauses, [&](const Clause& clause) { return clause_matches_cell(clause, c, false); });
}

bool Filter::matches_probe(const std::string& probe) const {
  return clauses.empty() ||
         std::ranges::any_of(clauses, [&](const Clause& clause) { return clause_matches_probe(clause, probe); });
}

bool Filter::matches(const Cell& c, const std::string& probe) const {
  return clauses.empty() || std::ranges::any_of(clauses, [&](const Clause& clause) {
           return clause_matches_probe(clause, probe) && clause_matches_cell(clause, c, c.is_reference);
         });
}

void select_cells(std::vector<Cell>& cells, const Filter& filter) {
  std::vector<std::string> groups;  // (model, variant) of the matched cells
  for (const auto& c : cells)
    if (filter.matches_cell(c)) groups.push_back(c.group());
  std::erase_if(cells, [&](const Cell& c) {
    return !filter.matches_cell(c) && !(c.is_reference && std::ranges::find(groups, c.group()) != groups.end());
  });
}

std::vector<Cell> grid_cells(const config::Config& c) {
  std::vector<Cell> cells;
  // No variants: one unnamed variant, so the grid and its cells are as they always were.
  std::vector<std::string> variants;
  for (const auto& v : c.variants) variants.push_back(v.name);
  if (variants.empty()) variants.emplace_back();
  for (const auto& m : c.models) {
    for (const auto& variant : variants) {
      auto add = [&](const core::KvPair& pair) {
        const core::CellKey key{m.name, variant, pair.type_k, pair.type_v};
        for (const auto& e : cells)
          if (e.key() == key) return;
        cells.push_back(Cell{key, m.path, pair == c.grid.reference, false});
      };
      for (const auto& k : c.grid.k) {
        for (const auto& v : c.grid.v) {
          if (c.grid.tied && k != v) continue;
          if (c.grid.excludes({k, v})) continue;
          add({k, v});
        }
      }
      for (const auto& inc : c.grid.include) add(inc);
      // The reference cell always exists: every other cell is compared with it.
      add(c.grid.reference);
    }
  }
  return cells;
}

void seeded_shuffle(std::vector<Cell>& cells, std::uint64_t seed) {
  // next() % i, not below(i): the modulo's bias is part of the order every earlier run was planned in.
  stats::SplitMix64 rng(seed);
  for (std::size_t i = cells.size(); i > 1; --i) {
    std::size_t j = static_cast<std::size_t>(rng.next() % i);
    std::swap(cells[i - 1], cells[j]);
  }
}

std::vector<Cell> plan_cells(const config::Config& c, const std::optional<Shard>& shard, ReferenceSupport support) {
  std::vector<Cell> all = grid_cells(c);
  std::vector<Cell> cells;
  // Shards partition the cells: every N-th of the canonical order. A shard that does not own a
  // reference cell runs it as a support cell when probes compare with it, so that its cells are
  // compared with a reference measured on the same machine; merge keeps only the owner's records
  // of it (support copies may differ: another node, another GPU).
  for (std::size_t i = 0; i < all.size(); ++i) {
    Cell cell = all[i];
    const bool owned = !shard || static_cast<int>(i % static_cast<std::size_t>(shard->count)) == shard->index;
    if (!owned) {
      if (!cell.is_reference || support == ReferenceSupport::skip) continue;
      cell.support = true;
    }
    cells.push_back(std::move(cell));
  }
  if (c.grid.order == config::Order::shuffle) seeded_shuffle(cells, c.grid.seed);
  // Reference cells first: probes that compare against the reference need its records.
  std::stable_partition(cells.begin(), cells.end(), [](const Cell& x) { return x.is_reference; });
  return cells;
}

}  // namespace kvsweep::sweep
