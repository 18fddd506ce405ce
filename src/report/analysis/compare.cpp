#include "kvsweep/report/analysis/compare.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/report/analysis/compare_differences.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/stats/power.hpp"
#include "kvsweep/stats/summary.hpp"
#include "kvsweep/stats/tests.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A metric's declaration: the run's, else the baseline's, else (neither lists it) an inferred
/// higher-is-better quality metric, binary when both runs' values are all 0 or 1.
probe::MetricSpec spec_for(const Summary& current, const Summary& baseline,
                           const std::string& probe_name, const std::string& metric, bool values_binary) {
  for (const Summary* doc : {&current, &baseline}) {
    const SummaryProbe* p = doc->probe(probe_name);
    if (p == nullptr) continue;
    if (const auto* spec = probe::find_metric(p->metrics, metric)) return *spec;
    if (p->has_declarations()) return probe::diagnostic(metric, probe::MetricKind::continuous);  // emitted, undeclared
  }
  return probe::quality(metric, probe::Direction::higher_better,
                        values_binary ? probe::MetricKind::binary : probe::MetricKind::continuous);
}

bool all_binary(const std::map<std::string, double>& values) {
  return std::all_of(values.begin(), values.end(), [](const auto& kv) { return kv.second == 0.0 || kv.second == 1.0; });
}

/// A result's metric names in name order: the order checks outside the probe's declaration come in.
std::set<std::string> metric_names(const SummaryResult& r) {
  std::set<std::string> names;
  for (const SummaryMetric& m : r.metrics) names.insert(m.name);
  return names;
}

/// Results are paired across the two runs by cell (model, variant, type_k, type_v) and probe.
using ResultKey = std::pair<core::CellKey, std::string>;

const Tolerance& tolerance_for(const CompareOptions& o, const std::string& probe, const std::string& metric) {
  if (auto it = o.tolerances.find(probe + "." + metric); it != o.tolerances.end()) return it->second;
  if (auto it = o.tolerances.find(metric); it != o.tolerances.end()) return it->second;
  return o.default_tolerance;
}

/// What differs in the context is worth saying; it is not an error (that is what compare is for).
void context_warnings(const Summary& current, const Summary& baseline, std::vector<std::string>& warnings) {
  const std::pair<const char*, std::string Summary::*> server_fields[] = {
      {"version", &Summary::server_version}, {"build_commit", &Summary::server_build_commit}};
  for (const auto& [key, field] : server_fields) {
    const std::string& a = baseline.*field;
    const std::string& b = current.*field;
    if (!a.empty() && !b.empty() && a != b) warnings.push_back("server " + std::string(key) + " differs: baseline " + a + ", run " + b);
  }
  for (const auto& [doc, which] : {std::pair{&current, "the run's summary"}, std::pair{&baseline, "the baseline"}}) {
    std::map<std::string, bool> declared;  // by name, so the warnings come in name order
    for (const SummaryProbe& p : doc->probes) declared[p.name] = p.has_declarations();
    for (const auto& [name, is_declared] : declared) {
      if (!is_declared) {
        warnings.push_back(std::string(which) + " has no metric declarations for " + name +
                           " (written by an older kvsweep): every metric is gated as quality, directions as "
                           "recorded, 0/1 values as binary");
      }
    }
  }
}

/// A model whose file differs between the runs (both record a sha256) is worth a warning.
void model_warning(const std::string& model, const Summary& current, const Summary& baseline,
                   std::vector<std::string>& warnings) {
  const SummaryModel* ma = baseline.model(model);
  const SummaryModel* mb = current.model(model);
  const std::string sa = ma ? ma->sha256 : "", sb = mb ? mb->sha256 : "";
  if (!sa.empty() && !sb.empty() && sa != sb) {
    warnings.push_back("model " + model + " has a different sha256 in the baseline (" + sa.substr(0, 12) + " vs " +
                       sb.substr(0, 12) + ")");
  }
}

Check start_check(const SummaryResult& r, const std::string& cell, const std::string& metric, const probe::MetricSpec& spec) {
  Check c;
  c.cell = cell;
  std::tie(c.model, c.variant, c.type_k, c.type_v, c.probe) = std::tie(r.model, r.variant, r.type_k, r.type_v, r.probe);
  c.metric = metric;
  c.higher_is_better = spec.higher_is_better();
  c.kind = spec.kind;
  return c;
}

/// A baseline mean and no current values: a regression when the baseline has values.
void no_current_values(Check& c, const std::map<std::string, double>& ys, const CompareOptions& options) {
  std::vector<double> base_values;
  for (const auto& [item, v] : ys) base_values.push_back(v);
  c.baseline_mean = stats::mean(base_values);
  c.current_mean = c.delta = c.p = c.p_holm = c.min_p = kNaN;
  const Tolerance& tol = tolerance_for(options, c.probe, c.metric);
  c.tolerance = tol.relative ? tol.value * std::fabs(c.baseline_mean) : tol.value;
  c.n_baseline = ys.size();
  c.verdict = Verdict::regression;
}

