#include "kvsweep/report/output/summary_json.hpp"

#include <algorithm>

#include "kvsweep/report/analysis/cost.hpp"
#include "kvsweep/report/analysis/variant_effect.hpp"
#include "kvsweep/stats/gradient.hpp"

namespace kvsweep::report {

namespace {

using ojson = nlohmann::ordered_json;

ojson interval(const stats::ConfidenceInterval& ci) { return ojson::array({ci.lower, ci.upper}); }

ojson gradient_json(const stats::GradientResult& g) {
  return ojson{{"n", g.n}, {"rho", g.rho}, {"p", g.p}, {"verdict", std::string(stats::to_string(g.verdict))}};
}

ojson axis_json(const std::vector<AxisMean>& axis, const char* key) {
  ojson out = ojson::array();
  for (const auto& a : axis) {
    out.push_back({{key, a.type}, {"n", a.summary.n}, {"mean", a.summary.mean}, {"ci95", interval(a.ci)}});
  }
  return out;
}

ojson reference_json(const ReferenceTest& t, const std::string& reference_id) {
  ojson out{{"reference", reference_id}, {"test", t.test},   {"n_pairs", t.n_pairs},
            {"delta", t.delta},          {"delta_ci95", interval(t.delta_ci)}, {"p", t.p},
            {"p_holm", t.p_holm},        {"significant", t.significant}};
  if (t.test == "mcnemar") {
    out["b"] = t.b;
    out["c"] = t.c;
  } else {
    out["w_plus"] = t.w_plus;
    out["w_minus"] = t.w_minus;
  }
  return out;
}

/// The probes as the run declared them, with each metric's role.
ojson probes_json(const RunData& data, const RunSummary& summary) {
  ojson probes = ojson::array();
  for (const auto& p : data.probes()) {
    const MetricRoles* roles = summary.roles_of(p.name);
    ojson metrics = ojson::array();
    for (const auto& m : p.metrics) {
      const bool binary =
          roles && std::find(roles->binary.begin(), roles->binary.end(), m.name) != roles->binary.end();
      ojson entry = ojson::parse(probe::to_json(m).dump());
      entry["binary"] = binary;
      metrics.push_back(std::move(entry));
    }
    probes.push_back({{"name", p.name},
                      {"kind", p.kind},
                      {"items", p.items},
                      {"deterministic", p.deterministic},
                      {"declared", p.declared},
                      {"pass_metric", roles ? roles->pass_metric : ""},
                      {"main_metric", roles ? roles->main_metric : ""},
                      {"metrics", std::move(metrics)}});
  }
  return probes;
}

/// Every cell: its types, outcome, KV size, attention path and buffers per device.
ojson cells_json(const RunData& data) {
  ojson cells = ojson::array();
  for (const auto& c : data.cells()) {
    cells.push_back({{"id", c.id},
                     {"model", c.model},
                     {"type_k", c.type_k},
                     {"type_v", c.type_v},
                     {"is_reference", c.is_reference},
                     {"outcome", c.outcome},
                     {"message", c.message},
                     {"kv_mib", c.kv_mib}});
    if (!c.variant.empty()) cells.back()["variant"] = c.variant;
    // The attention path and the buffers per device (MiB at the cell's -c), when the manifest has them.
    if (!c.path.empty()) {
      cells.back()["path"] = c.path;
      cells.back()["path_reason"] = c.path_reason;
    }
    // The settings its server reported (types, flash attention, rotation, n_ctx): compare explains by them.
    for (const auto& m : data.manifest().cell_list())
      if (m.id.value_or("") == c.id && m.effective) {
        const nlohmann::json reported = sweep::to_json(*m.effective);
        ojson effective = ojson::object();
        for (const char* key : {"found", "declared"})
          if (reported.contains(key)) effective[key] = ojson::parse(reported[key].dump());
        for (const char* key : sweep::kReportedSettings)
          if (reported.contains(key)) effective[key] = ojson::parse(reported[key].dump());
        cells.back()["effective"] = std::move(effective);
      }
    if (!c.memory.empty()) {
      ojson memory = ojson::array();
      for (const auto& d : c.memory)
        memory.push_back({{"device", d.device}, {"gpu", d.gpu}, {"model_mib", d.model_mib}, {"kv_mib", d.kv_mib},
                          {"compute_mib", d.compute_mib}});
      cells.back()["memory"] = std::move(memory);
    }
  }
  return cells;
}

/// Per cell and probe: item counts, and per metric its statistics, test against the reference and values.
ojson results_json(const RunData& data, const RunSummary& summary) {
  ojson results = ojson::array();
  for (const auto& r : summary.results) {
    const CellDef& cell = data.cells()[r.cell];
    const auto ref = data.reference(cell.group());
    const std::string ref_id = ref ? data.cells()[*ref].id : "";
    ojson metrics = ojson::object();
    for (const auto& m : r.metrics) {
      ojson values = ojson::object();
      for (std::size_t i = 0; i < m.values.items.size(); ++i) values[m.values.items[i]] = m.values.values[i];
      ojson entry{{"n", m.summary.n},     {"mean", m.summary.mean}, {"sd", m.summary.sd},
                  {"min", m.summary.min}, {"max", m.summary.max},   {"median", m.summary.median},
                  {"ci95", interval(m.ci)}};
      if (m.vs_reference) entry["vs_reference"] = reference_json(*m.vs_reference, ref_id);
      entry["values"] = std::move(values);
      metrics[m.metric] = std::move(entry);
    }
    ojson result = {{"cell", cell.id},
                    {"model", cell.model},
                    {"type_k", cell.type_k},
                    {"type_v", cell.type_v},
                    {"probe", r.probe},
                    {"outcome", cell.outcome},
                    {"items_ok", r.items_ok},
                    {"items_failed", r.failed_items.size()},
                       {"failed_items", r.failed_items}};
    if (r.items_settled > 0) result["items_settled"] = r.items_settled;  // adaptive runs only
    result["metrics"] = std::move(metrics);
    if (!cell.variant.empty()) result["variant"] = cell.variant;
    results.push_back(std::move(result));
  }
  return results;
}

/// Per grid and metric: the precision gradients and the K / V marginal means.
ojson grids_json(const RunData& data, const RunSummary& summary) {
  ojson grids = ojson::array();
  for (const auto& g : summary.grids) {
    const auto [model, variant] = data.group_parts(g.model);
    grids.push_back({{"model", model},
                     {"probe", g.probe},
                     {"metric", g.metric},
                     {"higher_is_better", g.higher_is_better},
                     {"gradient", gradient_json(g.gradient)},
                     {"k_gradient", gradient_json(g.k_gradient)},
                     {"v_gradient", gradient_json(g.v_gradient)},
                     {"rows", axis_json(g.rows, "type_k")},
                     {"columns", axis_json(g.columns, "type_v")},
                     {"k_spread", g.k_spread},
                     {"v_spread", g.v_spread}});
    if (!variant.empty()) grids.back()["variant"] = variant;
  }
  return grids;
}

/// Seed 001's summary row per probe and model.
ojson headlines_json(const RunData& data, const RunSummary& summary) {
  ojson headlines = ojson::array();
  for (const auto& h : summary.headlines) {
    const auto [model, variant] = data.group_parts(h.model);
    headlines.push_back({{"model", model},
                         {"probe", h.probe},
                         {"combos", h.combos},
                         {"k", h.k},
                         {"pass_metric", h.pass_metric},
                         {"pass_count", {{"mean", h.pass_count.mean}, {"sd", h.pass_count.sd}}},
                         {"main_metric", h.main_metric},
                         {"main", {{"mean", h.main.mean}, {"sd", h.main.sd}, {"min", h.main.min}, {"max", h.main.max}}},
                         {"gradient", std::string(stats::to_string(h.gradient))}});
    if (!variant.empty()) headlines.back()["variant"] = variant;
  }
  return headlines;
}

/// Only in a run with variants (null otherwise): what each variant changes against the base variant.
ojson variant_effects_json(const RunData& data, const RunSummary& summary) {
  const auto effects = variant_effects(data, summary);
  if (effects.empty()) return nullptr;
  ojson rows = ojson::array();
  for (const auto& e : effects) {
    rows.push_back({{"model", e.model},
                    {"base", e.base},
                    {"variant", e.variant},
                    {"type_k", e.type_k},
                    {"type_v", e.type_v},
                    {"probe", e.probe},
                    {"metric", e.metric},
                    {"base_mean", e.base_mean},
                    {"variant_mean", e.variant_mean},
                    {"vs_base", reference_json(e.test, data.cells()[e.base_cell].id)}});
  }
  return rows;
}

}  // namespace

nlohmann::ordered_json summary_document(const RunData& data, const RunSummary& summary, const Generator& generator) {
  ojson doc;
  doc["schema_version"] = kReportSchemaVersion;
  doc["kind"] = "kvsweep-summary";
  doc["context"] = ojson::parse(context_block(data, generator).dump());
  doc["statistics"] = {
      {"bootstrap",
       {{"statistic", "mean"},
        {"iterations", summary.options.bootstrap_iterations},
        {"confidence", summary.options.confidence},
        {"seed", summary.options.bootstrap_seed}}},
      {"alpha", summary.options.alpha},
      {"paired_test", "mcnemar for metrics declared binary, else wilcoxon signed-rank; cell vs reference on common items"},
      {"multiple_comparisons", "holm across a model's non-reference cells, per probe metric"},
      {"gradient", "spearman rho of bits_per_value(type_k) + bits_per_value(type_v) vs the cell mean"},
  };

  doc["probes"] = probes_json(data, summary);
  doc["cells"] = cells_json(data);
  doc["results"] = results_json(data, summary);
  doc["grids"] = grids_json(data, summary);
  doc["headlines"] = headlines_json(data, summary);
  doc["cost"] = cost_json(data, cell_costs(data, std::nullopt, summary.options));
  // Only in a run with variants: what each variant changes against the base variant.
  if (ojson effects = variant_effects_json(data, summary); !effects.is_null())
    doc["variant_effects"] = std::move(effects);
  return doc;
}

std::string write_summary_json(const RunData& data, const RunSummary& summary, const Generator& generator) {
  return summary_document(data, summary, generator).dump(2) + "\n";
}

}  // namespace kvsweep::report
