#include "kvsweep/report/analysis/recommend.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "kvsweep/report/analysis/cost_memory.hpp"
#include "kvsweep/report/analysis/failures.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/stats/power.hpp"
#include "kvsweep/stats/precision.hpp"
#include "kvsweep/sweep/run/adaptive.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using probe::orient;

Margin margin_for(const ProbeDef& probe, const probe::MetricSpec& metric, const Values& reference,
                  const RecommendOptions& options) {
  for (const std::string& key : {probe.name + "." + metric.name, metric.name}) {
    if (auto it = options.margins.find(key); it != options.margins.end()) return {it->second, "--margin " + key};
  }
  return default_margin(probe, metric, reference);
}

/// lower ÷ margin: above −1 is non-inferior.
double normalised(const stats::NonInferiority& r) {
  if (!std::isfinite(r.lower)) return kNaN;
  if (r.margin > 0.0) return r.lower / r.margin;
  return r.lower >= 0.0 ? 0.0 : -std::numeric_limits<double>::infinity();
}

double oriented_mean_delta(const probe::MetricSpec& metric, const Values& cell, const Values& reference) {
  std::vector<double> x, y;
  pair_up(cell, reference, x, y);
  if (x.empty()) return kNaN;
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) sum += orient(x[i], metric) - orient(y[i], metric);
  return sum / static_cast<double>(x.size());
}

AxisSensitivity k_versus_v(const RunData& data, const std::string& model, std::size_t ref, const ProbeDef& probe,
                           const RecommendOptions& options) {
  AxisSensitivity out;
  out.probe = probe.name;
  const CellDef& r = data.cells()[ref];
  out.ref_k = r.type_k;
  out.ref_v = r.type_v;
  out.alpha = options.alpha;
  const probe::MetricSpec* metric = nullptr;
  for (const auto& m : probe.metrics) {
    if (m.is_judged() && !data.values(ref, probe.name, m.name).values.empty()) {
      metric = &m;
      break;
    }
  }
  if (metric == nullptr) return out;
  out.metric = metric->name;
  // The lowest-precision type with a K-only and a V-only cell.
  std::optional<std::string> best;
  double best_bits = std::numeric_limits<double>::infinity();
  for (const auto& t : data.k_types()) {
    if (t == r.type_k || t == r.type_v) continue;
    const auto k_only = data.find_cell(model, t, r.type_v);
    const auto v_only = data.find_cell(model, r.type_k, t);
    if (!k_only || !v_only) continue;
    if (data.values(*k_only, probe.name, metric->name).values.empty() ||
        data.values(*v_only, probe.name, metric->name).values.empty()) {
      continue;
    }
    const double bits = stats::bits_per_value(t).value_or(1e9);
    if (bits < best_bits) {
      best_bits = bits;
      best = t;
    }
  }
  if (!best) {
    out.finding = AxisSensitivity::Finding::no_axis_pair;
    return out;
  }
  const std::string& t = *best;
  out.type = t;
  const Values ref_values = data.values(ref, probe.name, metric->name);
  const Values k_values = data.values(*data.find_cell(model, t, r.type_v), probe.name, metric->name);
  const Values v_values = data.values(*data.find_cell(model, r.type_k, t), probe.name, metric->name);
  out.dk = oriented_mean_delta(*metric, k_values, ref_values);
  out.dv = oriented_mean_delta(*metric, v_values, ref_values);
  std::vector<double> x, y;
  pair_up(k_values, v_values, x, y);
  const ReferenceTest test = paired_test(x, y, metric->kind, options.summary);
  out.test = test.test;
  out.n_pairs = test.n_pairs;
  out.p = test.p;
  if (test.p < options.alpha && out.dk != out.dv) {
    out.finding = out.dk < out.dv ? AxisSensitivity::Finding::k_more_sensitive : AxisSensitivity::Finding::v_more_sensitive;
    return out;
  }
  out.finding = AxisSensitivity::Finding::not_told_apart;
  const auto kind = test.test == "mcnemar" ? stats::PairedTest::mcnemar : stats::PairedTest::wilcoxon;
  if (stats::min_attainable_p(kind, test.n_pairs) >= options.alpha) out.pairs_needed = stats::pairs_needed(kind, options.alpha);
  return out;
}

