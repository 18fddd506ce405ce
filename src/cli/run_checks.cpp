#include "kvsweep/cli/run_checks.hpp"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "kvsweep/core/clock.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/server/server_env.hpp"
#include "kvsweep/sweep/plan/plan.hpp"
#include "kvsweep/sweep/run/runner.hpp"
#include "kvsweep/sweep/store/growth.hpp"
#include "kvsweep/sweep/store/input_hashes.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

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

namespace {

/// What this config asks: its grid's cells and each probe's items with their specs.
struct Asked {
  std::set<core::CellKey> cells;
  std::map<std::string, std::map<std::string, nlohmann::json>> items;  // probe -> item key -> its spec
};

Asked asked_by(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes) {
  Asked a;
  for (const auto& c : sweep::grid_cells(config)) a.cells.insert(static_cast<const core::CellKey&>(c));
  for (const auto& p : probes)
    for (const auto& item : p->items()) a.items[p->name()][item.key] = item.spec;
  return a;
}

/// Why `r` could not have been written by the config that asks `a`; "" when it could.
std::string misfit(const probe::Record& r, const Asked& a) {
  const core::CellKey& cell = r.cell;
  const std::string& probe = r.probe;
  const std::string& item = r.item;
  if (!a.cells.contains(cell)) return "cell " + cell.label() + " is not in this config's grid";
  const auto p = a.items.find(probe);
  if (p == a.items.end()) return "probe '" + probe + "' is not in this config";
  const auto i = p->second.find(item);
  if (i == p->second.end()) return "item " + probe + "/" + item + " is not one of this config's";
  // The item's spec (its prompt, function, seed…) as the record stored it: same key, other content.
  if (!r.spec.is_null() && r.spec != i->second)
    return "item " + probe + "/" + item + " asks something else in this config (its spec differs)";
  return "";
}

/// The run's records; a FatalError when they cannot be read.
std::vector<probe::Record> records_of(const std::string& run_dir) {
  auto records = sweep::RunStore::read_records(run_dir);
  if (!records) throw core::FatalError("--resume " + run_dir + ": " + records.error().message);
  return std::move(*records);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "\n  " + l;
  return out;
}

}  // namespace

void check_records_fit(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes,
                       const std::string& run_dir) {
  const Asked asked = asked_by(config, probes);
  for (const auto& r : records_of(run_dir)) {
    if (const std::string why = misfit(r, asked); !why.empty())
      throw core::FatalError("--resume " + run_dir + ": the run has no manifest, and its records.jsonl was not written "
                             "with " + config.file.string() + " (" + why + "); resume it with the config it was made "
                             "with, or start a new run with -o NEW_DIR");
  }
}

nlohmann::json check_growth(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes,
                            const nlohmann::json& previous, const std::string& run_dir) {
  const std::string before_hash = previous.value("config_hash", "");
  const std::string now_hash = config::config_hash(config);
  if (before_hash.empty() || before_hash == now_hash) return nullptr;
  const std::string refused = "--resume " + run_dir + ": the config changed since the run started (hash " + before_hash +
                              " → " + now_hash + ")";
  const std::string instead = "\na resumed run may only grow (more items, cells, models, variants or probes; "
                              "README \"Growing a run\"): restore the config, or start a new run with -o NEW_DIR";
  if (!previous.contains("config") || !previous["config"].is_object())
    throw core::FatalError(refused + ", and its manifest does not record the config it ran, so what changed cannot "
                           "be told; start a new run with -o NEW_DIR");
  const sweep::Growth growth = sweep::compare_for_growth(previous["config"], sweep::record_form(config));
  if (!growth.changed.empty())
    throw core::FatalError(refused + ", in ways that are not growth:" + joined(growth.changed) + instead);
  // Items of one run share one context: a longer new item that raises it would make the cells differ.
  const int n_ctx = sweep::planned_context_size(config, probes);
  if (const auto was = previous.find("n_ctx"); was != previous.end() && was->is_number_integer() && *was != n_ctx)
    throw core::FatalError(refused + ": its cells ran with a context of " + std::to_string(was->get<int>()) +
                           " tokens, the grown config needs " + std::to_string(n_ctx) +
                           " (set server.ctx to the run's, or start a new run with -o NEW_DIR)");
  const Asked asked = asked_by(config, probes);
  for (const auto& r : records_of(run_dir)) {
    if (const std::string why = misfit(r, asked); !why.empty())
      throw core::FatalError(refused + ": a record of the run would not be kept: " + why + instead);
  }
  return {{"from_config_hash", before_hash}, {"to_config_hash", now_hash}, {"added", growth.added},
          {"at", core::iso8601(std::chrono::system_clock::now())}};
}

void check_server_env(const config::Config& config, const std::optional<nlohmann::json>& previous,
                      const std::string& run_dir) {
  if (!previous || !previous->contains("server_env") || !(*previous)["server_env"].is_object()) return;
  const nlohmann::json& before = (*previous)["server_env"];
  const nlohmann::json now = config::env_for_record(
      server::launched_server_env(server::inherited_server_env(environ, config.server.backend), config.server.env));
  std::set<std::string> names;
  for (const nlohmann::json* side : {&before, &now})
    for (auto it = side->begin(); it != side->end(); ++it) names.insert(it.key());
  const auto shown = [](const nlohmann::json& env, const std::string& name) {
    return env.contains(name) && env[name].is_string() ? env[name].get<std::string>() : std::string("unset");
  };
  std::vector<std::string> changed;
  for (const auto& name : names) {
    // Device selection picks the hardware (a resumed shard on another node), not what a cell answers.
    if (server::is_device_env_name(name)) continue;
    if (shown(before, name) != shown(now, name)) changed.push_back(name + ": " + shown(before, name) + " → " + shown(now, name));
  }
  if (changed.empty()) return;
  throw core::FatalError("--resume " + run_dir + ": the servers would start with another environment than the run's "
                         "cells did (from the manifest's server_env):" + joined(changed) +
                         "\ncells of one run share one environment (llama.cpp reads these): set it back as the run "
                         "had it, or start a new run with -o NEW_DIR");
}

}  // namespace kvsweep::cli
