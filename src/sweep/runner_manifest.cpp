/// The runner's writing: the manifest (provenance, then each cell's outcome) and the item records.

#include "kvsweep/sweep/runner.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "kvsweep/core/clock.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/core/version.hpp"

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
  if (auto old = RunStore::read_manifest(m_store.dir())) m_manifest = *old;
  m_manifest["schema_version"] = kSchemaVersion;
  m_manifest["kind"] = "kvsweep-run";
  m_manifest["name"] = m_config.name;
  m_manifest["config"] = config::to_json(m_config);
  // Like the slot environments: values of secret-looking names (…KEY…, …TOKEN…) never reach the run directory.
  m_manifest["config"]["server"]["env"] = config::env_for_record(m_config.server.env);
  for (std::size_t i = 0; i < m_config.variants.size(); ++i)
    m_manifest["config"]["variants"][i]["env"] = config::env_for_record(m_config.variants[i].env);
  m_manifest["config_file"] = std::filesystem::absolute(m_config.file).string();
  m_manifest["config_hash"] = config::config_hash(m_config);
  m_manifest["kvsweep"] = {{"version", core::version()}, {"git_sha", core::git_sha()}};
  m_manifest["server"] = m_backend.describe();
  // A variant with its own binary: that build's provenance beside the server's.
  for (const auto& [name, binary] : m_options.variant_binaries)
    m_manifest["variant_servers"][name] = m_backend.describe_binary(binary);
  m_manifest["host"] = core::host_info();
  if (!m_manifest.contains("started_at")) m_manifest["started_at"] = core::iso8601(std::chrono::system_clock::now());
  m_manifest["n_ctx"] = context_size();
  if (m_options.shard) m_manifest["shard"] = {{"index", m_options.shard->index}, {"count", m_options.shard->count}};
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : m_config.models) {
    nlohmann::json mj = {{"name", m.name}, {"path", m.path}};
    std::error_code ec;
    if (m_config.server.backend == "llama-server" && std::filesystem::is_regular_file(m.path, ec)) {
      mj["size"] = std::filesystem::file_size(m.path, ec);
      // Reuse the hash of an earlier invocation when the file is unchanged.
      bool reused = false;
      for (const auto& old : m_manifest.value("models", nlohmann::json::array())) {
        if (old.value("path", "") == m.path && old.value("size", 0ULL) == mj["size"].get<std::uintmax_t>() &&
            old.contains("sha256")) {
          mj["sha256"] = old["sha256"];
          reused = true;
        }
      }
      if (!reused) {
        if (auto h = core::sha256_file(m.path)) mj["sha256"] = *h;
      }
    }
    // What the CLI read from the file (kvsweep's copy model: the report holds its reference to the ceiling).
    if (const auto facts = m_options.model_facts.find(m.name); facts != m_options.model_facts.end()) {
      for (auto it = facts->second.begin(); it != facts->second.end(); ++it) mj[it.key()] = it.value();
    }
    models.push_back(mj);
  }
  m_manifest["models"] = models;
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : m_probes) probes.push_back(probe::manifest_entry(*p));
  m_manifest["probes"] = probes;
  if (m_embedder) m_manifest["embedder"] = m_embedder_description;
}

void Runner::update_manifest(const std::vector<CellResult>& results, const std::string& status) {
  // Keep outcomes of cells this invocation does not touch (resume, shards, --only).
  nlohmann::json cells = m_manifest.value("cells", nlohmann::json::array());
  for (const auto& r : results) {
    if (r.outcome == server::CellOutcome::pending) continue;
    nlohmann::json j = cell_result_json(r);
    bool replaced = false;
    for (auto& c : cells) {
      if (cell_key(c) == cell_key(j)) {
        // A resumed cell that only skipped items keeps its earlier outcome.
        if (r.outcome == server::CellOutcome::skipped) {
          replaced = true;
          break;
        }
        c = j;
        replaced = true;
      }
    }
    if (!replaced && r.outcome != server::CellOutcome::skipped) cells.push_back(j);
  }
  m_manifest["cells"] = cells;
  m_manifest["status"] = status;
  m_manifest["updated_at"] = core::iso8601(std::chrono::system_clock::now());
  if (status != "running") m_manifest["finished_at"] = m_manifest["updated_at"];
  if (auto w = m_store.write_manifest(m_manifest); !w) spdlog::error("{}", w.error().message);
}

nlohmann::json Runner::make_record(const Cell& cell, const probe::Probe& p, const probe::Item& item,
                                   const std::string& status, double wall_s, int attempt) const {
  return {{"schema_version", kSchemaVersion},
          {"cell", cell.to_json()},
          {"probe", p.name()},
          {"kind", p.kind()},
          {"item", item.key},
          {"status", status},
          {"spec", item.spec},
          {"wall_s", wall_s},
          {"attempt", attempt},
          {"time", core::iso8601(std::chrono::system_clock::now())}};
}

bool Runner::append_or_stop(const nlohmann::json& record) {
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
