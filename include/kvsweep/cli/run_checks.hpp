#pragma once
/// What `kvsweep run` checks of a run directory before anything starts: the manifest a resume
/// reads, that a resume is still the run it started as (its identity), and that its config only grows it.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/sweep/store/manifest.hpp"
#include "kvsweep/sweep/store/model_hashes.hpp"

namespace kvsweep::cli {

/// The manifest of the run `run_dir` being resumed (its journal folded in), read strictly once, here:
/// its identity (sweep::read_identity), config_file and shard each of its type (a field of another type,
/// or no config_hash, is refused naming it; read as absent it would switch its check off); nullopt when the run has neither
/// manifest nor records and a config was given (`have_config`: a run that stopped before writing
/// anything). Throws FatalError, saying how to start afresh, for records without a manifest (the config
/// they were made with cannot be told) and for a directory with neither when no config was given.
std::optional<sweep::Manifest> manifest_to_resume(const std::string& run_dir, bool have_config);

/// What a resume keeps of its identity check: the models hashed now, and the build the run started
/// with when it continues on another (--allow-build-change).
struct ResumeIdentity {
  std::vector<sweep::ModelHash> models;
  std::string build_changed_from;
};

/// For a resume (`previous`, its manifest): the run's identity against what would run now
/// (sweep::check_identity): the models and the embedder's model, the probes' input files, the server
/// build (`server`, the backend's describe(); another one only with `allow_build_change`) and the
/// environment the servers read. Throws FatalError naming each change and how to start a new run; the
/// config's own change is check_growth's.
ResumeIdentity check_resume_identity(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes,
                                     const sweep::Manifest& previous, const nlohmann::json& server,
                                     bool allow_build_change, const std::string& run_dir);

/// For a resume whose config hash is not the run's (`previous`, its manifest): the config may only
/// grow it (sweep/store/growth: more items, cells, models, variants, probes) with every record of the run
/// still asked, spec for spec, and the same context size. Returns what the manifest records of the
/// growth ({from_config_hash, to_config_hash, added, at}); null when the hash is the run's. Throws
/// FatalError listing each change that is not growth, or the record that would not be kept.
nlohmann::json check_growth(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes,
                            const sweep::Manifest& previous, const std::string& run_dir);

}  // namespace kvsweep::cli