/// Phase pair, one metric of a result both runs hold: its items paired by key, the means over the
/// common items, the tolerance and the paired test's p (none for a deterministic probe on the same items).
Check pair_metric(Check c, const std::map<std::string, double>& xs, const std::map<std::string, double>& ys,
                  const SummaryResult& r, const CompareOptions& options) {
  std::vector<double> x, y;
  bool same = xs.size() == ys.size();
  for (const auto& [item, v] : ys)
    if (!xs.contains(item)) c.missing_items.push_back(item);  // kept by mark_missing only if the run holds it elsewhere
  c.items_settled = r.items_settled;
  for (const auto& [item, v] : xs) {
    auto yit = ys.find(item);
    if (yit == ys.end()) {
      same = false;
      continue;
    }
    x.push_back(v);
    y.push_back(yit->second);
  }
  c.identical_items = same && !x.empty();
  c.n_common = x.size();
  c.n_baseline = ys.size();
  c.n_current = xs.size();
  if (x.empty() && !xs.empty()) {
    // Both runs answered this cell, on other items: a difference of configs, not of quality.
    c.baseline_mean = c.current_mean = c.delta = c.p = c.p_holm = c.min_p = c.tolerance = kNaN;
    c.verdict = Verdict::not_comparable;
    c.why = ReasonCode::no_common_items;
    return c;
  }
  if (x.empty()) {
    no_current_values(c, ys, options);
    c.why = ReasonCode::no_current;
    c.outcome = r.outcome;
    c.items_failed = r.items_failed;
    if (ys.empty()) {
      c.verdict = Verdict::no_data;
      c.why = ReasonCode::no_data;
    }
    return c;
  }
  const Tolerance& tol = tolerance_for(options, r.probe, c.metric);
  c.baseline_mean = stats::mean(y);
  c.current_mean = stats::mean(x);
  c.delta = c.current_mean - c.baseline_mean;
  c.tolerance = tol.relative ? tol.value * std::fabs(c.baseline_mean) : tol.value;
  if (c.deterministic && c.identical_items) {
    c.p = c.p_holm = c.min_p = kNaN;  // the exact rule needs no test
  } else {
    const ReferenceTest t = paired_test(x, y, c.kind, SummaryOptions{});
    c.test = t.test;
    c.p = t.p;
  }
  return c;
}

/// Phase pair, one result both runs hold: a check per quality metric, in the probe's metric order;
/// diagnostic metrics are only counted.
void pair_result(const SummaryResult& r, const SummaryResult& b, const Summary& current,
                 const Summary& baseline, const CompareOptions& options, Comparison& cmp) {
  const SummaryProbe* cp = current.probe(r.probe);
  const SummaryProbe* bp = baseline.probe(r.probe);
  // The probe's metric order, then the metrics it does not declare by name.
  std::vector<std::string> metric_order;
  if (cp != nullptr) {
    for (const auto& m : cp->metrics) metric_order.push_back(m.name);
  }
  for (const std::string& name : metric_names(r)) {
    if (std::find(metric_order.begin(), metric_order.end(), name) == metric_order.end()) metric_order.push_back(name);
  }
  for (const std::string& metric : metric_order) {
    const SummaryMetric* rm = r.metric(metric);
    const SummaryMetric* bm = b.metric(metric);
    if (rm == nullptr || bm == nullptr) continue;
    const auto xs = rm->finite_values();
    const auto ys = bm->finite_values();
    const probe::MetricSpec spec = spec_for(current, baseline, r.probe, metric, all_binary(xs) && all_binary(ys));
    if (!spec.is_judged()) {
      ++cmp.diagnostics;
      continue;
    }
    Check c = start_check(r, r.cell, metric, spec);
    // Deterministic only if both runs say so.
    c.deterministic = cp != nullptr && cp->deterministic && (bp == nullptr || bp->deterministic);
    cmp.checks.push_back(pair_metric(std::move(c), xs, ys, r, options));
  }
}

