#include "kvsweep/report/output/csv.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <string_view>

#include "kvsweep/probe/record_fields.hpp"
#include "kvsweep/report/analysis/cost.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

/// A value as long.csv writes it: strings as they are, booleans 1/0, numbers shortest, null empty.
std::string value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) return shortest(v.get<double>());
  if (v.is_null()) return "";
  return v.dump();
}

std::string json_text(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  return value_text(j[key]);
}

/// One record as long.csv sees it: the record, its index in the run, its cell in RunData.
struct LongRow {
  const probe::Record& record;
  std::size_t index;
  std::optional<std::size_t> cell;
};

/// One column of long.csv: its header and its text in a row. Header and rows come from the one list.
struct LongColumn {
  std::string header;
  std::function<std::string(const LongRow&)> text;
};

/// A column holding the record's field `name` (the record's schema, probe/record_fields), as read back.
LongColumn field_column(std::string_view name) {
  const probe::RecordField* field = probe::record_field(name);
  return {std::string(name), [field](const LongRow& row) {
            const auto value = field->value(row.record);
            return csv_field(value ? value_text(*value) : "");
          }};
}

/// A column holding key `key` of the record's cell (model, variant, type_k, type_v).
LongColumn cell_column(const char* key) {
  return {key, [key](const LongRow& row) { return csv_field(json_text(row.record.cell.to_json(), key)); }};
}

/// Tokens per second of one record: the server's counts over its times (blank when nothing was evaluated).
std::string tokens_per_second(const nlohmann::json& t, const char* n, const char* ms) {
  const auto number = [&t](const char* key) {
    return t.is_object() && t.contains(key) && t[key].is_number() ? t[key].get<double>() : 0.0;
  };
  const double tokens = number(n), millis = number(ms);
  return tokens > 0 && millis > 0 ? shortest(tokens / millis * 1000.0) : std::string();
}

/// long.csv's columns, in order: the run, the record's cell and envelope, the server's timings, the
/// cell's costs and path, then one column per metric the run declares.
std::vector<LongColumn> long_columns(const RunData& data, const CostTable& costs) {
  std::vector<LongColumn> columns;
  const std::string run = csv_field(data.name());
  columns.push_back({"run", [run](const LongRow&) { return run; }});
  columns.push_back(cell_column("model"));
  // A run with variants has a variant column after the model; one without keeps its columns.
  if (!data.variants().empty()) columns.push_back(cell_column("variant"));
  columns.push_back(cell_column("type_k"));
  columns.push_back(cell_column("type_v"));
  columns.push_back({"cell", [&data](const LongRow& row) { return csv_field(row.cell ? data.cells()[*row.cell].id : ""); }});
  for (const char* name : {"probe", "kind", "item", "status", "attempt"}) columns.push_back(field_column(name));
  columns.push_back({"counts", [&data](const LongRow& row) { return std::string(data.counts(row.index) ? "1" : "0"); }});
  columns.push_back(field_column("wall_s"));
  for (const char* t : {"prompt_n", "cache_n", "prompt_ms", "predicted_n", "predicted_ms"})
    columns.push_back({t, [t](const LongRow& row) { return json_text(row.record.timings, t); }});
  columns.push_back({"prompt_tps", [](const LongRow& row) {
                       return tokens_per_second(row.record.timings, "prompt_n", "prompt_ms");
                     }});
  columns.push_back({"decode_tps", [](const LongRow& row) {
                       return tokens_per_second(row.record.timings, "predicted_n", "predicted_ms");
                     }});
  columns.push_back({"kv_bytes_per_token", [&costs](const LongRow& row) {
                       const CellCost* cost = row.cell ? costs.find(*row.cell) : nullptr;
                       return cost ? shortest(cost->kv_bytes_per_token) : std::string();
                     }});
  // The path column only when the manifest recorded paths (a run written before them keeps its columns).
  if (std::any_of(data.cells().begin(), data.cells().end(), [](const CellDef& c) { return !c.path.empty(); }))
    columns.push_back({"path", [&data](const LongRow& row) { return csv_field(row.cell ? data.cells()[*row.cell].path : ""); }});
  columns.push_back(field_column("time"));
  columns.push_back(field_column("error"));
  std::vector<std::string> metrics;
  for (const auto& probe : data.probes())
    for (const auto& metric : probe.metrics)
      if (std::find(metrics.begin(), metrics.end(), metric.name) == metrics.end()) metrics.push_back(metric.name);
  for (const auto& m : metrics)
    columns.push_back({csv_field(m), [m](const LongRow& row) { return json_text(row.record.metrics, m.c_str()); }});
  return columns;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> grid_metrics(const RunData& data, const RunSummary& summary) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& probe : data.probes()) {
    for (const auto& metric : probe.metrics) {
      const bool any = std::any_of(summary.grids.begin(), summary.grids.end(), [&](const GridStats& g) {
        return g.probe == probe.name && g.metric == metric.name;
      });
      if (any) out.emplace_back(probe.name, metric.name);
    }
  }
  return out;
}

std::string write_grid_csv(const RunData& data, const RunSummary& summary, const std::string& probe,
                           const std::string& metric) {
  std::string out = "model,ctk\\ctv";
  for (const auto& v : data.v_types()) out += "," + csv_field(v);
  out += "\n";
  for (const auto& model : data.groups()) {
    for (const auto& k : data.k_types()) {
      bool any_cell = false;
      std::string row = csv_field(model) + "," + csv_field(k);
      for (const auto& v : data.v_types()) {
        row += ",";
        const auto cell = data.find_cell(model, k, v);
        if (!cell) continue;
        any_cell = true;
        const MetricStats* m = summary.find(*cell, probe, metric);
        if (m != nullptr && m->summary.n > 0) row += shortest(m->summary.mean);
      }
      if (any_cell) out += row + "\n";
    }
  }
  return out;
}

std::string write_long_csv(const RunData& data) {
  const CostTable costs = cell_costs(data);
  const std::vector<LongColumn> columns = long_columns(data, costs);
  std::string out;
  for (std::size_t c = 0; c < columns.size(); ++c) out += (c ? "," : "") + columns[c].header;
  out += "\n";
  const auto& records = data.records();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const probe::Record& r = records[i];
    const LongRow row{r, i, data.find_cell(r.cell.group(), r.cell.type_k, r.cell.type_v)};
    for (std::size_t c = 0; c < columns.size(); ++c) out += (c ? "," : "") + columns[c].text(row);
    out += "\n";
  }
  return out;
}

}  // namespace kvsweep::report
