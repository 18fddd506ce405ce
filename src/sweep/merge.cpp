#include "kvsweep/sweep/merge.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "kvsweep/core/clock.hpp"
#include "kvsweep/sweep/cell_journal.hpp"
#include "kvsweep/sweep/run_store.hpp"

namespace kvsweep::sweep {

namespace {

// What must agree between two ok records of one triple: what the server produced and
// what was measured (not when, or how long it took).
nlohmann::json comparable(const nlohmann::json& r) {
  return {{"response", r.value("response", nlohmann::json())}, {"metrics", r.value("metrics", nlohmann::json())}};
}

}  // namespace

core::Expected<MergeSummary> merge_runs(const std::vector<std::filesystem::path>& inputs,
                                        const std::filesystem::path& output) {
  if (inputs.size() < 2) return core::fail(core::ErrorKind::invalid, "merge needs at least two run directories");
  MergeSummary summary;
  summary.runs = inputs.size();
  std::vector<nlohmann::json> manifests;
  for (const auto& dir : inputs) {
    if (auto pid = RunStore::lock_holder(dir))
      return core::fail(core::ErrorKind::invalid, dir.string() + " is still running (kvsweep pid " + *pid +
                                                      " holds its lock); merge it once that run has ended");
    auto m = RunStore::read_manifest(dir);
    if (!m) return core::fail(core::ErrorKind::invalid, dir.string() + ": not a run directory (" + m.error().message + ")");
    // Cells a crash kept out of the manifest are in the shard's journal.
    if (auto journal = RunStore::read_cells(dir); !journal.empty())
      (*m)["cells"] = rebuild_cells(m->value("cells", nlohmann::json::array()), journal);
    manifests.push_back(*m);
  }
  const std::string hash = manifests[0].value("config_hash", "");
  for (std::size_t i = 1; i < manifests.size(); ++i) {
    std::string h = manifests[i].value("config_hash", "");
    if (h != hash) {
      return core::fail(core::ErrorKind::invalid, "refusing to merge runs of different configs: " + inputs[0].string() +
                                                      " has config hash " + hash + ", " + inputs[i].string() + " has " + h);
    }
  }

  // Support cells: a shard's copy of a reference cell another shard owns. When the owner is
  // among the inputs, its records stand and the copies are dropped unread: they served that
  // shard's comparisons and may differ (another node, another GPU).
  std::vector<std::set<std::string>> support(inputs.size());  // per input: its support cells
  std::set<std::string> owned;                                 // cells some input owns
  for (std::size_t i = 0; i < manifests.size(); ++i) {
    for (const auto& c : manifests[i].value("cells", nlohmann::json::array())) {
      if (c.value("support", false)) support[i].insert(cell_key(c));
      else owned.insert(cell_key(c));
    }
  }
  auto superseded = [&](std::size_t i, const nlohmann::json& cell) {
    const std::string key = cell_key(cell);
    return support[i].contains(key) && owned.contains(key);
  };

  // Records: union; an ok triple seen twice must say the same thing.
  std::map<std::string, std::pair<nlohmann::json, std::string>> ok;  // triple -> (record, from)
  std::vector<nlohmann::json> merged;
  std::set<std::string> seen_lines;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto records = RunStore::read_records(inputs[i]);
    if (!records) return std::unexpected(records.error());
    for (const auto& r : *records) {
      if (superseded(i, r.value("cell", nlohmann::json::object()))) {
        ++summary.support_dropped;
        continue;
      }
      std::string line = r.dump();
      if (!seen_lines.insert(line).second) {
        ++summary.duplicates_dropped;
        continue;
      }
      if (r.value("status", "") == "ok") {
        std::string key = triple_key_of(r);
        auto it = ok.find(key);
        if (it != ok.end()) {
          if (comparable(it->second.first) != comparable(r)) {
            return core::fail(core::ErrorKind::invalid,
                              "refusing to merge: " + cell_label(r["cell"]) + " " + r.value("probe", "") + "/" +
                                  r.value("item", "") + " has different results in " + it->second.second + " and " +
                                  inputs[i].string());
          }
          ++summary.duplicates_dropped;
          continue;
        }
        ok.emplace(key, std::make_pair(r, inputs[i].string()));
      }
      merged.push_back(r);
    }
  }

  auto store = RunStore::create(output);
  if (!store) return std::unexpected(store.error());
  for (const auto& r : merged) {
    if (auto a = store->append(r); !a) return std::unexpected(a.error());
  }
  summary.records = merged.size();

  // Manifest: the first one's provenance; cells joined; logs copied.
  nlohmann::json manifest = manifests[0];
  manifest.erase("shard");
  nlohmann::json cells = nlohmann::json::array();
  std::set<std::string> cell_keys;
  bool complete = true;
  nlohmann::json from = nlohmann::json::array();
  for (std::size_t i = 0; i < manifests.size(); ++i) {
    from.push_back({{"dir", std::filesystem::absolute(inputs[i]).string()},
                    {"shard", manifests[i].value("shard", nlohmann::json())},
                    {"status", manifests[i].value("status", "")}});
    complete = complete && manifests[i].value("status", "") == "complete";
    for (const auto& c : manifests[i].value("cells", nlohmann::json::array())) {
      if (superseded(i, c)) continue;
      if (cell_keys.insert(cell_key(c)).second) cells.push_back(c);
    }
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(inputs[i] / "logs", ec)) {
      auto dest = output / "logs" / f.path().filename();
      if (std::filesystem::exists(dest)) dest = output / "logs" / (f.path().stem().string() + "-" + std::to_string(i) + ".log");
      std::filesystem::copy_file(f.path(), dest, ec);
    }
  }
  // Shards of one N that leave some index out: the merged run lacks their cells.
  std::set<int> indices;
  int count = 0;
  for (const auto& m : manifests) {
    if (!m.contains("shard")) continue;
    indices.insert(m["shard"].value("index", 0));
    count = std::max(count, m["shard"].value("count", 0));
  }
  for (int s = 0; s < count; ++s)
    if (!indices.contains(s)) summary.missing_shards.push_back(std::to_string(s) + "/" + std::to_string(count));
  complete = complete && summary.missing_shards.empty();

  summary.cells = cells.size();
  manifest["cells"] = cells;
  manifest["merged_from"] = from;
  manifest["status"] = complete ? "complete" : "partial";
  manifest["updated_at"] = core::iso8601(std::chrono::system_clock::now());
  if (auto w = store->write_manifest(manifest); !w) return std::unexpected(w.error());
  return summary;
}

}  // namespace kvsweep::sweep
