#pragma once
/// manifest.json as a type: a run's provenance (config, versions, server, host, models, probes),
/// each cell's outcome, and the run's status. The runner writes it, merge joins shards' into one,
/// the dry run's time estimate and the report read it back; `Manifest::from_json` and `to_json` are its
/// one JSON mapping (ARCHITECTURE.md, "The manifest").

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/sweep/plan/plan.hpp"

namespace kvsweep::sweep {

/// What a cell's server reported of itself (server::to_json(EffectiveKv)), as a manifest cell's
/// `effective` holds it after the attention path was decided across cells (resolve_attention_paths).
/// Fields as the file has them, like Manifest's: absent is nullopt, the rest kept in `extra`.
struct CellEffective {
  std::optional<bool> found, declared;  // the log's KV line was read; the types were declared (external)
  std::optional<std::string> type_k, type_v, flash_attn;
  std::optional<double> k_mib, v_mib, kv_mib;
  std::optional<int> attn_rot_k, attn_rot_v, n_ctx;
  std::optional<std::string> path, path_reason;  // the attention path, decided across cells
  nlohmann::json attention;  // the log's kernel evidence: path and reason of its own, splits, fa_quants, …
  nlohmann::json memory;     // [{device, gpu, model_mib, kv_mib, compute_mib}]
  nlohmann::json extra = nlohmann::json::object();

  static CellEffective from_json(const nlohmann::json& j);  // j an object
  /// found or declared: the settings were reported (compare explains by them).
  bool reported() const { return found.value_or(false) || declared.value_or(false); }
};
nlohmann::json to_json(const CellEffective& effective);

/// A setting of a CellEffective that summary.json keeps per cell and compare explains a change by.
struct ReportedSetting {
  const char* name;
  /// Its value as the manifest writes it (a string or an integer); null when the server did not report it.
  nlohmann::json (*value)(const CellEffective& effective);
};

/// The reported settings (type_k, type_v, flash_attn, attn_rot_k, attn_rot_v, n_ctx, path) in the order
/// they are listed; summary.json writes `found` and `declared` before them.
std::span<const ReportedSetting> reported_settings();

/// One cell's outcome as it ended (the runner's CellResult as written, folded with cells.jsonl).
struct ManifestCell : core::CellKey {
  std::optional<std::string> id;
  std::optional<bool> is_reference, support;  // support: a shard's copy of a reference cell another shard owns
  std::optional<std::string> outcome, message;
  std::optional<int> items_ok, items_failed, items_skipped, items_settled, restarts, slot;
  std::optional<double> ready_s, wall_s, stop_s, items_wall_s, server_ms, load_avg;
  std::optional<std::string> started_at, finished_at;
  std::optional<CellEffective> effective;
  nlohmann::json lifecycle;  // [{event, at, …}]
  nlohmann::json slot_env;
  nlohmann::json extra = nlohmann::json::object();

  /// A cell read back; nullopt when `j` is not an object.
  static std::optional<ManifestCell> from_json(const nlohmann::json& j);
  /// Why `j` (a cell entry, a line of cells.jsonl) is not a cell as kvsweep writes it: a field
  /// from_json knows holding another type ("outcome: got number 3, expected a string"), which from_json
  /// would read as absent; "" when every known field has its type.
  static std::string type_error(const nlohmann::json& j);
  bool reference() const { return is_reference.value_or(false); }
  std::string outcome_text() const { return outcome.value_or(""); }
};
nlohmann::json to_json(const ManifestCell& cell);

/// Every field is as the file has it: a scalar that is absent (or of another type) is nullopt, a
/// document that is absent is null. A key this kvsweep does not know, and a known key whose value
/// has another type, stays in `extra` and is written back as read: a manifest round-trips whole.
struct Manifest {
  static constexpr const char* kKind = "kvsweep-run";

