#include "kvsweep/report/figures/figures.hpp"

#include <cmath>

#include "kvsweep/report/format.hpp"
#include "kvsweep/report/output/csv.hpp"
#include "kvsweep/report/figures/heatmap.hpp"
#include "kvsweep/report/figures/longkl_figure.hpp"
#include "kvsweep/report/analysis/recommend.hpp"
#include "kvsweep/report/figures/telephone_figures.hpp"
#include "kvsweep/report/figures/tradeoff.hpp"
#include "kvsweep/report/figures/twins_figure.hpp"
#include "kvsweep/report/analysis/variant_effect.hpp"

namespace kvsweep::report {

std::vector<Figure> render_figures(const RunData& data, const RunSummary& summary, RenderSvg render, Heatmaps heatmaps) {
  const bool draw = render == RenderSvg::yes;
  std::vector<Figure> out;
  const auto metrics = grid_metrics(data, summary);
  RecommendOptions rec_options;
  rec_options.summary = summary.options;
  const Recommendation rec = draw ? recommend(data, rec_options) : Recommendation{};
  const std::vector<VariantEffect> effects = variant_effects(data, summary);
  for (const auto& probe : data.probes()) {
    // Each variant against the base variant, when the run has variants.
    for (const auto& e : effects) {
      if (e.probe != probe.name) continue;
      out.push_back({"variant-effect-" + slug(probe.name) + ".svg",
                     probe.name + ": " + e.metric + ", each variant vs " + e.base + " at the same K/V", probe.name,
                     draw ? variant_effect_svg(effects, probe.name) : std::string()});
      break;
    }
    // Quality against KV memory, per model with more than one cell of known size.
    if (!tradeoff_metric(data, summary, probe.name).empty()) {
      for (const auto& model : data.groups()) {
        std::size_t sized = 0;
        for (const auto& c : data.cells()) sized += c.group() == model && std::isfinite(c.kv_mib);
        if (sized < 2) continue;
        std::optional<std::size_t> recommended;
        for (const auto& m : rec.models) {
          if (m.model == model) recommended = m.recommended;
        }
        out.push_back({"tradeoff-" + slug(probe.name) + "-" + slug(model) + ".svg",
                       probe.name + ": " + tradeoff_metric(data, summary, probe.name) + " vs KV MiB — " + model,
                       probe.name, draw ? tradeoff_svg(data, summary, model, probe.name, recommended) : std::string()});
      }
    }
    for (const auto& [p, metric] : metrics) {
      if (p != probe.name) continue;
      const probe::MetricSpec* spec = probe::find_metric(probe.metrics, metric);
      if (heatmaps == Heatmaps::gated && (spec == nullptr || !gates(probe, *spec))) continue;
      for (const auto& model : data.groups()) {
        if (summary.grid(model, p, metric) == nullptr) continue;
        out.push_back({"heatmap-" + slug(p) + "-" + slug(metric) + "-" + slug(model) + ".svg",
                       p + " · " + metric + " — " + model, p,
                       draw ? heatmap_svg(data, summary, model, p, metric) : std::string()});
      }
    }
    if (probe.kind == "longkl") {
      for (const auto& curves : longkl_depth(data, probe))
        out.push_back({"longkl-" + slug(probe.name) + "-depth-" + slug(curves.model) + ".svg",
                       probe.name + ": KL (lower bound) by depth — " + curves.model, probe.name,
                       draw ? longkl_depth_svg(data, curves) : std::string()});
    }
    if (probe.kind == "twins") {
      for (const auto& bins : twins_bins(data, probe))
        out.push_back({"twins-" + slug(probe.name) + "-flips-" + slug(bins.model) + ".svg",
                       probe.name + ": flip rate vs margin — " + bins.model, probe.name,
                       draw ? twins_flips_svg(data, bins) : std::string()});
    }
    if (probe.kind != "telephone") continue;
    bool any = false;
    for (const auto& model : data.groups()) {
      bool has_hops = false;
      for (std::size_t cell = 0; cell < data.cells().size() && !has_hops; ++cell) {
        if (data.cells()[cell].group() == model) has_hops = !mean_similarity_by_hop(data, cell, probe.name).empty();
      }
      if (!has_hops) continue;
      any = true;
      out.push_back({"telephone-" + slug(probe.name) + "-hops-" + slug(model) + ".svg",
                     probe.name + ": similarity vs hop — " + model, probe.name,
                     draw ? telephone_hops_svg(data, model, probe.name) : std::string()});
    }
    if (any) {
      out.push_back({"telephone-" + slug(probe.name) + "-delta.svg",
                     probe.name + ": Δ " + telephone_delta_metric(data, summary, probe.name) + " vs reference",
                     probe.name, draw ? telephone_delta_svg(data, summary, probe.name) : std::string()});
    }
  }
  return out;
}

}  // namespace kvsweep::report
