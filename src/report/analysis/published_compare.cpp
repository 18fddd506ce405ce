/// compare_published: a run's summary document set beside a published one, cell by cell.

#include "kvsweep/report/analysis/published.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/stats/summary.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using json = nlohmann::json;

/// Lowercased words of a model name or path: "qwen3:0.6b-fp16" → qwen3, 0.6b, fp16.
std::set<std::string> words_of(const std::string& s) {
  std::set<std::string> out;
  std::string cur;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == ':' || c == '/' || c == '-' || std::isspace(c)) {
      if (!cur.empty()) out.insert(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(std::tolower(c));
    }
  }
  if (!cur.empty()) out.insert(cur);
  return out;
}

/// A model of the run, with its variant ("" without variants): the unit a published grid,
/// headline or model delta is set beside.
struct RunModel {
  std::string model;
  std::string variant;
  bool operator==(const RunModel&) const = default;
};

/// The run's results indexed by (model, variant, probe, type_k, type_v).
struct RunIndex {
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  std::map<Key, const SummaryResult*> results;
  static Key key(const RunModel& m, const std::string& probe, const std::string& k, const std::string& v) {
    return {m.model, m.variant, probe, k, v};
  }
  /// The metric `name` of a result with at least one value summarized, else nullptr.
  const SummaryMetric* metric(const RunModel& m, const std::string& probe, const std::string& k, const std::string& v,
                              const std::string& name) const {
    auto it = results.find(key(m, probe, k, v));
    if (it == results.end()) return nullptr;
    const SummaryMetric* metric = it->second->metric(name);
    return metric != nullptr && metric->n >= 1 ? metric : nullptr;
  }
};

/// A published cell beside no run values (filled in when the run has the cell).
CellCheck not_run(const PublishedCell& cell) {
  CellCheck c;
  c.type_k = cell.type_k;
  c.type_v = cell.type_v;
  c.item = cell.item;
  c.published = cell.value;
  c.run_mean = c.ci_lower = c.ci_upper = c.diff = kNaN;
  return c;
}

/// The published grids to set beside the run: all, or the one --grid names, of the --metric given.
core::Expected<std::vector<const PublishedGrid*>> select_grids(const Published& published,
                                                               const PublishedCompareOptions& options) {
  std::vector<const PublishedGrid*> grids;
  for (const auto& g : published.grids) {
    if ((options.grid.empty() || g.id == options.grid) && (options.metric.empty() || g.metric == options.metric))
      grids.push_back(&g);
  }
  if (!options.grid.empty() && grids.empty()) {
    std::string ids;
    for (const auto& g : published.grids) ids += (ids.empty() ? "" : ", ") + g.id;
    return core::fail(core::ErrorKind::invalid, "--grid " + options.grid + ": no such grid in " + published.name +
                                                    (options.metric.empty() ? "" : " of metric " + options.metric) +
                                                    " (grids: " + (ids.empty() ? "none" : ids) + ")");
  }
  return grids;
}

/// The run probes a published probe name stands for: the one of that name, else every one of that kind.
std::vector<std::string> run_probes_for(const Summary& run, const std::string& probe) {
  for (const SummaryProbe& p : run.probes)
    if (p.name == probe) return {probe};
  std::vector<std::string> out;
  for (const SummaryProbe& p : run.probes)
    if (p.kind == probe) out.push_back(p.name);
  return out;
}

/// The run's probes the file-level probe stands for (summaries, deltas): a warning when none.
void match_probes(const Summary& run, const Published& published, PublishedComparison& cmp) {
  if (published.probe.empty()) return;
  cmp.run_probes = run_probes_for(run, published.probe);
  if (cmp.run_probes.empty()) {
    std::string names;
    for (const SummaryProbe& p : run.probes) names += (names.empty() ? "" : ", ") + p.name;
    cmp.warnings.push_back("the run has no probe named or of kind '" + published.probe + "' (its probes: " +
                           (names.empty() ? "none" : names) + "); its published numbers are \"not run\"");
  }
}

/// Models of the run that have `probe`, in result order.
std::vector<RunModel> models_with(const Summary& run, const std::vector<RunModel>& models,
                                  const std::string& probe) {
  std::vector<RunModel> out;
  for (const auto& m : models) {
    const bool has = std::any_of(run.results.begin(), run.results.end(), [&](const SummaryResult& r) {
      return r.model == m.model && r.variant == m.variant && r.probe == probe;
    });
    if (has) out.push_back(m);
  }
  return out;
}