  std::optional<int> schema_version;
  std::optional<std::string> kind;  // kKind
  std::optional<std::string> name;  // the config's name
  nlohmann::json config;            // the resolved config (config::to_json), secrets out of its env
  std::optional<std::string> config_file;  // absolute
  std::optional<std::string> config_hash;
  nlohmann::json kvsweep;           // {version, git_sha} of the kvsweep that ran it
  nlohmann::json server;            // the backend's describe(): backend, binary, version, built_with, …
  std::optional<std::string> build_changed_from;  // a resume on another build: the build it started with
  nlohmann::json grown;             // resumes whose config added to the run's: [{from_config_hash, to_config_hash, added, at}]
  nlohmann::json variant_servers;   // variant name → its own binary's describe()
  nlohmann::json host;              // core::host_info()
  /// What llama.cpp reported of the host it computed on (host_compute of the cells' logs):
  /// {backends, devices, cpu_features}; null until a cell's server logged its system_info. Greedy
  /// output depends on it (AVX-512 and AVX2 kernels round differently): compare names its change first.
  nlohmann::json compute;
  /// The variables a cell's server reads (server::is_server_env_name) as kvsweep launched it: those
  /// it inherited from kvsweep's environment, overridden by the config's server.env; values of
  /// secret-looking names "<redacted>" (config::env_for_record). A variant's own env is in `config`.
  /// Absent in a manifest written before it was recorded.
  std::optional<std::map<std::string, std::string>> server_env;
  std::optional<std::string> started_at, updated_at, finished_at;  // ISO 8601, UTC
  std::optional<std::string> status;  // running, complete, interrupted, stopped; merged: complete, partial
  std::optional<int> n_ctx;         // the context every cell's server ran with
  std::optional<Shard> shard;       // the shard this run is ("--shard I/N"); absent when whole
  nlohmann::json models;            // [{name, path, is_file, size, sha256, …facts}] (models_json)
  nlohmann::json probes;            // [probe::manifest_entry]
  nlohmann::json embedder;          // the telephone probe's embedding server, when one ran
  /// Each cell's outcome as it ended (folded with cells.jsonl); absent in a manifest written before the
  /// first cell ended. A `cells` that is not an array of objects stays in `extra`.
  std::optional<std::vector<ManifestCell>> cells;
  /// How many entries of the outcomes journal (cells.jsonl, RunStore::read_cells) `cells` holds: a reader
  /// folds in only those after them (a crash between the journal and this manifest), never a line the
  /// runner dropped (a cell outside the grid). Absent in a manifest written before it: every entry folds.
  std::optional<int> journaled;
  nlohmann::json merged_from;       // merge: [{dir, shard, status, server_build?}]
  std::optional<bool> build_change_allowed;  // merge --allow-build-change
  nlohmann::json extra = nlohmann::json::object();

  /// A manifest read back (kvsweep's own file, read leniently); nullopt when it is not a JSON object.
  static std::optional<Manifest> from_json(const nlohmann::json& j);

  /// A field from_json knows whose value had another type (kept in `extra`, read as absent): what a
  /// strict reader (read_identity, a resume's checks) names as wrong. nullptr when the field was absent or read.
  const nlohmann::json* mistyped(const char* key) const;

  /// The status, "" when absent.
  std::string status_text() const { return status.value_or(""); }
  /// The cells, none when absent.
  const std::vector<ManifestCell>& cell_list() const;
};

/// What llama.cpp reported of the host in the first cell whose log showed its system_info (the cell's
/// effective.attention): {"backends": ["CPU"], "devices": […], "cpu_features": ["AVX2", …]}; null when no
/// cell's did. Every cell of a run shares the build and host, so one cell speaks for the run.
nlohmann::json host_compute(const std::vector<ManifestCell>& cells);

/// One line for a host's compute: "CPU (AVX512 AVX512_VNNI …)", "CUDA0 on CUDA+CPU (…)"; "unknown" for null.
std::string describe_compute(const nlohmann::json& compute);

/// The manifest's JSON: `extra`, then every field that is present.
nlohmann::json to_json(const Manifest& manifest);
/// The same, for nlohmann's conversions (`nlohmann::json j = manifest;`).
void to_json(nlohmann::json& j, const Manifest& manifest);

}  // namespace kvsweep::sweep
