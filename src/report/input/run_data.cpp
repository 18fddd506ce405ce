#include "kvsweep/report/input/run_data.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "kvsweep/report/format.hpp"
#include "kvsweep/report/input/json_fields.hpp"
#include "kvsweep/probe/probe_entry.hpp"
#include "kvsweep/report/input/run_grid.hpp"
#include "kvsweep/stats/precision.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Greedy probes give the same answers on a rerun of the same build; sampled ones only with the same seed.
bool infer_deterministic(const std::string& kind, std::optional<bool> recorded, const nlohmann::json& config) {
  if (recorded) return *recorded;
  if (config.is_object() && config.contains("temperature") && config["temperature"].is_number()) {
    return config["temperature"].get<double>() == 0.0;
  }
  return kind == "complete" || kind == "recall" || kind == "divergence" || kind == "kld" || kind == "toolcall";
}

/// A metric the records hold and the manifest does not list: on a probe with declarations it is
/// reported as an undirected diagnostic (never gated); on an older run it is inferred as before.
void add_metric(ProbeDef& probe, const std::string& name) {
  for (const auto& m : probe.metrics) {
    if (m.name == name) return;
  }
  probe.metrics.push_back(probe.declared ? probe::diagnostic(name, probe::MetricKind::continuous)
                                         : probe::quality(name, probe::Direction::higher_better,
                                                          probe::MetricKind::continuous));
}

probe::MetricSpec inferred_metric(const std::string& name, bool higher_is_better) {
  return probe::quality(name, higher_is_better ? probe::Direction::higher_better : probe::Direction::lower_better,
                        probe::MetricKind::continuous);
}

/// Phase 1, probes: the manifest's list, matched to their config entry by name (default: the kind).
core::Expected<std::vector<ProbeDef>> read_probes(const sweep::Manifest& m, const nlohmann::json& config) {
  std::vector<ProbeDef> probes;
  const nlohmann::json config_probes = config.is_object() ? config.value("probes", nlohmann::json::array())
                                                          : nlohmann::json::array();
  if (!m.probes.is_array()) return probes;
  for (const auto& p : m.probes) {
    auto read = probe::ProbeEntry::from_json(p, "manifest.json: probes");
    if (!read) return std::unexpected(read.error());
    if (!*read) continue;
    const probe::ProbeEntry& entry = **read;
    ProbeDef def;
    def.name = entry.name;
    def.kind = entry.kind;
    def.items = entry.items.value_or(0);
    def.declared = entry.declared;
    def.metrics = entry.metrics;
    for (const auto& [name, higher] : entry.named) def.metrics.push_back(inferred_metric(name, higher));
    if (entry.calibration) {
      def.calibration_metric = entry.calibration->metric;
      def.calibration_lo = entry.calibration->lo;
      def.calibration_hi = entry.calibration->hi;
    }
    if (config_probes.is_array()) {
      for (const auto& c : config_probes) {
        if (!c.is_object()) continue;
        const std::string cname = c.contains("name") ? string_field(c, "name") : string_field(c, "kind");
        if (cname == def.name) def.config = c;
      }
    }
    def.deterministic = infer_deterministic(def.kind, entry.deterministic, def.config);
    def.items_max = entry.items_max;
    if (def.config.is_object() && def.config.contains("gate") && def.config["gate"].is_array())
      for (const auto& g : def.config["gate"])
        if (g.is_string()) def.gate.push_back(g.get<std::string>());
    probes.push_back(std::move(def));
  }
  return probes;
}

/// Phase 2, cells: the manifest's list.
std::vector<CellDef> read_cells(const sweep::Manifest& m) {
  std::vector<CellDef> cells;
  for (const auto& c : m.cell_list()) {
    CellDef cell;
    cell.set_key(c.key());
    cell.id = c.id.value_or("");
    if (cell.id.empty()) cell.id = cell.key().id();
    cell.is_reference = c.reference();
    cell.outcome = c.outcome_text();
    if (cell.outcome.empty()) cell.outcome = "unknown";
    cell.message = c.message.value_or("");
    const sweep::CellEffective effective = c.effective.value_or(sweep::CellEffective{});
    cell.kv_mib = effective.kv_mib.value_or(kNaN);
    cell.rotation = rotation_label(effective.attn_rot_k.value_or(-1), effective.attn_rot_v.value_or(-1));
    cell.path = effective.path.value_or("");
    cell.path_reason = effective.path_reason.value_or("");
    if (effective.memory.is_array()) {
      for (const auto& buffers : effective.memory) {
        if (!buffers.is_object()) continue;
        cell.memory.push_back({string_field(buffers, "device"), buffers.value("gpu", false), number_field(buffers, "model_mib"),
                               number_field(buffers, "kv_mib"), number_field(buffers, "compute_mib")});
      }
    }
    cell.ready_s = c.ready_s.value_or(kNaN);
    cells.push_back(std::move(cell));
  }
  return cells;
}