/// The run's summary row of a model and probe: per cell, items passing and the metric's mean; then across cells.
RunHeadline headline(const Summary& run, const RunIndex& index, const Published& published, const RunModel& m,
                     const std::string& probe, const std::string& metric_name) {
  RunHeadline h;
  h.model = m.model;
  h.variant = m.variant;
  h.probe = probe;
  std::vector<double> means, passes;
  const SummaryProbe* declared = run.probe(probe);
  std::size_t k = declared != nullptr ? declared->items : 0;
  for (const auto& [key, r] : index.results) {
    if (r->model != m.model || r->variant != m.variant || r->probe != probe) continue;
    const SummaryMetric* metric = index.metric(m, probe, r->type_k, r->type_v, metric_name);
    if (!metric) continue;
    means.push_back(metric->mean);
    k = std::max(k, metric->n);
    if (const SummaryMetric* pass = published.pass_metric.empty()
                                        ? nullptr
                                        : index.metric(m, probe, r->type_k, r->type_v, published.pass_metric)) {
      double count = 0;
      for (const auto& [item, v] : pass->finite_values()) count += v;
      passes.push_back(count);
    }
  }
  const stats::Summary s = stats::summarize(means);
  const stats::Summary ps = stats::summarize(passes);
  h.combos = means.size();
  h.k = k;
  h.mean = s.mean;
  h.sd = s.sd;
  h.min = s.min;
  h.max = s.max;
  h.pass_mean = passes.empty() ? kNaN : ps.mean;
  h.pass_sd = passes.empty() ? kNaN : ps.sd;
  for (const SummaryGrid& g : run.grids) {
    if (g.model == m.model && g.variant == m.variant && g.probe == probe && g.metric == metric_name)
      h.gradient = std::string(stats::to_string(g.gradient.verdict));
  }
  return h;
}

/// A published grid's check before any run cell is set beside it: every figure "not run".
GridCheck grid_head(const PublishedGrid& grid, const std::string& probe) {
  GridCheck gc;
  gc.grid_id = grid.id;
  gc.title = grid.title;
  gc.variant = grid.variant;
  gc.probe = probe;
  gc.metric = grid.metric;
  gc.precision = grid.precision;
  for (const auto& cell : grid.cells) gc.cells.push_back(not_run(cell));
  return gc;
}

/// One published grid beside a model's cells: each published figure with the run's, when run.
GridCheck grid_check(const PublishedGrid& grid, const RunIndex& index, const RunModel& m, const std::string& probe) {
  GridCheck gc = grid_head(grid, probe);
  gc.model = m.model;
  gc.cells.clear();
  for (const auto& cell : grid.cells) {
    CellCheck c = not_run(cell);
    if (const SummaryMetric* metric = index.metric(m, probe, cell.type_k, cell.type_v, grid.metric)) {
      if (cell.item.empty()) {
        c.run = true;
        c.n = metric->n;
        c.run_mean = metric->mean;
        c.ci_lower = metric->ci_lower;
        c.ci_upper = metric->ci_upper;
      } else if (const auto values = metric->finite_values(); values.contains(cell.item)) {
        c.run = true;
        c.n = 1;
        c.run_mean = values.at(cell.item);
      }
      if (c.run) {
        c.diff = c.run_mean - c.published;
        decide_figure(c, grid.precision);
      }
    }
    gc.cells.push_back(std::move(c));
  }
  return gc;
}

/// A grid no run cell is set beside, and why.
GridCheck unpaired(const PublishedGrid& grid, std::string why) {
  GridCheck gc = grid_head(grid, grid.probe);
  gc.unpaired = std::move(why);
  return gc;
}

std::string env_args_text(const json& settings) {
  return settings.is_null() ? std::string("none stated") : settings.dump();
}

/// The grids set beside the run, like with like: a grid pairs with the run cells of its probe, its
/// variant (a grid without one with a run without variants) and, where both state them, its variant's
/// settings; of the run's models, the one the file's sha256 names where given.
void pair_grids(const Summary& run, const RunIndex& index, const std::vector<RunModel>& models,
                const std::vector<const PublishedGrid*>& grids, const Published& published,
                const PublishedCompareOptions& options, PublishedComparison& cmp) {
  for (const PublishedGrid* grid : grids) {
    const std::vector<std::string> probes = run_probes_for(run, grid->probe);
    if (probes.empty()) {
      cmp.grids.push_back(unpaired(*grid, "the run has no probe named or of kind '" + grid->probe + "'"));
      continue;
    }
    if (!grid->settings.is_null()) {
      const auto it = options.run_variant_settings.find(grid->variant);
      if (it != options.run_variant_settings.end() && !it->second.is_null() && it->second != grid->settings) {
        cmp.setup.push_back({SetupDifference::Kind::differs, "variant " + grid->variant + " settings",
                             env_args_text(grid->settings), env_args_text(it->second)});
        cmp.grids.push_back(unpaired(*grid, "variant " + grid->variant + " runs with other settings than the published one"));
        continue;
      }
    }
    bool any = false;
    std::set<std::string> variants;
    for (const std::string& probe : probes) {
      std::vector<RunModel> paired;
      for (const RunModel& m : models_with(run, models, probe)) {
        variants.insert(m.variant.empty() ? "(none)" : m.variant);
        if (m.variant != grid->variant) continue;
        const SummaryModel* sm = run.model(m.model);
        if (!published.setup.model_sha256.empty() && sm != nullptr && sm->sha256 == published.setup.model_sha256) {
          paired = {m};  // the published model itself
          break;
        }
        if (grid->model.empty() || grid->model == m.model) paired.push_back(m);
      }
      for (const RunModel& m : paired) {
        cmp.grids.push_back(grid_check(*grid, index, m, probe));
        cmp.grids.back().deterministic = run.probe(probe) == nullptr || run.probe(probe)->deterministic;
        any = true;
      }
    }
    if (!any) {
      std::string names;
      for (const auto& v : variants) names += (names.empty() ? "" : ", ") + v;
      cmp.grids.push_back(unpaired(*grid, "the run has no cells of variant " +
                                              (grid->variant.empty() ? std::string("(none)") : grid->variant) +
                                              (grid->model.empty() ? "" : " and model " + grid->model) +
                                              " for probe " + probes.front() + " (its variants: " + names + ")"));
    }
  }
}

