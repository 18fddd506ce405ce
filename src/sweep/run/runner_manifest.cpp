/// The runner's writing: the manifest (provenance, then each cell's outcome) and the item records.

#include "kvsweep/sweep/run/runner.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "kvsweep/core/clock.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/core/version.hpp"
#include "kvsweep/server/server_env.hpp"
#include "kvsweep/sweep/run/attention_paths.hpp"
#include "kvsweep/sweep/store/cell_journal.hpp"
#include "kvsweep/sweep/store/growth.hpp"
#include "kvsweep/sweep/store/model_hashes.hpp"

extern char** environ;

namespace kvsweep::sweep {

namespace {

nlohmann::json cell_result_json(const CellResult& r) {
  nlohmann::json j = r.cell.to_json();
  j["id"] = r.cell.id();
  j["is_reference"] = r.cell.is_reference;
  if (r.cell.support) j["support"] = true;
  j["outcome"] = server::to_string(r.outcome);
  j["message"] = r.message;
  j["items_ok"] = r.items_ok;
  j["items_failed"] = r.items_failed;
  j["items_skipped"] = r.items_skipped;
  if (r.items_settled > 0) j["items_settled"] = r.items_settled;
  j["restarts"] = r.restarts;
  j["ready_s"] = r.ready_s;
  j["wall_s"] = r.wall_s;
  j["stop_s"] = r.stop_s;
  j["items_wall_s"] = r.items_wall_s;
  j["server_ms"] = r.server_ms;
  j["effective"] = server::to_json(r.effective);
  if (!r.started_at.empty()) {
    j["started_at"] = r.started_at;
    j["finished_at"] = r.finished_at;
  }
  if (r.load_avg >= 0) j["load_avg"] = r.load_avg;
  if (!r.lifecycle.empty()) j["lifecycle"] = r.lifecycle;
  if (r.slot >= 0) {
    j["slot"] = r.slot;
    j["slot_env"] = config::env_for_record(r.slot_env);
  }
  return j;
}

}  // namespace

// Provenance first, so even a run that dies at once says what it was.
void Runner::open_manifest() {
  if (auto old = RunStore::read_manifest(m_store.dir()); old) {
    if (auto read = Manifest::from_json(*old)) m_manifest = std::move(*read);
  }
  // A manifest that lost cells (a crash between the journal and the manifest's rename) gets them back.
  if (auto journal = RunStore::read_cells(m_store.dir()); !journal.empty())
    m_manifest.cells = rebuild_cells(m_manifest.cell_list(), journal);
  m_manifest.schema_version = kSchemaVersion;
  m_manifest.kind = Manifest::kKind;
  m_manifest.name = m_config.name;
  m_manifest.config = record_form(m_config);
  m_manifest.config_file = std::filesystem::absolute(m_config.file).string();
  m_manifest.config_hash = config::config_hash(m_config);
  m_manifest.kvsweep = {{"version", core::version()}, {"git_sha", core::git_sha()}};
  m_manifest.server = m_backend.describe();
  if (!m_options.build_changed_from.empty()) m_manifest.build_changed_from = m_options.build_changed_from;
  // A run that grew (a resume whose config only adds): each growth once, with the hashes it went between.
  if (m_options.grown.is_object()) {
    if (!m_manifest.grown.is_array()) m_manifest.grown = nlohmann::json::array();
    if (m_manifest.grown.empty() || m_manifest.grown.back() != m_options.grown) m_manifest.grown.push_back(m_options.grown);
  }
  // A variant with its own binary: that build's provenance beside the server's.
  for (const auto& [name, binary] : m_options.variant_binaries)
    m_manifest.variant_servers[name] = m_backend.describe_binary(binary);
  m_manifest.host = core::host_info();
  // What the servers read from their environment, inherited or configured: a variable set in the shell
  // (LLAMA_ATTN_ROT_DISABLE=1) changes a cell as much as an argument does, and compare names it.
  if (m_config.server.backend != "external") {
    const auto launched =
        server::launched_server_env(server::inherited_server_env(environ, m_config.server.backend), m_config.server.env);
    m_manifest.server_env = config::env_for_record(launched).get<std::map<std::string, std::string>>();
  }
  if (!m_manifest.started_at) m_manifest.started_at = core::iso8601(std::chrono::system_clock::now());
  m_manifest.n_ctx = context_size();
  if (m_options.shard) m_manifest.shard = *m_options.shard;
  // Hashed by the caller (which refuses a resume whose models changed), else here.
  if (m_options.models.empty()) {
    if (auto hashed = hash_models(m_config)) m_options.models = std::move(*hashed);
    else spdlog::warn("{}", hashed.error().message);
  }
  m_manifest.models = models_json(m_options.models);
  // What the CLI read from the file (kvsweep's copy model: the report holds its reference to the ceiling).
  for (auto& mj : m_manifest.models) {
    const auto facts = m_options.model_facts.find(mj.value("name", ""));
    if (facts == m_options.model_facts.end()) continue;
    for (auto it = facts->second.begin(); it != facts->second.end(); ++it) mj[it.key()] = it.value();
  }
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : m_probes) probes.push_back(probe::manifest_entry(*p));
  m_manifest.probes = probes;
  if (m_embedder) m_manifest.embedder = m_embedder_description;
}

void Runner::update_manifest(const std::vector<CellResult>& results, const std::string& status) {
  // Keep outcomes of cells this invocation does not touch (resume, shards, --only).
  std::vector<ManifestCell> cells = m_manifest.cell_list();
  for (const auto& r : results) {
    if (r.outcome == server::CellOutcome::pending) continue;
    const nlohmann::json j = cell_result_json(r);
    // The journal first: a crash before the manifest's rename loses nothing a resume cannot rebuild.
    if (m_journaled.insert(r.cell.key()).second) {
      if (auto journaled = m_store.append_cell(j); !journaled) stop_for_store(journaled.error().message);
    }
    fold_cell(cells, *ManifestCell::from_json(j));
  }
  m_paths = resolve_attention_paths(cells);
  m_manifest.cells = cells;
  m_manifest.status = status;
  m_manifest.updated_at = core::iso8601(std::chrono::system_clock::now());
  if (status != "running") m_manifest.finished_at = m_manifest.updated_at;
  if (auto w = m_store.write_manifest(to_json(m_manifest)); !w) stop_for_store(w.error().message);
}

void Runner::stop_for_store(const std::string& message) {
  // Like a record that cannot be written: the run stops, and resume finishes it.
  if (m_manifest_error.empty()) {
    m_manifest_error = message;
    spdlog::error("{}; stopping the run", message);
  }
  m_store_failed = true;
}

probe::Record Runner::make_record(const Cell& cell, const probe::Probe& p, const probe::Item& item,
                                  const std::string& status, double wall_s, int attempt) const {
  probe::Record r;
  r.cell = cell.key();
  r.probe = p.name();
  r.kind = p.kind();
  r.item = item.key;
  r.status = status;
  r.spec = item.spec;
  r.wall_s = wall_s;
  r.attempt = attempt;
  r.time = core::iso8601(std::chrono::system_clock::now());
  return r;
}

bool Runner::append_or_stop(const probe::Record& record) {
  auto appended = m_store.append(record);
  if (appended) return true;
  std::lock_guard lock(m_mutex);
  if (m_store_error.empty()) {
    m_store_error = appended.error().message;
    spdlog::error("{}; stopping the run", m_store_error);
  }
  m_store_failed = true;
  return false;
}

}  // namespace kvsweep::sweep
