#include "kvsweep/sweep/store/merge.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "kvsweep/core/clock.hpp"
#include "kvsweep/probe/record.hpp"
#include "kvsweep/sweep/store/manifest.hpp"
#include "kvsweep/sweep/store/run_identity.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::sweep {

namespace {

// What must agree between two ok records of one triple: what the server produced and
// what was measured (not when, or how long it took).
bool same_result(const probe::Record& a, const probe::Record& b) {
  return a.response == b.response && a.metrics == b.metrics;
}

/// Phase read: each input's manifest, with the cells a crash kept out of it rebuilt from its
/// journal, and its identity (`identities`); a run still running is refused, and so is a manifest whose
/// identity cannot be read (a field of another type).
core::Expected<std::vector<Manifest>> read_manifests(const std::vector<std::filesystem::path>& inputs,
                                                     std::vector<RunIdentity>& identities) {
  std::vector<Manifest> manifests;
  for (const auto& dir : inputs) {
    if (auto pid = RunStore::lock_holder(dir))
      return core::fail(core::ErrorKind::invalid, dir.string() + " is still running (kvsweep pid " + *pid +
                                                      " holds its lock); merge it once that run has ended");
    auto m = RunStore::read_manifest(dir);
    if (!m && m.error().kind == core::ErrorKind::invalid) return std::unexpected(m.error());  // its journal
    if (!m) return core::fail(core::ErrorKind::invalid, dir.string() + ": not a run directory (" + m.error().message + ")");
    auto identity = read_identity(*m);
    if (!identity)
      return core::fail(core::ErrorKind::invalid, (dir / "manifest.json").string() + ": " + identity.error().message +
                                                      "; a run whose identity cannot be read cannot be merged");
    identities.push_back(std::move(*identity));
    manifests.push_back(std::move(*m));
  }
  return manifests;
}

/// What a merge refusal says of a part of the identity that differs.
std::string refusal(IdentityPart part) {
  switch (part) {
    case IdentityPart::config: return "runs of different configs";
    case IdentityPart::model: return "runs of different model files";
    case IdentityPart::embedder: return "runs of different embedding models";
    case IdentityPart::input: return "runs that read different input files";
    case IdentityPart::server_build: return "runs of different server builds";
    case IdentityPart::server_env: return "runs whose servers ran with another environment";
  }
  return "runs of different inputs";
}

/// Phase check: every input is the first one's run (`check_identity`: config, models, embedder, input
/// files, server environment, and the server build unless `allow_build_change`, when the merged
/// manifest lists each input's build).
core::Expected<void> check_one_identity(const std::vector<std::filesystem::path>& inputs,
                                        const std::vector<RunIdentity>& identities, bool allow_build_change) {
  for (std::size_t i = 1; i < identities.size(); ++i) {
    const auto changes = check_identity(identities[0], identities[i], "in " + inputs[0].string(), "in " + inputs[i].string());
    for (const auto& c : changes) {
      if (c.part == IdentityPart::server_build && allow_build_change) continue;
      std::string lines;
      for (const auto& line : lines_of(changes, c.part)) lines += "\n  " + line;
      const std::string hint = c.part == IdentityPart::server_build
                                   ? "\ntheir cells are not comparable as one run (--allow-build-change merges them "
                                     "anyway, listing each run's build in the manifest)"
                                   : "\ntheir records do not measure one thing: merge only shards of one run";
      return core::fail(core::ErrorKind::invalid, "refusing to merge " + refusal(c.part) + ":" + lines + hint);
    }
  }
  return {};
}

/// Support cells: a shard's copy of a reference cell another shard owns. When the owner is among
/// the inputs, its records stand and the copies are dropped unread: they served that shard's
/// comparisons and may differ (another node, another GPU).
class Superseded {
 public:
  explicit Superseded(const std::vector<Manifest>& manifests) : m_support(manifests.size()) {
    for (std::size_t i = 0; i < manifests.size(); ++i) {
      for (const auto& c : manifests[i].cell_list()) {
        if (c.support.value_or(false)) m_support[i].insert(c.key());
        else m_owned.insert(c.key());
      }
    }
  }
  /// Whether input i's `cell` is a support copy of a cell another input owns.
  bool operator()(std::size_t i, const core::CellKey& key) const {
    return m_support[i].contains(key) && m_owned.contains(key);
  }