/// A model's reference and other setting, and the delta between them paired over the items both
/// answered (the same seeds and texts), as the paired tests do.
void fill_delta(ModelDeltaCheck& c, const RunIndex& index, const PublishedDeltas& d, const RunModel& m,
                const std::string& probe, const std::string& metric_name) {
  c.model = m.model;
  c.variant = m.variant;
  c.probe = probe;
  const SummaryMetric* ref = index.metric(m, probe, d.type_k_reference, d.type_v_reference, metric_name);
  const SummaryMetric* other = index.metric(m, probe, d.type_k_other, d.type_v_other, metric_name);
  auto cell = [](const SummaryMetric* metric, bool& has, double& mean, double& lo, double& hi) {
    has = metric != nullptr;
    mean = has ? metric->mean : kNaN;
    lo = has ? metric->ci_lower : kNaN;
    hi = has ? metric->ci_upper : kNaN;
  };
  cell(ref, c.has_reference, c.reference_mean, c.reference_lower, c.reference_upper);
  cell(other, c.has_other, c.other_mean, c.other_lower, c.other_upper);
  c.delta = c.delta_lower = c.delta_upper = kNaN;
  if (!ref || !other) return;
  std::vector<double> diffs;
  const auto others = other->finite_values();
  for (const auto& [item, x] : ref->finite_values()) {
    if (auto it = others.find(item); it != others.end()) diffs.push_back(x - it->second);
  }
  c.n_pairs = diffs.size();
  if (diffs.empty()) {
    c.delta = c.reference_mean - c.other_mean;
    return;
  }
  c.delta = stats::mean(diffs);
  const stats::BootstrapOptions boot{stats::Statistic::mean, 2000, 0.95, 42};
  const stats::ConfidenceInterval ci = stats::bootstrap_ci(diffs, boot);
  c.delta_lower = ci.lower;
  c.delta_upper = ci.upper;
}

/// Each published model delta beside the run's models its match words name (a row "not run" when
/// none); returns the run's models that matched.
std::vector<RunModel> model_deltas(const Summary& run, const RunIndex& index,
                                   const std::vector<RunModel>& models, const PublishedDeltas& d,
                                   PublishedComparison& cmp) {
  std::vector<RunModel> matched_models;
  for (const auto& pm : d.models) {
    bool any = false;
    for (const auto& probe : cmp.run_probes) {
      for (const auto& m : models) {
        std::set<std::string> words = words_of(m.model);
        if (const SummaryModel* model = run.model(m.model)) words.merge(words_of(model->path));
        const bool all = std::all_of(pm.match.begin(), pm.match.end(), [&](const std::string& w) { return words.contains(w); });
        if (!all) continue;
        ModelDeltaCheck c;
        c.published = pm;
        fill_delta(c, index, d, m, probe, cmp.metric);
        if (!c.has_reference && !c.has_other) continue;
        decide_delta(c, cmp.published.precision);
        any = true;
        if (std::find(matched_models.begin(), matched_models.end(), m) == matched_models.end()) matched_models.push_back(m);
        cmp.deltas.push_back(std::move(c));
      }
    }
    if (!any) {
      ModelDeltaCheck c;
      c.published = pm;
      c.reference_mean = c.reference_lower = c.reference_upper = kNaN;
      c.other_mean = c.other_lower = c.other_upper = kNaN;
      c.delta = c.delta_lower = c.delta_upper = kNaN;
      cmp.deltas.push_back(std::move(c));
    }
  }
  return matched_models;
}

