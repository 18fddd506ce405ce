#include "kvsweep/cli/run_checks.hpp"

#include <filesystem>
#include <map>
#include <set>

#include "kvsweep/core/error.hpp"
#include "kvsweep/sweep/input_hashes.hpp"
#include "kvsweep/sweep/plan.hpp"
#include "kvsweep/sweep/run_store.hpp"

namespace kvsweep::cli {

std::optional<nlohmann::json> manifest_to_resume(const std::string& run_dir, bool have_config) {
  auto manifest = sweep::RunStore::read_manifest(run_dir);
  if (manifest) return std::move(*manifest);
  if (have_config) return std::nullopt;
  std::error_code ec;
  if (!std::filesystem::is_directory(run_dir, ec))
    throw core::FatalError("--resume " + run_dir + ": no such run directory; start a run with: kvsweep run CONFIG -o " +
                           run_dir);
  if (!std::filesystem::exists(std::filesystem::path(run_dir) / "manifest.json", ec))
    throw core::FatalError("--resume " + run_dir + ": the run has no manifest.json (it stopped before writing one, so "
                           "nothing of it can be read back); start it again with: kvsweep run CONFIG --resume " + run_dir);
  throw core::FatalError("--resume " + run_dir + ": " + manifest.error().message +
                         "; pass the config to resume it anyway: kvsweep run CONFIG --resume " + run_dir);
}

std::vector<sweep::ModelHash> checked_models(const config::Config& config, const std::optional<nlohmann::json>& previous,
                                             const std::string& run_dir) {
  auto models = sweep::hash_models(config);
  if (!models) throw core::FatalError(config.file.string() + ": models: " + models.error().message);
  if (previous) {
    if (const std::string changed = sweep::changed_models(*previous, *models); !changed.empty())
      throw core::FatalError("--resume " + run_dir + ": " + changed +
                             "\na changed model is a new run: start one with -o NEW_DIR (or restore the model file)");
  }
  return std::move(*models);
}

void check_inputs(const std::vector<std::unique_ptr<probe::Probe>>& probes, const std::optional<nlohmann::json>& previous,
                  const std::string& run_dir) {
  if (!previous || !previous->is_object() || !previous->contains("probes")) return;
  nlohmann::json now = nlohmann::json::array();
  for (const auto& p : probes) now.push_back(probe::manifest_entry(*p));
  const auto changes = sweep::changed_inputs((*previous)["probes"], now);
  if (changes.empty()) return;
  throw core::FatalError("--resume " + run_dir + ": an input file changed since the run started:\n" +
                         sweep::describe_input_changes(changes, "when the run started", "now") +
                         "\nthe items would be scored against answers to the old inputs: start a new run with "
                         "-o NEW_DIR (or restore the file)");
}

void check_records_fit(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes,
                       const std::string& run_dir) {
  auto records = sweep::RunStore::read_records(run_dir);
  if (!records) throw core::FatalError("--resume " + run_dir + ": " + records.error().message);
  std::set<core::CellKey> cells;
  for (const auto& c : sweep::grid_cells(config)) cells.insert(static_cast<const core::CellKey&>(c));
  std::map<std::string, std::map<std::string, nlohmann::json>> items;  // probe -> item key -> its spec
  for (const auto& p : probes)
    for (const auto& item : p->items()) items[p->name()][item.key] = item.spec;
  for (const auto& r : *records) {
    const core::CellKey cell = core::CellKey::from_json(r.value("cell", nlohmann::json::object()));
    const std::string probe = r.value("probe", "");
    const std::string item = r.value("item", "");
    std::string why;
    if (!cells.contains(cell)) why = "cell " + cell.label() + " is not in this config's grid";
    else if (!items.contains(probe)) why = "probe '" + probe + "' is not in this config";
    else if (!items[probe].contains(item)) why = "item " + probe + "/" + item + " is not one of this config's";
    // The item's spec (its prompt, function, seed…) as the record stored it: same key, other content.
    else if (r.contains("spec") && r["spec"] != items[probe][item])
      why = "item " + probe + "/" + item + " asks something else in this config (its spec differs)";
    if (!why.empty())
      throw core::FatalError("--resume " + run_dir + ": the run has no manifest, and its records.jsonl was not written "
                             "with " + config.file.string() + " (" + why + "); resume it with the config it was made "
                             "with, or start a new run with -o NEW_DIR");
  }
}

}  // namespace kvsweep::cli
