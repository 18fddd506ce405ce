/// compare_published: a run's summary document set beside a published one, cell by cell.

#include "kvsweep/report/analysis/published.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "kvsweep/report/input/summary_document.hpp"
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
  c.published = cell.value;
  c.run_mean = c.ci_lower = c.ci_upper = c.diff = kNaN;
  return c;
}

/// What makes the run's numbers unlike the published ones before any cell is set beside them: the
/// grids' reference type (their first K and V types, e.g. bf16) missing from the run, and other item
/// counts per cell.
std::vector<std::string> unlike_published(const SummaryDocument& run, const Published& published,
                                          const std::vector<std::string>& run_probes) {
  std::vector<std::string> out;
  std::set<std::string> run_k;
  for (const SummaryCell& c : run.cells) run_k.insert(c.type_k);
  std::set<std::string> said;
  for (const auto& g : published.grids) {
    if (g.k_types.empty() || g.v_types.empty() || run_k.empty()) continue;
    const std::string ref = g.k_types.front() + "/" + g.v_types.front();
    if (run_k.contains(g.k_types.front()) || !said.insert(ref).second) continue;
    std::string types;
    for (const auto& t : run_k) types += (types.empty() ? "" : ", ") + t;
    out.push_back("the published grids are referenced to " + ref + " (their first row and column); this run has no " +
                  g.k_types.front() + " cells (its K types: " + types + "), so those are \"not run\": put " +
                  g.k_types.front() + " in the grid (and grid.reference) to compare like with like");
  }
  for (const auto& name : run_probes) {
    const SummaryProbe* p = run.probe(name);
    if (p == nullptr || published.items_per_cell == 0 || p->items == 0 || p->items == published.items_per_cell) continue;
    out.push_back("probe " + name + " has " + std::to_string(p->items) + " items per cell, the published cells " +
                  std::to_string(published.items_per_cell) + ": the means are of other items and their CIs of other widths");
  }
  return out;
}

/// The published grids to set beside the run: all, or the one --grid names.
core::Expected<std::vector<const PublishedGrid*>> select_grids(const Published& published,
                                                               const PublishedCompareOptions& options) {
  std::vector<const PublishedGrid*> grids;
  for (const auto& g : published.grids) {
    if (options.grid.empty() || g.id == options.grid) grids.push_back(&g);
  }
  if (!options.grid.empty() && grids.empty()) {
    std::string ids;
    for (const auto& g : published.grids) ids += (ids.empty() ? "" : ", ") + g.id;
    return core::fail(core::ErrorKind::invalid, "--grid " + options.grid + ": no such grid in " + published.name +
                                                    " (grids: " + (ids.empty() ? "none" : ids) + ")");
  }
  return grids;
}

/// The run's probes: the one named as the file says, else every probe of that kind (a warning when none).
void match_probes(const SummaryDocument& run, const Published& published, PublishedComparison& cmp) {
  std::vector<std::string> all_probes;
  for (const SummaryProbe& p : run.probes) {
    all_probes.push_back(p.name);
    if (p.name == published.probe) cmp.run_probes = {published.probe};
  }
  if (cmp.run_probes.empty()) {
    for (const SummaryProbe& p : run.probes) {
      if (p.kind == published.probe) cmp.run_probes.push_back(p.name);
    }
  }
  if (cmp.run_probes.empty()) {
    std::string names;
    for (const auto& n : all_probes) names += (names.empty() ? "" : ", ") + n;
    cmp.warnings.push_back("the run has no probe named or of kind '" + published.probe + "' (its probes: " +
                           (names.empty() ? "none" : names) + "); every published number is \"not run\"");
  }
}

/// Models of the run that have `probe`, in result order.
std::vector<RunModel> models_with(const SummaryDocument& run, const std::vector<RunModel>& models,
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
RunHeadline headline(const SummaryDocument& run, const RunIndex& index, const Published& published, const RunModel& m,
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
      for (const auto& [item, v] : pass->values) count += v;
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
      h.gradient = g.gradient;
  }
  return h;
}

