#pragma once
/// What `kvsweep run` checks of a run directory before anything starts: the manifest a resume
/// reads, and that a resume still has the models and the input files the run started with.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/sweep/store/model_hashes.hpp"

namespace kvsweep::cli {

/// The manifest of the run `run_dir` being resumed; nullopt when it has none and a config was
/// given (`have_config`). Throws FatalError, saying how to start it again, when there is neither.
std::optional<nlohmann::json> manifest_to_resume(const std::string& run_dir, bool have_config);

/// Every model of `config` hashed; for a resume (`previous` set) throws FatalError naming both
/// hashes when a model file changed since the run started.
std::vector<sweep::ModelHash> checked_models(const config::Config& config, const std::optional<nlohmann::json>& previous,
                                             const std::string& run_dir);

/// For a resume (`previous` set): throws FatalError naming each input file of the probes (prompts,
/// texts, corpus files) whose content differs from what the run's manifest recorded.
void check_inputs(const std::vector<std::unique_ptr<probe::Probe>>& probes, const std::optional<nlohmann::json>& previous,
                  const std::string& run_dir);

/// For a resume without a readable manifest (lost or torn, a config given): throws FatalError when
/// records.jsonl holds a record this config could not have written — a cell outside its grid, a
/// probe or an item it does not have — so that a config is never resumed onto another's records.
void check_records_fit(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes,
                       const std::string& run_dir);

/// For a resume whose config hash is not the run's (`previous`, its manifest): the config may only
/// grow it (sweep/store/growth: more items, cells, models, variants, probes) with every record of the run
/// still asked, spec for spec, and the same context size. Returns what the manifest records of the
/// growth ({from_config_hash, to_config_hash, added, at}); null when the hash is the run's. Throws
/// FatalError listing each change that is not growth, or the record that would not be kept.
nlohmann::json check_growth(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes,
                            const nlohmann::json& previous, const std::string& run_dir);

/// For a resume (`previous` set, with its `server_env`): throws FatalError naming each LLAMA_*, GGML_* or
/// OLLAMA_* variable a cell's server would now start with that differs from what the run's cells had
/// (inherited from kvsweep's environment or the config's server.env); device selection may differ.
void check_server_env(const config::Config& config, const std::optional<nlohmann::json>& previous,
                      const std::string& run_dir);

}  // namespace kvsweep::cli