std::optional<std::size_t> find_cell_in(const std::vector<CellDef>& cells, const std::string& group,
                                        const std::string& type_k, const std::string& type_v) {
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& c = cells[i];
    if (c.group() == group && c.type_k == type_k && c.type_v == type_v) return i;
  }
  return std::nullopt;
}

/// The records of one (cell, probe, item): the last one, the last ok one, and how many.
struct Seen {
  std::size_t last = 0;
  std::optional<std::size_t> last_ok;
  std::size_t attempts = 0;
};
using SeenMap = std::map<std::tuple<std::size_t, std::string, std::string>, Seen>;
using ItemMap = std::map<std::pair<std::size_t, std::string>, std::vector<ItemOutcome>>;

/// Phase 3, records: each (cell, probe, item)'s records; a cell or probe only the records name is
/// added (an unknown outcome; a probe with its metrics as the records hold them), unless the cell is
/// outside the config's grid: such a record is not counted, and its cell is listed in `outside`.
SeenMap read_records(const std::vector<probe::Record>& records, std::vector<CellDef>& cells,
                     std::vector<ProbeDef>& probes, const sweep::Manifest& m, const nlohmann::json& config,
                     std::vector<OutsideCell>& outside) {
  SeenMap seen;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    const std::string& probe = r.probe;
    const std::string& item = r.item;
    if (probe.empty()) continue;
    const core::CellKey& key = r.cell;
    auto cell = find_cell_in(cells, key.group(), key.type_k, key.type_v);
    if (!cell && !in_config_grid(m, config, key)) {
      auto known = std::find_if(outside.begin(), outside.end(), [&](const OutsideCell& o) { return o.cell == key; });
      if (known == outside.end()) outside.push_back({key, 1});
      else ++known->records;
      continue;
    }
    if (!cell) {
      CellDef def;
      def.set_key(key);
      def.id = def.key().id();
      def.outcome = "unknown";
      def.kv_mib = def.ready_s = kNaN;
      cells.push_back(std::move(def));
      cell = cells.size() - 1;
    }
    auto def = std::find_if(probes.begin(), probes.end(), [&](const ProbeDef& p) { return p.name == probe; });
    if (def == probes.end()) {
      ProbeDef added;
      added.name = probe;
      added.kind = r.kind;
      added.deterministic = infer_deterministic(added.kind, std::nullopt, nullptr);
      probes.push_back(std::move(added));
      def = probes.end() - 1;
    }
    for (const auto& [name, value] : r.metrics.items()) {
      if (value.is_number() || value.is_boolean()) add_metric(*def, name);
    }
    Seen& s = seen[{*cell, probe, item}];
    s.last = i;
    ++s.attempts;
    if (r.ok()) s.last_ok = i;
  }
  return seen;
}

/// Phase 4, the record that counts per (cell, probe, item): the last ok one, else the last one;
/// each (cell, probe)'s items in natural order.
void pick_records(const std::vector<probe::Record>& records, const SeenMap& seen, ItemMap& items,
                  std::vector<bool>& counts) {
  counts.assign(records.size(), false);
  for (const auto& [key, s] : seen) {
    const auto& [cell, probe, item] = key;
    const std::size_t used = s.last_ok.value_or(s.last);
    counts[used] = true;
    const auto& r = records[used];
    ItemOutcome result;
    result.item = item;
    result.ok = s.last_ok.has_value();
    result.status = r.status_text();
    result.error = r.error.value_or("");
    result.attempts = s.attempts;
    result.record = used;
    result.settled = !result.ok && r.settled();
    if (result.ok) {
      for (const auto& [name, value] : r.metrics.items()) {
        if (value.is_boolean()) {
          result.metrics[name] = value.get<bool>() ? 1.0 : 0.0;
        } else if (value.is_number()) {
          result.metrics[name] = value.get<double>();
        }
      }
      result.response = r.response;
    }
    items[{cell, probe}].push_back(std::move(result));
  }
  for (auto& [key, list] : items) {
    std::sort(list.begin(), list.end(),
              [](const ItemOutcome& a, const ItemOutcome& b) { return natural_less(a.item, b.item); });
  }
}

