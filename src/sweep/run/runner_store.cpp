/// The runner's writing: the manifest (provenance, then each cell's outcome) and the item records.

#include "kvsweep/sweep/run/runner.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <set>

#include "kvsweep/core/clock.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/core/version.hpp"
#include "kvsweep/sweep/store/growth.hpp"
#include "kvsweep/sweep/store/model_hashes.hpp"
#include "kvsweep/sweep/store/run_identity.hpp"

extern char** environ;

namespace kvsweep::sweep {


// Provenance first, so even a run that dies at once says what it was.
void Runner::open_manifest() {
  m_journal.open();
  Manifest& m = m_journal.manifest();
  // A cell of the journal (or of the manifest) that this config's grid does not have was never run
  // by this run: an edited or foreign line, not a cell. Dropped, and said.
  if (m.cells) {
    std::set<core::CellKey> grid;
    for (const auto& c : grid_cells(m_config)) grid.insert(c.key());
    std::erase_if(*m.cells, [&](const ManifestCell& c) {
      if (grid.contains(c.key())) return false;
      m_progress.note("the run directory's cell " + c.label() + " is not in this config's grid: left out");
      return true;
    });
  }
  m.schema_version = kSchemaVersion;
  m.kind = Manifest::kKind;
  m.name = m_config.name;
  m.config = record_form(m_config);
  m.config_file = std::filesystem::absolute(m_config.file).string();
  m.config_hash = config::config_hash(m_config);
  m.kvsweep = {{"version", core::version()}, {"git_sha", core::git_sha()}};
  m.server = m_backend.describe();
  if (!m_options.build_changed_from.empty()) m.build_changed_from = m_options.build_changed_from;
  // A run that grew (a resume whose config only adds): each growth once, with the hashes it went between.
  if (m_options.grown.is_object()) {
    if (!m.grown.is_array()) m.grown = nlohmann::json::array();
    if (m.grown.empty() || m.grown.back() != m_options.grown) m.grown.push_back(m_options.grown);
  }
  // A variant with its own binary: that build's provenance beside the server's.
  for (const auto& [name, binary] : m_options.variant_binaries)
    m.variant_servers[name] = m_backend.describe_binary(binary);
  m.host = core::host_info();
  // What the servers read from their environment, inherited or configured: a variable set in the shell
  // (LLAMA_ATTN_ROT_DISABLE=1) changes a cell as much as an argument does, and compare names it.
  if (auto env = recorded_server_env(m_config, environ)) m.server_env = std::move(*env);
  if (!m.started_at) m.started_at = core::iso8601(std::chrono::system_clock::now());
  m.n_ctx = context_size();
  if (m_options.shard) m.shard = *m_options.shard;
  // Hashed by the caller (which refuses a resume whose models changed), else here.
  if (m_options.models.empty()) {
    if (auto hashed = hash_models(m_config)) m_options.models = std::move(*hashed);
    else spdlog::warn("{}", hashed.error().message);
  }
  m.models = models_json(m_options.models);
  // What the CLI read from the file (kvsweep's copy model: the report holds its reference to the ceiling).
  for (auto& mj : m.models) {
    const auto facts = m_options.model_facts.find(mj.value("name", ""));
    if (facts == m_options.model_facts.end()) continue;
    for (auto it = facts->second.begin(); it != facts->second.end(); ++it) mj[it.key()] = it.value();
  }
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : m_probes) probes.push_back(probe::manifest_entry(*p));
  m.probes = probes;
  if (m_embedder) m.embedder = m_embedder_description;
}

void Runner::update_manifest(const std::vector<CellResult>& results, const std::string& status) {
  if (const std::string why = m_journal.update(results, status); !why.empty()) stop_for_store(why);
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
                                  probe::ItemStatus status, std::string failure, double wall_s, int attempt) const {
  probe::Record r;
  r.cell = cell.key();
  r.probe = p.name();
  r.kind = p.kind();
  r.item = item.key;
  r.status = status;
  r.failure = std::move(failure);
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