/// One published grid beside a model's cells: each published cell with the run's mean and CI, when run.
GridCheck grid_check(const PublishedGrid& grid, const RunIndex& index, const RunModel& m, const std::string& probe,
                     const std::string& metric_name, double slack) {
  GridCheck gc;
  gc.grid_id = grid.id;
  gc.title = grid.title;
  gc.model = m.model;
  gc.variant = m.variant;
  gc.probe = probe;
  for (const auto& cell : grid.cells) {
    CellCheck c = not_run(cell);
    if (const SummaryMetric* metric = index.metric(m, probe, cell.type_k, cell.type_v, metric_name)) {
      c.run = true;
      c.n = metric->n;
      c.run_mean = metric->mean;
      c.ci_lower = metric->ci_lower;
      c.ci_upper = metric->ci_upper;
      c.diff = c.run_mean - c.published;
      c.inside = inside_interval(c.published, c.ci_lower, c.ci_upper, slack);
    }
    gc.cells.push_back(std::move(c));
  }
  return gc;
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
  for (const auto& [item, x] : ref->values) {
    if (auto it = other->values.find(item); it != other->values.end()) diffs.push_back(x - it->second);
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
std::vector<RunModel> model_deltas(const SummaryDocument& run, const RunIndex& index,
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

bool inside_interval(double value, double lo, double hi, double slack) {
  return !std::isnan(value) && !std::isnan(lo) && !std::isnan(hi) && value >= lo - slack && value <= hi + slack;
}

std::size_t GridCheck::count_inside() const {
  return static_cast<std::size_t>(std::count_if(cells.begin(), cells.end(), [](const CellCheck& c) { return c.run && c.inside; }));
}

std::size_t GridCheck::count_not_run() const {
  return static_cast<std::size_t>(std::count_if(cells.begin(), cells.end(), [](const CellCheck& c) { return !c.run; }));
}

core::Expected<PublishedComparison> compare_published(const nlohmann::json& run, const Published& published,
                                                      const PublishedCompareOptions& options) {
  auto doc = read_summary_document(run, "the run's summary");
  if (!doc) return std::unexpected(doc.error());
  return compare_published(*doc, published, options);
}

core::Expected<PublishedComparison> compare_published(const SummaryDocument& run, const Published& published,
                                                      const PublishedCompareOptions& options) {
  PublishedComparison cmp;
  cmp.published = published;
  cmp.metric = options.metric.empty() ? published.metric : options.metric;
  // The published numbers are of one metric: another one beside them would be a difference of units.
  if (cmp.metric != published.metric && (!published.grids.empty() || published.deltas)) {
    return core::fail(core::ErrorKind::invalid,
                      "--metric " + cmp.metric + ": " + published.name + " publishes '" + published.metric + "'" +
                          (published.grids.empty() ? std::string() : " (" + published.grids.front().title + ")") +
                          ", not '" + cmp.metric + "'; compare the run's " + published.metric +
                          " (leave --metric out)");
  }
  cmp.run_name = run.run_name;
  const auto grids = select_grids(published, options);
  if (!grids) return std::unexpected(grids.error());
  match_probes(run, published, cmp);
  for (auto& w : unlike_published(run, published, cmp.run_probes)) cmp.warnings.push_back(std::move(w));

  RunIndex index;
  std::vector<RunModel> models;  // in result order, each once
  for (const SummaryResult& r : run.results) {
    const RunModel m{r.model, r.variant};
    index.results[RunIndex::key(m, r.probe, r.type_k, r.type_v)] = &r;
    if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
  }
  // Does the metric exist at all for the matched probes? Say so once rather than 36 "not run"s silently.
  const bool metric_seen = std::any_of(run.results.begin(), run.results.end(), [&](const SummaryResult& r) {
    return std::find(cmp.run_probes.begin(), cmp.run_probes.end(), r.probe) != cmp.run_probes.end() &&
           r.metric(cmp.metric) != nullptr;
  });
  if (!cmp.run_probes.empty() && !metric_seen) {
    cmp.warnings.push_back("the run's " + cmp.run_probes.front() + " probe has no metric '" + cmp.metric +
                           "' (--metric NAME picks another)");
  }

  const double slack = 0.5 * std::pow(10.0, -published.decimals);
  for (const std::string& probe : cmp.run_probes) {
    const std::vector<RunModel> probe_models = models_with(run, models, probe);
    for (const auto& m : probe_models) {
      RunHeadline h = headline(run, index, published, m, probe, cmp.metric);
      if (h.combos > 0 && !published.summaries.empty()) cmp.headlines.push_back(std::move(h));
    }
    for (const PublishedGrid* grid : *grids) {
      std::vector<RunModel> grid_models = probe_models;
      if (grid_models.empty()) grid_models.push_back({});
      for (const auto& m : grid_models) cmp.grids.push_back(grid_check(*grid, index, m, probe, cmp.metric, slack));
    }
  }
  if (cmp.run_probes.empty()) {
    // Nothing to match: list every published cell as not run.
    for (const PublishedGrid* grid : *grids) {
      GridCheck gc;
      gc.grid_id = grid->id;
      gc.title = grid->title;
      for (const auto& cell : grid->cells) {
        gc.cells.push_back(not_run(cell));
      }
      cmp.grids.push_back(std::move(gc));
    }
  }
  if (published.deltas) {
    const std::vector<RunModel> matched_models = model_deltas(run, index, models, *published.deltas, cmp);
    aggregate_deltas(index, models, matched_models, *published.deltas, cmp);
  }
  return cmp;
}

}  // namespace kvsweep::report
