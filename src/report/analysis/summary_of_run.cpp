/// A run as its Summary: the statistics of summarize_run() set out as summary.json holds them.

#include <algorithm>
#include <unordered_map>

#include "kvsweep/report/analysis/cost.hpp"
#include "kvsweep/report/analysis/summary.hpp"
#include "kvsweep/report/analysis/variant_effect.hpp"

namespace kvsweep::report {

namespace {

/// The probes as the run declared them, with each metric's role.
std::vector<SummaryProbe> probes_of(const RunData& data, const RunSummary& summary) {
  std::vector<SummaryProbe> probes;
  for (const auto& p : data.probes()) {
    const MetricRoles roles = summary.roles_of(p.name) ? *summary.roles_of(p.name) : MetricRoles{};
    probes.push_back({p.name, p.kind, p.items, p.deterministic, p.declared, false, roles.pass_metric, roles.main_metric,
                      p.metrics, roles.binary});
  }
  return probes;
}

/// The settings the cell's server reported (types, flash attention, rotation, n_ctx): compare explains by them.
std::optional<sweep::CellEffective> effective_of(const RunData& data, const std::string& id) {
  std::optional<sweep::CellEffective> out;
  for (const auto& m : data.manifest().cell_list())
    if (m.id.value_or("") == id && m.effective) out = m.effective;
  return out;
}

/// Every cell: its types, outcome, KV size, attention path, reported settings and buffers per device.
std::vector<SummaryCell> cells_of(const RunData& data) {
  std::vector<SummaryCell> cells;
  for (const auto& c : data.cells()) {
    cells.push_back({c.key(), c.id, c.is_reference, c.outcome, c.message, c.kv_mib, c.path, c.path_reason,
                     effective_of(data, c.id), c.memory});
  }
  return cells;
}

SummaryTest test_of(const ReferenceTest& t, const std::string& reference_id) { return {reference_id, t}; }

/// Per cell and probe: item counts, and per metric its statistics, test against the reference and values.
std::vector<SummaryResult> results_of(const RunData& data, const RunSummary& summary) {
  std::vector<SummaryResult> results;
  for (const auto& r : summary.results) {
    const CellDef& cell = data.cells()[r.cell];
    const auto ref = data.reference(cell.group());
    const std::string ref_id = ref ? data.cells()[*ref].id : "";
    SummaryResult out{cell.key(), cell.id, r.probe, cell.outcome, r.items_ok, r.failed_items.size(), r.failed_items,
                      r.items_settled, {}};
    for (const auto& m : r.metrics) {
      SummaryMetric metric{m.summary, m.metric, m.ci.lower, m.ci.upper, std::nullopt, {}};
      if (m.vs_reference) metric.vs_reference = test_of(*m.vs_reference, ref_id);
      // By item, as a JSON object holds them: an item seen twice keeps its place and its last value.
      std::unordered_map<std::string, std::size_t> at;
      for (std::size_t i = 0; i < m.values.items.size(); ++i) {
        const auto [it, fresh] = at.try_emplace(m.values.items[i], metric.values.size());
        if (fresh) metric.values.emplace_back(m.values.items[i], m.values.values[i]);
        else metric.values[it->second].second = m.values.values[i];
      }
      // A metric seen twice in one result keeps its place and its last statistics, as an object's key does.
      auto same = std::find_if(out.metrics.begin(), out.metrics.end(), [&](const SummaryMetric& x) { return x.name == m.metric; });
      if (same == out.metrics.end()) out.metrics.push_back(std::move(metric));
      else *same = std::move(metric);
    }
    results.push_back(std::move(out));
  }
  return results;
}

/// Per grid and metric: the precision gradients and the K / V marginal means.
std::vector<SummaryGrid> grids_of(const RunData& data, const RunSummary& summary) {
  std::vector<SummaryGrid> grids;
  for (const auto& g : summary.grids) {
    const auto [model, variant] = data.group_parts(g.model);
    grids.push_back({model, variant, g.probe, g.metric, g.higher_is_better, g.gradient, g.k_gradient, g.v_gradient,
                     g.rows, g.columns, g.k_spread, g.v_spread});
  }
  return grids;
}

/// Seed 001's summary row per probe and model.
std::vector<SummaryHeadline> headlines_of(const RunData& data, const RunSummary& summary) {
  std::vector<SummaryHeadline> headlines;
  for (const auto& h : summary.headlines) {
    const auto [model, variant] = data.group_parts(h.model);
    headlines.push_back({model, variant, h.probe, h.combos, h.k, h.pass_metric, h.pass_count, h.main_metric, h.main,
                         h.gradient});
  }
  return headlines;
}

/// Only in a run with variants: what each variant changes against the base variant.
std::vector<SummaryVariantEffect> variant_effects_of(const RunData& data, const RunSummary& summary) {
  std::vector<SummaryVariantEffect> rows;
  for (const auto& e : variant_effects(data, summary)) {
    rows.push_back({e.model, e.base, e.variant, e.type_k, e.type_v, e.probe, e.metric, e.base_mean, e.variant_mean,
                    test_of(e.test, data.cells()[e.base_cell].id)});
  }
  return rows;
}

}  // namespace

Summary make_summary(const RunData& data, const RunSummary& summary, const Generator& generator) {
  Summary out;
  out.schema_version = kReportSchemaVersion;
  out.set_context(context_block(data, generator));
  out.options = summary.options;
  out.probes = probes_of(data, summary);
  out.cells = cells_of(data);
  out.results = results_of(data, summary);
  out.grids = grids_of(data, summary);
  out.headlines = headlines_of(data, summary);
  out.cost = cost_json(data, cell_costs(data, std::nullopt, summary.options));
  out.variant_effects = variant_effects_of(data, summary);
  return out;
}

}  // namespace kvsweep::report
