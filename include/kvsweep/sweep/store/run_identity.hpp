#pragma once
/// A run's identity and its one check: the content of every input a record depends on — the config
/// (its hash: each probe's parameters), each model file, the embedder's model, the files each probe
/// reads, the server build and the server's environment. `read_identity` reads what a manifest
/// recorded (strictly: a field of another type is an error naming it, never "no check"),
/// `current_identity` computes what a run would record now with the functions that write the manifest,
/// and `check_identity` compares two wherever two states of a run meet: a resume (the manifest against
/// now, `cli/run_checks`), a merge (every shard against the first, `sweep/store/merge`).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/sweep/store/manifest.hpp"
#include "kvsweep/sweep/store/model_hashes.hpp"

namespace kvsweep::sweep {

struct RunIdentity {
  std::string config_hash;
  std::vector<ModelHash> models;  // is_file (and sha256) where the model is a file kvsweep hashed
  std::string embedder_sha256;    // "" when no embedder model file was hashed
  nlohmann::json probes = nlohmann::json::array();  // each probe's manifest entry (`inputs`: its files)
  std::string server_build;       // server_build(): "" when the manifest records no server
  /// The variables the cells' servers read (manifest `server_env`); absent for external and older runs.
  std::optional<std::map<std::string, std::string>> server_env;
};

/// The identity `manifest` records. `config_hash` is required; a field of another type ("models[0].sha256:
/// got number 3, expected a string"), whether Manifest::from_json kept it aside (Manifest::mistyped) or it
/// sits inside a document it holds, is an invalid error naming it.
core::Expected<RunIdentity> read_identity(const Manifest& manifest);

/// The server environment a run records: what a cell's server inherits from `envp` and the config's
/// `server.env` sets (server::launched_server_env), secret values redacted; nullopt for backend external.
std::optional<std::map<std::string, std::string>> recorded_server_env(const config::Config& config,
                                                                      const char* const* envp);

/// What a run of `config` would record now: its hash, its models and embedder hashed, each probe's
/// manifest entry, `server` (the backend's describe()) as a build, and the server environment.
/// An unreadable model file is an io error naming it.
core::Expected<RunIdentity> current_identity(const config::Config& config,
                                             const std::vector<std::unique_ptr<probe::Probe>>& probes,
                                             const nlohmann::json& server, const char* const* envp);

enum class IdentityPart { config, model, embedder, input, server_build, server_env };

struct IdentityChange {
  IdentityPart part;
  std::string line;  // "model 'tiny' (/m/tiny.gguf): sha256 … when the run started, … now"
};

/// Every input whose identity differs from `a` to `b`, each named with both sides' values in the words
/// `a_side` and `b_side` ("when the run started", "now"). A part one side did not record (an older
/// manifest, a backend without it) is not compared: models by name where both recorded one (a file on
/// one side and a tag on the other is a change), the embedder where `a` hashed one, input files as
/// `changed_inputs` says, the build where both name one, the environment where both recorded one
/// (device selection aside: it picks the hardware, not what a cell answers).
std::vector<IdentityChange> check_identity(const RunIdentity& a, const RunIdentity& b, const std::string& a_side,
                                           const std::string& b_side);

/// The changes of `part` among `changes`, one line each.
std::vector<std::string> lines_of(const std::vector<IdentityChange>& changes, IdentityPart part);

}  // namespace kvsweep::sweep
