#include "kvsweep/report/analysis/variant_effect.hpp"

#include <cmath>
#include <set>

#include "kvsweep/report/figures/delta_bars.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/stats/summary.hpp"
#include "kvsweep/stats/tests.hpp"

namespace kvsweep::report {

namespace {

std::string effect_metric(const ProbeDef& probe, const RunSummary& summary) {
  const MetricRoles* roles = summary.roles_of(probe.name);
  if (roles == nullptr) return "";
  return roles->main_metric.empty() ? roles->pass_metric : roles->main_metric;
}

}  // namespace

std::vector<VariantEffect> variant_effects(const RunData& data, const RunSummary& summary) {
  std::vector<VariantEffect> out;
  if (data.variants().size() < 2) return out;
  const std::string& base = data.variants().front();
  for (const auto& probe : data.probes()) {
    const std::string metric = effect_metric(probe, summary);
    const MetricDef* def = probe::find_metric(probe.metrics, metric);
    if (def == nullptr) continue;
    for (const auto& model : data.models()) {
      for (std::size_t vi = 1; vi < data.variants().size(); ++vi) {
        const std::string& variant = data.variants()[vi];
        const std::size_t first = out.size();
        for (std::size_t index : data.grid_order()) {
          const CellDef& c = data.cells()[index];
          if (c.model != model || c.variant != variant) continue;
          const auto base_cell = data.find_cell(core::CellKey::group_of(model, base), c.type_k, c.type_v);
          if (!base_cell) continue;
          std::vector<double> x, y;
          pair_up(data.values(index, probe.name, metric), data.values(*base_cell, probe.name, metric), x, y);
          if (x.empty()) continue;
          VariantEffect e{model, base, variant, c.type_k, c.type_v, *base_cell, index, probe.name, metric,
                          def->higher_is_better(), stats::mean(y), stats::mean(x),
                          paired_test(x, y, def->kind, summary.options)};
          out.push_back(std::move(e));
        }
        // Holm across this variant's cells: one family per (model, variant, probe, metric).
        std::vector<double> p;
        for (std::size_t i = first; i < out.size(); ++i) p.push_back(out[i].test.p);
        const std::vector<double> adjusted = stats::holm_adjust(p);
        for (std::size_t i = first; i < out.size(); ++i) {
          out[i].test.p_holm = adjusted[i - first];
          out[i].test.significant = adjusted[i - first] < summary.options.alpha;
        }
      }
    }
  }
  return out;
}

Table variant_effect_table(const std::vector<VariantEffect>& effects, const std::string& probe) {
  Table t;
  t.header = {"model", "K", "V", "metric", "variant vs base", "base", "variant", "Δ [95% CI]", "p (Holm)", "pairs"};
  t.numeric = {false, false, false, false, false, true, true, true, true, true};
  for (const auto& e : effects) {
    if (e.probe != probe) continue;
    std::vector<double> shown = {e.base_mean, e.variant_mean, e.test.delta};
    const int dec = std::max(decimals_for(shown), 2);
    t.rows.push_back({e.model, e.type_k, e.type_v, e.metric + " " + better_arrow(e.higher_is_better),
                      e.variant + " vs " + e.base, fixed(e.base_mean, dec), fixed(e.variant_mean, dec),
                      signed_fixed(e.test.delta, dec) + " [" + signed_fixed(e.test.delta_ci.lower, dec) + ", " +
                          signed_fixed(e.test.delta_ci.upper, dec) + "]" + (e.test.significant ? " *" : ""),
                      format_p(e.test.p_holm), std::to_string(e.test.n_pairs)});
  }
  return t;
}

std::string variant_effect_svg(const std::vector<VariantEffect>& effects, const std::string& probe) {
  std::vector<DeltaBar> bars;
  std::string metric, base;
  bool higher_is_better = true;
  std::set<std::string> models;
  for (const auto& e : effects) {
    if (e.probe != probe) continue;
    models.insert(e.model);
    metric = e.metric;
    base = e.base;
    higher_is_better = e.higher_is_better;
  }
  for (const auto& e : effects) {
    if (e.probe != probe || std::isnan(e.test.delta)) continue;
    bars.push_back({(models.size() > 1 ? e.model + " " : std::string()) + e.variant + " " + e.type_k + "/" + e.type_v, &e.test});
  }
  return delta_bars_svg({probe + ": Δ " + metric + ", each variant vs " + base + " at the same K/V, sorted",
                         "Δ = variant − " + base + ", mean over the items both answered · whiskers: 95% bootstrap CI",
                         metric, higher_is_better, "no variant cell to compare"},
                        std::move(bars));
}

}  // namespace kvsweep::report
