#pragma once
/// The planner: turns a config's grid into the ordered list of cells, with sharding and
/// filtering; the reference cell of each model runs first.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"

namespace kvsweep::sweep {

struct Cell {
  std::string model;
  std::string model_path;
  std::string variant;  // the config's variant name; empty when the config has no variants
  std::string type_k;
  std::string type_v;
  bool is_reference = false;
  /// A reference cell run by a shard that does not own it, only so that this shard's cells can
  /// be compared with it; merge keeps the owning shard's records of it.
  bool support = false;

  /// "model/k/v" (or "model/variant/k/v"), the human label.
  std::string label() const;
  /// A file-name-safe id, e.g. "tiny-q8_0-f16" (or "tiny-rot-off-q8_0-f16").
  std::string id() const;
  /// {"model":…, ["variant":…,] "type_k":…, "type_v":…} as it appears in records; "variant" only
  /// when the config has variants, so runs without them keep their records and keys.
  nlohmann::json to_json() const;
  /// The cells compared with one reference cell: the model and the variant ("model" or "model/variant").
  std::string reference_group() const { return variant.empty() ? model : model + "/" + variant; }
};

struct Shard {
  int index = 0;  // 0-based
  int count = 1;
};
/// Parses "I/N" (0 <= I < N); nullopt when malformed.
std::optional<Shard> parse_shard(const std::string& text);

/// `--only` filter: comma-separated `key=value` terms (keys: model, variant, k, v, cell, probe),
/// all of which must match, e.g. `cell=q8_0/f16,probe=recall`.
struct Filter {
  std::vector<std::pair<std::string, std::string>> terms;
  bool matches_cell(const Cell& cell) const;
  bool matches_probe(const std::string& probe) const;
};
/// Throws core::FatalError on a malformed filter.
Filter parse_filter(const std::string& text);

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