/// Phase pair, the baseline's results this run has nothing for: a regression when the run has the
/// cell (it failed to load, crashed, wedged), else `missing` (not run: a filter, a shard, another grid).
void pair_missing(const Summary& current, const Summary& baseline,
                  const std::map<ResultKey, const SummaryResult*>& base_results, const std::set<ResultKey>& seen_base,
                  const CompareOptions& options, Comparison& cmp) {
  std::map<core::CellKey, const SummaryCell*> current_cells;
  for (const SummaryCell& c : current.cells) current_cells[c.key()] = &c;
  for (const auto& [key, r] : base_results) {
    if (seen_base.contains(key)) continue;
    const SummaryResult& b = *r;
    const auto cell = current_cells.find(key.first);
    for (const std::string& name : metric_names(b)) {
      const auto ys = b.metric(name)->finite_values();
      if (ys.empty()) continue;
      const probe::MetricSpec spec = spec_for(current, baseline, b.probe, name, all_binary(ys));
      if (!spec.is_judged()) continue;
      Check c = start_check(b, cell == current_cells.end() ? b.cell : cell->second->id, name, spec);
      no_current_values(c, ys, options);
      if (cell == current_cells.end()) {
        c.verdict = Verdict::missing;
        c.why = ReasonCode::no_cell;
      } else {
        c.why = ReasonCode::no_result;
        c.outcome = cell->second->outcome;
      }
      cmp.checks.push_back(std::move(c));
    }
  }
}

/// Phase adjust: Holm across every check that has a test (the family is the whole gate's
/// stochastic part), and whether each test could reach significance at all.
void adjust(Comparison& cmp) {
  std::vector<double> ps;
  std::vector<Check*> tested;
  for (auto& c : cmp.checks) {
    if (c.n_common == 0 || c.test.empty()) continue;
    ps.push_back(c.p);
    tested.push_back(&c);
  }
  cmp.tested = tested.size();
  const std::vector<double> adjusted = stats::holm_adjust(ps);
  // Holm's first step compares the smallest p with alpha / m: a check whose best possible p is not
  // below that can never be called significant, whatever its data.
  const double threshold = cmp.alpha / static_cast<double>(std::max<std::size_t>(1, tested.size()));
  for (std::size_t i = 0; i < tested.size(); ++i) {
    Check& c = *tested[i];
    c.p_holm = adjusted[i];
    const auto test = c.test == "mcnemar" ? stats::PairedTest::mcnemar : stats::PairedTest::wilcoxon;
    // McNemar looks only at the discordant pairs: a change of this size in a 0/1 mean is at best
    // |Δ| · n items flipping the same way, whatever n is. Wilcoxon ranks: any n pairs may all move.
    const std::size_t pairs = test == stats::PairedTest::mcnemar
                                  ? std::min<std::size_t>(c.n_common, static_cast<std::size_t>(std::llround(
                                                                          std::fabs(c.delta) * static_cast<double>(c.n_common))))
                                  : c.n_common;
    c.min_p = stats::min_attainable_p(test, pairs);
    c.powered = c.min_p < threshold;
    c.n_needed = stats::pairs_needed(test, threshold).value_or(0);
  }
}

/// Phase decide: the verdict of every check with common items, and why.
void decide(Comparison& cmp) {
  for (auto& c : cmp.checks) {
    if (c.n_common == 0) continue;
    const double bad = c.higher_is_better ? -c.delta : c.delta;
    // A hair above the tolerance from float rounding is not a change.
    const double slack = 1e-12 * std::max(1.0, std::fabs(c.baseline_mean));
    const bool exact = c.test.empty();
    const bool significant = !exact && c.p_holm < cmp.alpha;
    const bool evidence = significant || exact;
    c.why = exact ? ReasonCode::exact : significant ? ReasonCode::significant : ReasonCode::not_significant;
    if (bad > c.tolerance + slack && exact && cmp.host_changed) {
      // Another CPU class rounds differently and moves near-tied greedy tokens: the host, not the K/V setting.
      c.verdict = Verdict::inconclusive;
      c.why = ReasonCode::host_changed;
    } else if (bad > c.tolerance + slack && evidence) {
      c.verdict = Verdict::regression;
    } else if (bad > c.tolerance + slack && !c.powered) {
      c.verdict = Verdict::inconclusive;
      c.why = ReasonCode::underpowered;
    } else if (-bad > c.tolerance + slack && evidence) {
      c.verdict = Verdict::improved;
    } else {
      c.verdict = Verdict::ok;
    }
  }
}

/// Phase missing: a check whose cell lacks baseline items the run holds in other cells (failed or not
/// run; an adaptive stop's settled items excepted, by number) is `missing`, unless it already regressed.
void mark_missing(const Summary& current, Comparison& cmp) {
  const auto run_items = items_by_probe(current);
  for (auto& c : cmp.checks) {
    if (c.n_common == 0) {  // no values in the cell at all: said by its own reason (no_current, no_cell, …)
      c.missing_items.clear();
      continue;
    }
    const auto items = run_items.find(c.probe);
    std::erase_if(c.missing_items, [&](const std::string& item) {
      return items == run_items.end() || !items->second.contains(item);
    });
    if (c.missing_items.size() <= c.items_settled) c.missing_items.clear();
    if (c.missing_items.empty() || c.verdict == Verdict::regression || c.verdict == Verdict::not_comparable) continue;
    c.verdict = Verdict::missing;
  }
}

}  // namespace