/// How an adaptive sweep ran one cell's probe: none settled means it ran like a fixed design.
struct AdaptiveRun {
  std::size_t settled = 0, ok = 0, planned = 0;
  sweep::AdaptiveRule rule;  // min_items and futility from the settled records; alpha is the report's
  std::vector<const ItemOutcome*> ok_in_run_order;
  std::vector<std::string> not_ok;  // planned items without an ok record (settled or failed)
};

AdaptiveRun adaptive_run(const RunData& data, std::size_t cell, const std::string& probe) {
  AdaptiveRun a;
  for (const auto& item : data.items(cell, probe)) {
    ++a.planned;
    if (item.ok) a.ok_in_run_order.push_back(&item);
    else a.not_ok.push_back(item.item);
    if (!item.settled) continue;
    ++a.settled;
    const nlohmann::json& recorded = data.records()[item.record].adaptive;
    const nlohmann::json adaptive = recorded.is_null() ? nlohmann::json::object() : recorded;
    a.rule.min_items = adaptive.value("min_items", a.rule.min_items);
    a.rule.futility = adaptive.value("futility", a.rule.futility);
  }
  a.ok = a.ok_in_run_order.size();
  std::sort(a.ok_in_run_order.begin(), a.ok_in_run_order.end(),
            [](const ItemOutcome* x, const ItemOutcome* y) { return x->record < y->record; });
  return a;
}

/// A verdict on `metric` before its test is run.
MetricVerdict verdict_head(const probe::MetricSpec& metric, const Margin& margin) {
  MetricVerdict v;
  v.metric = metric.name;
  v.kind = metric.kind;
  v.higher_is_better = metric.higher_is_better();
  v.margin = margin;
  return v;
}

/// The verdict an adaptive cell stopped on: its pairs in the order the items ran, through the same
/// settle_metric the runner stopped on (the planned items it did not answer are the open ones).
MetricVerdict adaptive_verdict(const probe::MetricSpec& metric, const AdaptiveRun& run, const Values& reference,
                               const Margin& margin, double alpha) {
  MetricVerdict v = verdict_head(metric, margin);
  std::map<std::string, double> ref;
  for (std::size_t i = 0; i < reference.items.size(); ++i) ref[reference.items[i]] = orient(reference.values[i], metric);
  std::vector<double> cell, paired_reference, open;
  for (const ItemOutcome* item : run.ok_in_run_order) {
    const auto r = ref.find(item->item);
    const auto x = item->metrics.find(metric.name);
    if (r == ref.end() || x == item->metrics.end() || !std::isfinite(x->second)) continue;
    cell.push_back(orient(x->second, metric));
    paired_reference.push_back(r->second);
  }
  for (const auto& item : run.not_ok)
    if (const auto r = ref.find(item); r != ref.end()) open.push_back(r->second);
  sweep::AdaptiveRule rule = run.rule;
  rule.alpha = alpha;
  const sweep::MetricState state = sweep::settle_metric(metric, margin.value, cell, paired_reference, open, rule);
  v.result = state.result;
  if (state.by == "curtailment") {
    v.bound = "Newcombe hybrid score (paired), curtailed: every outcome of the " +
              std::to_string(open.size() + cell.size() - state.decided_at) + " items left gives it";
  } else if (state.by == "futility") {
    v.bound = "futility: the full run decides with predictive probability " + fixed(state.p_decided, 3);
  } else {
    v.bound = metric.is_binary() ? "anytime-valid betting (Waudby-Smith & Ramdas 2023)"
                                 : "anytime-valid normal mixture (Lai 1976)";
  }
  v.adaptive = MetricVerdict::Adaptive{run.ok, run.planned, state.decided_at, state.by, state.p_decided};
  return v;
}

}  // namespace

bool gates(const ProbeDef& probe, const probe::MetricSpec& metric, const RecommendOptions& options) {
  if (!metric.is_judged()) return false;
  if (!options.gate.empty())
    return options.gate.contains(probe.name + "." + metric.name) || options.gate.contains(metric.name);
  if (!probe.gate.empty()) return std::find(probe.gate.begin(), probe.gate.end(), metric.name) != probe.gate.end();
  return metric.gated_by_default();
}

Margin default_margin(const ProbeDef& probe, const probe::MetricSpec& metric, const Values& reference) {
  std::optional<probe::Probe::Calibration> calibration;
  if (!probe.calibration_metric.empty())
    calibration = probe::Probe::Calibration{probe.calibration_metric, probe.calibration_lo, probe.calibration_hi};
  return probe::default_margin(metric, calibration, reference.values);
}