 private:
  std::vector<std::set<core::CellKey>> m_support;  // per input: its support cells
  std::set<core::CellKey> m_owned;                 // cells some input owns
};

/// Phase records: the union of the inputs' records; an ok triple seen twice must say the same thing.
core::Expected<std::vector<nlohmann::json>> merge_records(const std::vector<std::filesystem::path>& inputs,
                                                          const Superseded& superseded, MergeSummary& summary) {
  std::map<std::string, std::pair<probe::Record, std::string>> ok;  // triple -> (record, from)
  std::vector<nlohmann::json> merged;
  std::set<std::string> seen_lines;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto lines = RunStore::read_lines(inputs[i]);
    if (!lines) return std::unexpected(lines.error());
    for (const auto& line : *lines) {
      // The line is what the merged run holds, as written; the Record is what is read of it.
      const probe::Record r = probe::Record::from_json(line).value_or(probe::Record{});
      if (superseded(i, r.cell)) {
        ++summary.support_dropped;
        continue;
      }
      if (!seen_lines.insert(line.dump()).second) {
        ++summary.duplicates_dropped;
        continue;
      }
      if (r.ok()) {
        std::string key = triple_key(r.cell, r.probe, r.item);
        auto it = ok.find(key);
        if (it != ok.end()) {
          if (!same_result(it->second.first, r)) {
            return core::fail(core::ErrorKind::invalid, "refusing to merge: " + r.cell.label() + " " + r.probe + "/" +
                                                            r.item + " has different results in " + it->second.second +
                                                            " and " + inputs[i].string());
          }
          ++summary.duplicates_dropped;
          continue;
        }
        ok.emplace(key, std::make_pair(r, inputs[i].string()));
      }
      merged.push_back(line);
    }
  }
  return merged;
}

/// Shards of one N that leave some index out: the merged run lacks their cells ("I/N" each).
std::vector<std::string> missing_shards(const std::vector<Manifest>& manifests) {
  std::vector<std::string> out;
  std::set<int> indices;
  int count = 0;
  for (const auto& m : manifests) {
    if (!m.shard) continue;
    indices.insert(m.shard->index);
    count = std::max(count, m.shard->count);
  }
  for (int s = 0; s < count; ++s)
    if (!indices.contains(s)) out.push_back(std::to_string(s) + "/" + std::to_string(count));
  return out;
}

}  // namespace

std::string server_build(const Manifest& manifest) {
  const nlohmann::json& server = manifest.server.is_null() ? nlohmann::json::object() : manifest.server;
  if (!server.is_object()) return "an unknown build";
  std::string out = server.value("backend", "server");
  if (server.contains("version") && server["version"].is_string()) out += " " + server["version"].get<std::string>();
  if (server.contains("built_with") && server["built_with"].is_string())
    out += " (" + server["built_with"].get<std::string>() + ")";
  return out;
}

