#include "kvsweep/report/output/csv.hpp"

#include <algorithm>

#include "kvsweep/report/analysis/cost.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

std::string json_text(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const auto& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) return shortest(v.get<double>());
  if (v.is_null()) return "";
  return v.dump();
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
  std::vector<std::string> metric_columns;
  for (const auto& probe : data.probes()) {
    for (const auto& metric : probe.metrics) {
      if (std::find(metric_columns.begin(), metric_columns.end(), metric.name) == metric_columns.end()) {
        metric_columns.push_back(metric.name);
      }
    }
  }
  static const char* const kTimings[] = {"prompt_n", "cache_n", "prompt_ms", "predicted_n", "predicted_ms"};
  // A run with variants has a variant column after the model; one without keeps its columns.
  const bool variants = !data.variants().empty();
  std::string out = std::string("run,model,") + (variants ? "variant," : "") +
                    "type_k,type_v,cell,probe,kind,item,status,attempt,counts,wall_s";
  for (const char* t : kTimings) out += std::string(",") + t;
  // The path column only when the manifest recorded paths (a run written before them keeps its columns).
  const bool paths = std::any_of(data.cells().begin(), data.cells().end(), [](const CellDef& c) { return !c.path.empty(); });
  out += std::string(",prompt_tps,decode_tps,kv_bytes_per_token") + (paths ? ",path" : "") + ",time,error";
  for (const auto& m : metric_columns) out += "," + csv_field(m);
  out += "\n";

  const std::string run = csv_field(data.name());
  const CostTable costs = cell_costs(data);
  // Tokens per second of one record: the server's counts over its times (blank when nothing was evaluated).
  const auto tps = [](const nlohmann::json& t, const char* n, const char* ms) {
    const auto number = [&t](const char* key) {
      return t.is_object() && t.contains(key) && t[key].is_number() ? t[key].get<double>() : 0.0;
    };
    const double tokens = number(n), millis = number(ms);
    return tokens > 0 && millis > 0 ? shortest(tokens / millis * 1000.0) : std::string();
  };
  const auto& records = data.records();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const probe::Record& r = records[i];
    const auto cell = data.find_cell(r.cell.group(), r.cell.type_k, r.cell.type_v);
    std::vector<std::string> fields = {
        run,
        csv_field(r.cell.model),
        csv_field(r.cell.type_k),
        csv_field(r.cell.type_v),
        csv_field(cell ? data.cells()[*cell].id : ""),
        csv_field(r.probe),
        csv_field(r.kind),
        csv_field(r.item),
        csv_field(r.status),
        std::to_string(r.attempt),
        data.counts(i) ? "1" : "0",
        shortest(r.wall_s),
    };
    if (variants) fields.insert(fields.begin() + 2, csv_field(r.cell.variant));
    const nlohmann::json& timings = r.timings;
    for (const char* t : kTimings) fields.push_back(json_text(timings, t));
    fields.push_back(tps(timings, "prompt_n", "prompt_ms"));
    fields.push_back(tps(timings, "predicted_n", "predicted_ms"));
    const CellCost* cost = cell ? costs.find(*cell) : nullptr;
    fields.push_back(cost ? shortest(cost->kv_bytes_per_token) : "");
    if (paths) fields.push_back(csv_field(cell ? data.cells()[*cell].path : ""));
    fields.push_back(csv_field(r.time));
    fields.push_back(csv_field(r.error.value_or("")));
    const nlohmann::json& metrics = r.metrics;
    for (const auto& m : metric_columns) fields.push_back(json_text(metrics, m.c_str()));
    for (std::size_t f = 0; f < fields.size(); ++f) {
      if (f) out += ",";
      out += fields[f];
    }
    out += "\n";
  }
  return out;
}

}  // namespace kvsweep::report