MetricVerdict metric_verdict(const probe::MetricSpec& metric, const Values& cell, const Values& reference,
                             const Margin& margin, double alpha) {
  MetricVerdict v = verdict_head(metric, margin);
  std::vector<double> x, y;
  pair_up(cell, reference, x, y);
  if (metric.is_binary()) {
    v.bound = "Newcombe hybrid score (paired)";
    stats::PairedTable table;
    for (std::size_t i = 0; i < x.size(); ++i) table.add(orient(x[i], metric) >= 0.5, orient(y[i], metric) >= 0.5);
    v.result = stats::noninferiority_paired_binary(table, margin.value, alpha);
  } else {
    v.bound = "paired t";
    std::vector<double> d(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) d[i] = orient(x[i], metric) - orient(y[i], metric);
    v.result = stats::noninferiority_mean(d, margin.value, alpha);
  }
  return v;
}

std::vector<std::size_t> pareto_frontier(const std::vector<double>& cost, const std::vector<double>& quality) {
  std::vector<std::size_t> out;
  const std::size_t n = std::min(cost.size(), quality.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(cost[i]) || std::isnan(quality[i])) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < n && !dominated; ++j) {
      if (j == i || std::isnan(cost[j]) || std::isnan(quality[j])) continue;
      dominated = cost[j] <= cost[i] && quality[j] >= quality[i] && (cost[j] < cost[i] || quality[j] > quality[i]);
    }
    if (!dominated) out.push_back(i);
  }
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) { return cost[a] < cost[b]; });
  return out;
}

namespace {

/// Why --max-slowdown drops a cell whose costs are `cost` ("tg 0.82× < 0.90×"), empty when it keeps it.
std::string slower_than(const CellCost* cost, double min_ratio) {
  if (cost == nullptr) return "speed unknown";
  std::string why;
  for (const auto& [name, x] : {std::pair{"pp", cost->pp_x_worst}, std::pair{"tg", cost->tg_x_worst}}) {
    if (!std::isfinite(x)) why += std::string(why.empty() ? "" : ", ") + name + " speed unknown";
    else if (x < min_ratio) why += std::string(why.empty() ? "" : ", ") + name + " " + fixed(x, 2) + "× < " + fixed(min_ratio, 2) + "×";
  }
  return why;
}

/// Whether any item of `probe` was answered in `cell`.
bool answered(const RunData& data, std::size_t cell, const std::string& probe) {
  const auto& items = data.items(cell, probe);
  return std::any_of(items.begin(), items.end(), [](const ItemOutcome& item) { return item.ok; });
}

/// Phase verdicts, one probe: a verdict on each quality metric the reference has values of, counted into
/// `cv`; each verdict with a bound lowers `score` to its normalised bound.
void probe_verdicts(const RunData& data, std::size_t ref, std::size_t cell, const ProbeDef& probe,
                    const RecommendOptions& options, CellVerdict& cv, double& score) {
  const AdaptiveRun adaptive = adaptive_run(data, cell, probe.name);
  for (const auto& metric : probe.metrics) {
    if (!gates(probe, metric, options)) continue;
    const Values reference = data.values(ref, probe.name, metric.name);
    if (reference.values.empty()) continue;
    const Margin margin = margin_for(probe, metric, reference, options);
    MetricVerdict v = adaptive.settled > 0
                          ? adaptive_verdict(metric, adaptive, reference, margin, options.alpha)
                          : metric_verdict(metric, data.values(cell, probe.name, metric.name), reference, margin,
                                           options.alpha);
    v.probe = probe.name;
    v.items_max = probe.items_max;
    switch (v.result.verdict) {
      case stats::Decision::non_inferior: ++cv.non_inferior; break;
      case stats::Decision::inferior: ++cv.inferior; break;
      case stats::Decision::unknown: ++cv.unknown; break;
    }
    // A metric without a bound (one item: no spread) does not place the cell; the others do.
    const double q = normalised(v.result);
    if (!std::isnan(q)) score = std::min(score, q);
    cv.metrics.push_back(std::move(v));
  }
}

/// What `metric` of `cell` shows against the reference on the items both answered (Evidence); the margin
/// and verdict from `gated` when the metric gates, else a distance's declared threshold.
Evidence evidence_of(const RunData& data, std::size_t ref, std::size_t cell, const ProbeDef& probe,
                     const probe::MetricSpec& metric, const std::vector<MetricVerdict>& gated) {
  Evidence e;
  e.probe = probe.name;
  e.metric = metric.name;
  e.role = metric.role;
  e.kind = metric.kind;
  e.higher_is_better = metric.higher_is_better();
  std::vector<double> x, y;
  pair_up(data.values(cell, probe.name, metric.name), data.values(ref, probe.name, metric.name), x, y);
  e.n = x.size();
  double sum_x = 0.0, sum_y = 0.0, sum_d = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sum_x += x[i];
    sum_y += y[i];
    const double cx = orient(x[i], metric), cy = orient(y[i], metric);
    sum_d += cx - cy;
    if (metric.is_binary()) {
      // Oriented (1 − v when lower is better), a 0/1 value is on the good side at ≥ 0.5, as the verdict counts it.
      const bool good_x = cx >= 0.5, good_y = cy >= 0.5;
      e.worse += good_y && !good_x;
      e.better += good_x && !good_y;
    }
  }
  if (e.n > 0) {
    const auto n = static_cast<double>(e.n);
    e.cell_mean = sum_x / n;
    e.reference_mean = sum_y / n;
    e.change = sum_d / n;
  }
  for (const auto& v : gated) {
    if (v.probe != probe.name || v.metric != metric.name) continue;
    e.margin = v.margin.value;
    e.verdict = v.result.verdict;
  }
  if (!e.margin && metric.role == probe::MetricRole::distance && metric.threshold) e.margin = *metric.threshold;
  return e;
}