namespace {

/// Where a merge builds its output: a hidden sibling of it ("DIR/.NAME.merging"), renamed to it once
/// the manifest is written, so a merge killed midway leaves `output` untouched and the same command
/// runs again (removing what the killed one left).
std::filesystem::path staging_dir(std::filesystem::path output) {
  output = output.lexically_normal();
  if (output.filename().empty()) output = output.parent_path();  // "m/"
  return output.parent_path() / ("." + output.filename().string() + ".merging");
}

/// `output` must be new (or an empty directory); a staging directory left by a killed merge is
/// removed, one a running merge holds is refused.
core::Expected<void> prepare_output(const std::filesystem::path& output, const std::filesystem::path& staging) {
  std::error_code ec;
  if (std::filesystem::exists(output, ec) &&
      !(std::filesystem::is_directory(output, ec) && std::filesystem::is_empty(output, ec)))
    return core::fail(core::ErrorKind::invalid, output.string() + " already exists and is not an empty directory: "
                                                    "a merge writes a new run directory; choose another -o (or "
                                                    "remove " + output.string() + ")");
  if (!std::filesystem::exists(staging, ec)) return {};
  if (auto pid = RunStore::lock_holder(staging))
    return core::fail(core::ErrorKind::invalid, "another merge into " + output.string() + " is running (kvsweep pid " +
                                                    *pid + " holds " + staging.string() + ")");
  std::filesystem::remove_all(staging, ec);  // what a merge killed midway left
  if (ec) return core::fail(core::ErrorKind::io, "cannot remove " + staging.string() + " (left by a merge that did "
                                                     "not finish): " + ec.message());
  return {};
}

/// Writes the merged run into `dir` (the staging directory).
core::Expected<void> write_merged(const std::vector<std::filesystem::path>& inputs,
                                  const std::vector<Manifest>& manifests, const std::vector<nlohmann::json>& merged,
                                  const Superseded& superseded, const std::filesystem::path& dir,
                                  bool allow_build_change, MergeSummary& summary) {
  auto store = RunStore::create(dir);
  if (!store) return std::unexpected(store.error());
  for (const auto& r : merged) {
    if (auto a = store->append_as_written(r); !a) return std::unexpected(a.error());
  }
  summary.records = merged.size();

  // Manifest: the first one's provenance; cells joined; logs copied.
  Manifest manifest = manifests[0];
  manifest.shard.reset();
  manifest.journaled.reset();  // the merged run has no journal: its cells are all in its manifest
  std::vector<ManifestCell> cells;
  std::set<core::CellKey> cell_keys;
  bool complete = true;
  nlohmann::json from = nlohmann::json::array();
  for (std::size_t i = 0; i < manifests.size(); ++i) {
    const Manifest& m = manifests[i];
    nlohmann::json shard;
    if (m.shard) shard = {{"index", m.shard->index}, {"count", m.shard->count}};
    from.push_back({{"dir", std::filesystem::absolute(inputs[i]).string()}, {"shard", shard}, {"status", m.status_text()}});
    if (allow_build_change) from.back()["server_build"] = server_build(m);
    complete = complete && m.status_text() == "complete";
    for (const auto& c : m.cell_list()) {
      if (superseded(i, c.key())) continue;
      if (cell_keys.insert(c.key()).second) cells.push_back(c);
    }
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(inputs[i] / "logs", ec)) {
      auto dest = dir / "logs" / f.path().filename();
      if (std::filesystem::exists(dest)) dest = dir / "logs" / (f.path().stem().string() + "-" + std::to_string(i) + ".log");
      std::filesystem::copy_file(f.path(), dest, ec);
    }
  }
  summary.missing_shards = missing_shards(manifests);
  complete = complete && summary.missing_shards.empty();

  summary.cells = cells.size();
  manifest.cells = cells;
  manifest.merged_from = from;
  if (allow_build_change) manifest.build_change_allowed = true;
  manifest.status = complete ? "complete" : "partial";
  manifest.updated_at = core::iso8601(std::chrono::system_clock::now());
  if (auto w = store->write_manifest(manifest); !w) return std::unexpected(w.error());
  return {};
}

}  // namespace

core::Expected<MergeSummary> merge_runs(const std::vector<std::filesystem::path>& inputs,
                                        const std::filesystem::path& output, bool allow_build_change) {
  if (inputs.size() < 2) return core::fail(core::ErrorKind::invalid, "merge needs at least two run directories");
  const std::filesystem::path staging = staging_dir(output);
  if (auto ready = prepare_output(output, staging); !ready) return std::unexpected(ready.error());
  MergeSummary summary;
  summary.runs = inputs.size();
  std::vector<RunIdentity> identities;
  auto manifests = read_manifests(inputs, identities);
  if (!manifests) return std::unexpected(manifests.error());
  if (auto same = check_one_identity(inputs, identities, allow_build_change); !same) return std::unexpected(same.error());
  const Superseded superseded(*manifests);
  auto merged = merge_records(inputs, superseded, summary);
  if (!merged) return std::unexpected(merged.error());

  auto written = write_merged(inputs, *manifests, *merged, superseded, staging, allow_build_change, summary);
  std::error_code ec;
  if (written) {
    std::filesystem::rename(staging, output, ec);
    if (ec) written = core::fail(core::ErrorKind::io, "cannot rename " + staging.string() + " to " + output.string() +
                                                          ": " + ec.message());
  }
  if (!written) {
    std::filesystem::remove_all(staging, ec);
    return std::unexpected(written.error());
  }
  return summary;
}

}  // namespace kvsweep::sweep