/// The run's own aggregate: every model with both settings, matched to a published model or not.
void aggregate_deltas(const RunIndex& index, const std::vector<RunModel>& models,
                      const std::vector<RunModel>& matched_models, const PublishedDeltas& d,
                      PublishedComparison& cmp) {
  std::vector<double> deltas;
  for (const auto& probe : cmp.run_probes) {
    for (const auto& m : models) {
      ModelDeltaCheck c;
      fill_delta(c, index, d, m, probe, cmp.metric);
      if (!c.has_reference || !c.has_other) continue;
      deltas.push_back(c.delta);
      if (c.delta > 0) ++cmp.aggregate.improved;
      if (std::find(matched_models.begin(), matched_models.end(), m) == matched_models.end()) {
        cmp.warnings.push_back("run model " + m.model + " matches no published model (match words are in the file)");
      }
    }
  }
  cmp.aggregate.models = deltas.size();
  cmp.aggregate.mean_delta = stats::mean(deltas);
}

}  // namespace

core::Expected<PublishedComparison> compare_published(const nlohmann::json& run, const Published& published,
                                                      const PublishedCompareOptions& options) {
  auto doc = Summary::from_json(nlohmann::ordered_json(run), "the run's summary");
  if (!doc) return std::unexpected(doc.error());
  return compare_published(*doc, published, options);
}

core::Expected<PublishedComparison> compare_published(const Summary& run, const Published& published,
                                                      const PublishedCompareOptions& options) {
  PublishedComparison cmp;
  cmp.published = published;
  cmp.metric = published.metric;
  // The published numbers are of their own metrics: another one beside them would be a difference of units.
  if (!options.metric.empty()) {
    std::vector<std::string> metrics;
    if (!published.metric.empty()) metrics.push_back(published.metric);
    for (const auto& g : published.grids)
      if (std::find(metrics.begin(), metrics.end(), g.metric) == metrics.end()) metrics.push_back(g.metric);
    if (std::find(metrics.begin(), metrics.end(), options.metric) == metrics.end()) {
      std::string names;
      for (const auto& m : metrics) names += (names.empty() ? "" : ", ") + m;
      return core::fail(core::ErrorKind::invalid,
                        "--metric " + options.metric + ": " + published.name + " publishes " + names + ", not '" +
                            options.metric + "'" + config::did_you_mean(options.metric, metrics) +
                            "; compare one of those (or leave --metric out)");
    }
  }
  cmp.run_name = run.run_name;
  const auto grids = select_grids(published, options);
  if (!grids) return std::unexpected(grids.error());
  if (options.run_setup != nullptr) cmp.setup = setup_differences(published.setup, *options.run_setup);
  model_caveat(run, published, cmp);
  match_probes(run, published, cmp);
  std::vector<std::string> grid_probes = cmp.run_probes;
  for (const PublishedGrid* g : *grids)
    for (auto& p : run_probes_for(run, g->probe))
      if (std::find(grid_probes.begin(), grid_probes.end(), p) == grid_probes.end()) grid_probes.push_back(std::move(p));
  for (auto& w : unlike_published(run, published, grid_probes)) cmp.warnings.push_back(std::move(w));

  RunIndex index;
  std::vector<RunModel> models;  // in result order, each once
  for (const SummaryResult& r : run.results) {
    const RunModel m{r.model, r.variant};
    index.results[RunIndex::key(m, r.probe, r.type_k, r.type_v)] = &r;
    if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
  }
  // A published metric the run's probe does not record: say so once rather than each cell "not run" silently.
  std::set<std::string> said;
  for (const PublishedGrid* g : *grids) {
    for (const auto& probe : run_probes_for(run, g->probe)) {
      const bool seen = std::any_of(run.results.begin(), run.results.end(), [&](const SummaryResult& r) {
        return r.probe == probe && r.metric(g->metric) != nullptr;
      });
      if (!seen && said.insert(probe + "." + g->metric).second)
        cmp.warnings.push_back("the run holds no '" + g->metric + "' of its " + probe +
                               " probe (not run, or not recorded): those published figures are \"not run\"");
    }
  }

  if (!published.summaries.empty()) {
    for (const std::string& probe : cmp.run_probes) {
      for (const auto& m : models_with(run, models, probe)) {
        RunHeadline h = headline(run, index, published, m, probe, cmp.metric);
        if (h.combos > 0) cmp.headlines.push_back(std::move(h));
      }
    }
  }
  pair_grids(run, index, models, *grids, published, options, cmp);
  if (published.deltas) {
    const std::vector<RunModel> matched_models = model_deltas(run, index, models, *published.deltas, cmp);
    aggregate_deltas(index, models, matched_models, *published.deltas, cmp);
  }
  return cmp;
}

}  // namespace kvsweep::report