/// Phase verdicts: one candidate cell against its reference on every probe the reference answered; its
/// score, and whether it is eligible (and, with --max-slowdown, fast enough).
CellVerdict cell_verdict(const RunData& data, std::size_t ref, std::size_t cell, const CostTable& costs,
                         const RecommendOptions& options) {
  CellVerdict cv;
  cv.cell = cell;
  const CellCost* cost = costs.find(cell);
  cv.kv_bytes_per_token = cost ? cost->kv_bytes_per_token : kNaN;
  double score = std::numeric_limits<double>::infinity();
  for (const auto& probe : data.probes()) {
    if (!answered(data, ref, probe.name)) continue;
    if (!answered(data, cell, probe.name)) {
      cv.missing_probes.push_back(probe.name);
      continue;
    }
    probe_verdicts(data, ref, cell, probe, options, cv, score);
    for (const auto& metric : probe.metrics)
      if (metric.is_judged()) cv.evidence.push_back(evidence_of(data, ref, cell, probe, metric, cv.metrics));
  }
  cv.score = std::isinf(score) && score > 0 ? kNaN : score;  // no metric with a bound
  if (!cv.missing_probes.empty()) cv.score = kNaN;           // not comparable with cells that ran them
  cv.eligible = !cv.metrics.empty() && cv.missing_probes.empty() && cv.inferior == 0 && cv.unknown == 0;
  if (options.max_slowdown) cv.too_slow = slower_than(cost, *options.max_slowdown);
  if (!cv.too_slow.empty()) cv.eligible = false;
  return cv;
}

/// Phase frontier: over the reference (score 0: no difference from itself) and the candidates; an
/// inferior cell is never on it (NaN), however cheap: it is worse than its margin allows somewhere.
std::vector<std::size_t> model_frontier(const ModelRecommendation& mr, std::size_t ref, const CostTable& costs) {
  std::vector<std::size_t> ids{ref};
  const CellCost* ref_cost = costs.find(ref);
  std::vector<double> cost{ref_cost ? ref_cost->kv_bytes_per_token : kNaN}, quality{0.0};
  for (const auto& cv : mr.cells) {
    ids.push_back(cv.cell);
    cost.push_back(cv.kv_bytes_per_token);
    quality.push_back(cv.inferior > 0 ? kNaN : cv.score);
  }
  std::vector<std::size_t> frontier;
  for (std::size_t i : pareto_frontier(cost, quality)) frontier.push_back(ids[i]);
  return frontier;
}

