#pragma once
/// The grid a run's config planned, as a report reads it back from the manifest: which cells it holds,
/// the order of its groups and of its K and V axes, and its reference cells (RunData::load's phases).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::report {

/// Whether `key` is a cell of the grid the manifest's config planned: its model, variant and K/V
/// pair (the K and V lists, tied or not, minus exclude, plus include and the reference). What the
/// config does not say (an older manifest) does not refuse.
bool in_config_grid(const sweep::Manifest& m, const nlohmann::json& config, const core::CellKey& key);

/// Models in the manifest's order, then any only the cells name; variants in the config's order, then
/// any only the cells name; groups by model, then variant.
void order_groups(const sweep::Manifest& m, const nlohmann::json& config, const std::vector<CellDef>& cells,
                  std::vector<std::string>& models, std::vector<std::string>& variants,
                  std::vector<std::string>& groups);

/// The config's grid lists ("v" may be "same-as-k"), then the cells' other types by bits per value.
void order_axes(const nlohmann::json& grid, const std::vector<CellDef>& cells, std::vector<std::string>& k_types,
                std::vector<std::string>& v_types);

/// The reference cells: flagged in the manifest, else (an older run) the config's "K/V" for every model.
void infer_reference(const nlohmann::json& grid, std::vector<CellDef>& cells);

}  // namespace kvsweep::report