/// Phase 5, older runs: a metric of a probe without declarations is binary when every value the
/// run holds is 0 or 1.
void infer_binary(std::vector<ProbeDef>& probes, const ItemMap& items) {
  for (auto& probe : probes) {
    if (probe.declared) continue;
    for (auto& metric : probe.metrics) {
      bool any = false, binary = true;
      for (const auto& [key, list] : items) {
        if (key.second != probe.name) continue;
        for (const auto& item : list) {
          auto it = item.metrics.find(metric.name);
          if (it == item.metrics.end() || !std::isfinite(it->second)) continue;
          any = true;
          binary = binary && (it->second == 0.0 || it->second == 1.0);
        }
      }
      if (any && binary) metric.kind = probe::MetricKind::binary;
    }
  }
}

}  // namespace

core::Expected<RunData> RunData::load(const std::filesystem::path& dir) {
  auto manifest = sweep::RunStore::read_manifest(dir);
  if (!manifest) return std::unexpected(manifest.error());
  auto records = sweep::RunStore::read_records(dir);
  if (!records) return std::unexpected(records.error());
  return from(std::move(*manifest), std::move(*records));
}

core::Expected<RunData> RunData::from(nlohmann::json manifest, const std::vector<nlohmann::json>& records) {
  return from(std::move(manifest), probe::records_from_json(records));
}

core::Expected<RunData> RunData::from(nlohmann::json manifest, std::vector<probe::Record> records) {
  std::optional<sweep::Manifest> read = sweep::Manifest::from_json(manifest);
  if (!read) return core::fail(core::ErrorKind::parse, "manifest.json is not a JSON object");
  return from(std::move(*read), std::move(records));
}

core::Expected<RunData> RunData::from(sweep::Manifest manifest, std::vector<probe::Record> records) {
  RunData d;
  d.m_manifest = std::move(manifest);
  d.m_records = std::move(records);
  const sweep::Manifest& m = d.m_manifest;
  const nlohmann::json config = m.config.is_null() ? nlohmann::json::object() : m.config;

  auto probes = read_probes(m, config);
  if (!probes) return std::unexpected(probes.error());
  d.m_probes = std::move(*probes);
  d.m_cells = read_cells(m);
  const auto seen = read_records(d.m_records, d.m_cells, d.m_probes, m, config, d.m_outside);
  pick_records(d.m_records, seen, d.m_items, d.m_counts);
  infer_binary(d.m_probes, d.m_items);
  order_groups(m, config, d.m_cells, d.m_models, d.m_variants, d.m_groups);
  const nlohmann::json grid = config.is_object() ? config.value("grid", nlohmann::json::object()) : nlohmann::json();
  order_axes(grid, d.m_cells, d.m_k_types, d.m_v_types);
  infer_reference(grid, d.m_cells);
  return d;
}

std::string RunData::name() const {
  const std::string n = m_manifest.name.value_or("");
  return n.empty() ? "run" : n;
}

const ProbeDef* RunData::probe(const std::string& name) const {
  for (const auto& p : m_probes) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::size_t> RunData::grid_order() const {
  auto position = [](const std::vector<std::string>& list, const std::string& value) {
    return static_cast<std::size_t>(std::find(list.begin(), list.end(), value) - list.begin());
  };
  std::vector<std::size_t> order(m_cells.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const CellDef& x = m_cells[a];
    const CellDef& y = m_cells[b];
    return std::tuple(position(m_groups, x.group()), position(m_k_types, x.type_k), position(m_v_types, x.type_v)) <
           std::tuple(position(m_groups, y.group()), position(m_k_types, y.type_k), position(m_v_types, y.type_v));
  });
  return order;
}

std::pair<std::string, std::string> RunData::group_parts(const std::string& group) const {
  for (const auto& c : m_cells)
    if (c.group() == group) return {c.model, c.variant};
  return {group, ""};
}

std::optional<std::size_t> RunData::reference(const std::string& group) const {
  for (std::size_t i = 0; i < m_cells.size(); ++i) {
    if (m_cells[i].group() == group && m_cells[i].is_reference) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> RunData::find_cell(const std::string& group, const std::string& type_k,
                                              const std::string& type_v) const {
  return find_cell_in(m_cells, group, type_k, type_v);
}

const std::vector<ItemOutcome>& RunData::items(std::size_t cell, const std::string& probe) const {
  static const std::vector<ItemOutcome> kNone;
  auto it = m_items.find({cell, probe});
  return it == m_items.end() ? kNone : it->second;
}

Values RunData::values(std::size_t cell, const std::string& probe, const std::string& metric) const {
  Values out;
  for (const auto& item : items(cell, probe)) {
    if (!item.ok) continue;
    auto it = item.metrics.find(metric);
    if (it == item.metrics.end() || !std::isfinite(it->second)) continue;
    out.items.push_back(item.item);
    out.values.push_back(it->second);
  }
  return out;
}

}  // namespace kvsweep::report