/// Phase choice: the eligible cell with the fewest KV bytes per token (then the higher score) that fits
/// --vram; the eligible cells --vram leaves out are added to `mr.over_vram`.
std::optional<std::size_t> choose(const RunData& data, const CostTable& costs, const RecommendOptions& options,
                                  ModelRecommendation& mr) {
  const CellVerdict* best = nullptr;
  for (const auto& cv : mr.cells) {
    if (!cv.eligible || !std::isfinite(cv.kv_bytes_per_token)) continue;
    if (options.vram_gib) {
      const CellCost* cell_cost = costs.find(cv.cell);
      const auto memory =
          cell_cost ? memory_at(data.cells()[cv.cell], *cell_cost, costs.context) : std::vector<DeviceBuffers>{};
      const MemoryNeed need = memory_need(memory);
      if (!(need.mib <= *options.vram_gib * 1024.0)) {
        mr.over_vram.emplace_back(cv.cell, std::isfinite(need.mib) ? memory_text(need, memory) : "memory not recorded");
        continue;
      }
    }
    if (best == nullptr || cv.kv_bytes_per_token < best->kv_bytes_per_token ||
        (cv.kv_bytes_per_token == best->kv_bytes_per_token && cv.score > best->score)) {
      best = &cv;
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->cell;
}

/// One model (a group): its candidate cells' verdicts, the frontier, the choice, K against V.
ModelRecommendation recommend_model(const RunData& data, const std::string& model, const CostTable& costs,
                                    const RecommendOptions& options) {
  ModelRecommendation mr;
  mr.model = model;
  mr.reference = data.reference(model);
  if (!mr.reference) return mr;
  const std::size_t ref = *mr.reference;
  // A reference that answered nothing measured nothing: no cell is compared with it, nothing advised.
  mr.nothing_measured = !measured(data, ref);
  if (mr.nothing_measured) return mr;
  for (std::size_t index : data.grid_order()) {
    const CellDef& cell = data.cells()[index];
    // Whether the cell started and answered anything: failed cells are not candidates.
    if (cell.group() != model || index == ref || !measured(data, index)) continue;
    mr.cells.push_back(cell_verdict(data, ref, index, costs, options));
  }
  mr.frontier = model_frontier(mr, ref, costs);
  mr.recommended = choose(data, costs, options, mr);
  for (const auto& probe : data.probes()) mr.k_vs_v.push_back(k_versus_v(data, model, ref, probe, options));
  return mr;
}

}  // namespace

Recommendation recommend(const RunData& data, const RecommendOptions& options) {
  Recommendation rec;
  rec.alpha = options.alpha;
  rec.gate = options.gate;
  rec.vram_gib = options.vram_gib;
  rec.max_slowdown = options.max_slowdown;
  rec.costs = cell_costs(data, options.context, options.summary);
  for (const auto& model : data.groups()) rec.models.push_back(recommend_model(data, model, rec.costs, options));
  return rec;
}

std::string explain(const AxisSensitivity& s) {
  using Finding = AxisSensitivity::Finding;
  const std::string ref = s.ref_k + "/" + s.ref_v;
  const std::string label = s.probe + " (" + s.metric + ")";
  if (s.finding == Finding::no_quality_metric) return s.probe + ": no quality metric with reference data.";
  if (s.finding == Finding::no_axis_pair)
    return label + ": no type quantizes K alone and V alone in this grid (cells t/" + s.ref_v + " and " + s.ref_k +
           "/t with answers), so K and V cannot be told apart.";
  const std::string& t = s.type;
  const std::string evidence = t + " K with " + s.ref_v + " V moves it by " + signed_fixed(s.dk, 3) + ", " + t +
                               " V with " + s.ref_k + " K by " + signed_fixed(s.dv, 3) +
                               " (oriented, + is better, against " + ref + "); " + t + "/" + s.ref_v + " against " +
                               s.ref_k + "/" + t + " on " + std::to_string(s.n_pairs) + " paired items: " + s.test +
                               " p = " + format_p(s.p);
  if (s.finding == Finding::k_more_sensitive) return label + ": K is more sensitive than V — " + evidence + ".";
  if (s.finding == Finding::v_more_sensitive) return label + ": V is more sensitive than K — " + evidence + ".";
  std::string out = label + ": K and V are not told apart at " + t + " — " + evidence + " (not below " + shortest(s.alpha);
  if (s.pairs_needed)
    out += "; no " + std::to_string(s.n_pairs) + " pairs can be: it takes " + std::to_string(*s.pairs_needed) +
           (s.test == "mcnemar" ? " discordant" : "") + " pairs";
  return out + ").";
}

}  // namespace kvsweep::report
