#pragma once
/// The planner: turns a config's grid into the ordered list of cells, with sharding and
/// filtering; the reference cell of each model runs first.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/core/cell_key.hpp"

namespace kvsweep::sweep {

/// A cell of the plan: its key (model, variant, K, V: id, label, group, JSON) and how it runs.
struct Cell : core::CellKey {
  std::string model_path;
  bool is_reference = false;
  /// A reference cell run by a shard that does not own it, only so that this shard's cells can
  /// be compared with it; merge keeps the owning shard's records of it.
  bool support = false;
};

struct Shard {
  int index = 0;  // 0-based
  int count = 1;
};
/// Parses "I/N" (0 <= I < N); nullopt when malformed.
std::optional<Shard> parse_shard(const std::string& text);

/// `--only` filter. Each `--only` is one clause: comma-separated `key=value` terms (keys: model,
/// variant, k, v, cell, probe), all of which must match, e.g. `cell=q8_0/f16,probe=recall`; a value may
/// list alternatives, `k=q4_0|q8_0`. A cell or probe is selected when any clause matches it (`--only
/// k=q4_0 --only k=q8_0`). The filter selects the cells compared: the reference cell of each selected
/// cell's model and variant runs too (select_cells).
struct Filter {
  struct Term {
    std::string key;
    std::vector<std::string> values;  // any of them matches
  };
  using Clause = std::vector<Term>;
  std::vector<Clause> clauses;  // none: everything is selected
  /// Some clause's model, variant, k, v and cell terms all match the cell.
  bool matches_cell(const Cell& cell) const;
  /// Some clause's probe terms match the probe.
  bool matches_probe(const std::string& probe) const;
  /// Some clause matches both the cell and the probe. A reference cell matches a clause on its model
  /// and variant terms alone: it runs for the cells the clause selects (which probes to compare them on).
  bool matches(const Cell& cell, const std::string& probe) const;
};
/// One clause as typed: "k=q4_0|q8_0,probe=recall".
std::string clause_text(const Filter::Clause& clause);
/// Parses each `--only` into a clause. Throws core::FatalError on a malformed one.
Filter parse_filter(const std::vector<std::string>& clauses);
/// Keeps the cells the filter matches and the reference cell of each (model, variant) with such a
/// cell (a reference kept only for them is not itself matched), in their order.
void select_cells(std::vector<Cell>& cells, const Filter& filter);

/// All cells of the grid in canonical order (model, then variant, then K list order, then V list order).
std::vector<Cell> grid_cells(const config::Config& config);
/// Whether a shard runs the reference cells it does not own.
enum class ReferenceSupport { skip, run };

/// The cells to run: the shard's share of the grid (cell i of the canonical order belongs to
/// shard i mod N, so every cell is in exactly one shard), plus, with ReferenceSupport::run, the
/// reference cells owned by other shards marked `support` (probes that compare with the
/// reference need its records in every shard); ordered (shuffled by seed or as listed) with
/// the reference cell of each model (and variant) first.
std::vector<Cell> plan_cells(const config::Config& config, const std::optional<Shard>& shard,
                             ReferenceSupport support = ReferenceSupport::run);

/// A portable deterministic shuffle (splitmix64 + Fisher–Yates), same on every platform.
void seeded_shuffle(std::vector<Cell>& cells, std::uint64_t seed);

}  // namespace kvsweep::sweep
