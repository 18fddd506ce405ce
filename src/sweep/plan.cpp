#include "kvsweep/sweep/plan.hpp"

#include <algorithm>

#include "kvsweep/core/error.hpp"

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

Filter parse_filter(const std::string& text) {
  Filter f;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string term = text.substr(start, end - start);
    if (!term.empty()) {
      auto eq = term.find('=');
      std::string key = eq == std::string::npos ? "" : term.substr(0, eq);
      if (key != "model" && key != "variant" && key != "k" && key != "v" && key != "cell" && key != "probe")
        throw core::FatalError("--only: '" + term + "': expected key=value with key one of model, variant, k, v, cell, probe"
                               " (e.g. --only cell=q8_0/f16,probe=recall or --only variant=rot-off)");
      f.terms.emplace_back(key, term.substr(eq + 1));
    }
    start = end + 1;
  }
  return f;
}

bool Filter::matches_cell(const Cell& c) const {
  for (const auto& [key, value] : terms) {
    if (key == "model" && c.model != value) return false;
    if (key == "variant" && c.variant != value) return false;
    if (key == "k" && c.type_k != value) return false;
    if (key == "v" && c.type_v != value) return false;
    if (key == "cell" && c.types() != value) return false;
  }
  return true;
}

bool Filter::matches_probe(const std::string& probe) const {
  for (const auto& [key, value] : terms)
    if (key == "probe" && probe != value) return false;
  return true;
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
  std::uint64_t state = seed;
  auto next = [&state] {
    // splitmix64 (Steele, Lea, Flood 2014)
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  for (std::size_t i = cells.size(); i > 1; --i) {
    std::size_t j = static_cast<std::size_t>(next() % i);
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