core::Expected<std::pair<std::string, Tolerance>> parse_tolerance(std::string_view spec) {
  const auto eq = spec.find('=');
  auto bad = [&](const std::string& why) {
    return core::fail(core::ErrorKind::invalid, "--tolerance " + std::string(spec) + ": " + why +
                                                    " (expected METRIC=VALUE, PROBE.METRIC=VALUE or *=VALUE; VALUE "
                                                    "absolute like 0.02 or relative like 5%)");
  };
  if (eq == std::string_view::npos || eq == 0) return bad("no METRIC=");
  const std::string key(spec.substr(0, eq));
  std::string_view value = spec.substr(eq + 1);
  Tolerance t;
  t.relative = !value.empty() && value.back() == '%';
  if (t.relative) value.remove_suffix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v) || v < 0) {
    return bad("the value is not a number >= 0");
  }
  t.value = t.relative ? v / 100.0 : v;
  return std::pair<std::string, Tolerance>{key, t};
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::ok: return "ok";
    case Verdict::regression: return "regression";
    case Verdict::inconclusive: return "inconclusive";
    case Verdict::improved: return "improved";
    case Verdict::no_data: return "no data";
    case Verdict::not_comparable: return "not comparable";
    case Verdict::missing: return "missing";
  }
  return "ok";
}

std::size_t Comparison::count(Verdict verdict) const {
  return static_cast<std::size_t>(
      std::count_if(checks.begin(), checks.end(), [&](const Check& c) { return c.verdict == verdict; }));
}

core::Expected<Comparison> compare_summaries(const nlohmann::json& current, const nlohmann::json& baseline,
                                             const CompareOptions& options) {
  auto run = Summary::from_json(nlohmann::ordered_json(current), "the run's summary");
  if (!run) return std::unexpected(run.error());
  auto base = Summary::from_json(nlohmann::ordered_json(baseline), "the baseline");
  if (!base) return std::unexpected(base.error());
  return compare_summaries(*run, *base, options);
}

core::Expected<Comparison> compare_summaries(const Summary& current, const Summary& baseline,
                                             const CompareOptions& options) {
  Comparison cmp;
  cmp.current_name = current.run_name;
  cmp.baseline_name = baseline.run_name;
  cmp.alpha = options.alpha;
  cmp.fail_inconclusive = options.fail_inconclusive;
  cmp.host_changed = options.host_changed;
  cmp.allow_missing = options.allow_missing;
  const RunDifferences differences = run_differences(current, baseline);
  cmp.differences = differences.sentences;
  if (differences.items_differ && !options.allow_diff) {
    std::string what;
    for (const auto& s : differences.sentences) what += "\n  " + s;
    return core::fail(core::ErrorKind::invalid,
                      "the run and the baseline do not hold the same items, so a missing value would read as a "
                      "regression:" + what + "\ncompare the common items anyway with --allow-diff (cells "
                      "without common items are then 'not comparable'), or make a baseline from the same config");
  }
  context_warnings(current, baseline, cmp.warnings);

  std::map<ResultKey, const SummaryResult*> base_results;
  for (const SummaryResult& r : baseline.results) base_results[{r.key(), r.probe}] = &r;
  std::set<ResultKey> seen_base;
  std::set<std::string> sha_checked;
  for (const SummaryResult& r : current.results) {
    const auto it = base_results.find({r.key(), r.probe});
    if (it == base_results.end()) continue;
    seen_base.insert(it->first);
    if (sha_checked.insert(r.model).second) model_warning(r.model, current, baseline, cmp.warnings);
    pair_result(r, *it->second, current, baseline, options, cmp);
  }
  pair_missing(current, baseline, base_results, seen_base, options, cmp);
  // Only cells this run lacks: nothing is shared, a different grid rather than a run that lost cells.
  if (std::all_of(cmp.checks.begin(), cmp.checks.end(), [](const Check& c) { return c.why == ReasonCode::no_cell; })) {
    return core::fail(core::ErrorKind::invalid,
                      "the run and the baseline share no (cell, probe, quality metric): different grids, probes or "
                      "models?");
  }
  adjust(cmp);
  decide(cmp);
  mark_missing(current, cmp);
  for (auto& c : cmp.checks) c.reason = explain(c, cmp);
  return cmp;
}


bool Comparison::fails(const Check& check) const {
  return check.verdict == Verdict::regression || (check.verdict == Verdict::inconclusive && fail_inconclusive) ||
         (check.verdict == Verdict::missing && !allow_missing);
}

int exit_status(const Comparison& comparison) {
  const bool failed = std::any_of(comparison.checks.begin(), comparison.checks.end(),
                                  [&](const Check& c) { return comparison.fails(c); });
  return failed ? core::exit_code::regression : core::exit_code::ok;
}


}  // namespace kvsweep::report
