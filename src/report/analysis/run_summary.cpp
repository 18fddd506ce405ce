#include "kvsweep/report/analysis/run_summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "kvsweep/stats/precision.hpp"
#include "kvsweep/stats/tests.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_binary(std::span<const double> v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return x == 0.0 || x == 1.0; });
}

stats::ConfidenceInterval ci_of(std::span<const double> v, const SummaryOptions& o) {
  stats::BootstrapOptions b;
  b.iterations = o.bootstrap_iterations;
  b.confidence = o.confidence;
  b.seed = o.bootstrap_seed;
  return stats::bootstrap_ci(v, b);
}

// The mean of the row's (or column's) cell means, not of its pooled items: a cell that lost items
// would otherwise weigh less than its neighbours and tilt the marginal.
AxisMean axis_mean(const std::string& type, std::span<const double> cell_means, const SummaryOptions& o) {
  return {type, stats::summarize(cell_means), ci_of(cell_means, o)};
}

double spread(const std::vector<AxisMean>& axis) {
  if (axis.empty()) return kNaN;
  double lo = axis.front().summary.mean, hi = lo;
  for (const auto& a : axis) {
    lo = std::min(lo, a.summary.mean);
    hi = std::max(hi, a.summary.mean);
  }
  return hi - lo;
}

// The table roles from the declarations (RunData infers them for older runs): the pass metric is a
// quality 0/1 metric, the main metric the first quality metric that is not.
MetricRoles roles_for(const ProbeDef& probe) {
  MetricRoles r;
  r.probe = probe.name;
  for (const auto& metric : probe.metrics) {
    if (metric.is_binary()) r.binary.push_back(metric.name);
  }
  auto usable = [&](const std::string& name, bool binary) {
    const MetricDef* m = probe::find_metric(probe.metrics, name);
    return m != nullptr && m->is_judged() && m->is_binary() == binary;
  };
  for (const char* known : {"passed", "match_reference"}) {
    if (r.pass_metric.empty() && usable(known, true)) r.pass_metric = known;
  }
  for (const auto& metric : probe.metrics) {
    if (r.pass_metric.empty() && metric.higher_is_better() && usable(metric.name, true)) r.pass_metric = metric.name;
  }
  for (const auto& metric : probe.metrics) {
    if (r.main_metric.empty() && metric.higher_is_better() && usable(metric.name, false)) r.main_metric = metric.name;
  }
  for (const auto& metric : probe.metrics) {
    if (r.main_metric.empty() && usable(metric.name, false)) r.main_metric = metric.name;
  }
  for (const auto& metric : probe.metrics) {
    if (r.main_metric.empty() && metric.is_judged()) r.main_metric = metric.name;
  }
  if (r.main_metric.empty() && !probe.metrics.empty()) r.main_metric = probe.metrics.front().name;
  return r;
}

/// Phase describe: per cell and probe, the items' outcomes and descriptive statistics of every metric.
void describe_cells(const RunData& data, const SummaryOptions& options, RunSummary& s) {
  for (const std::size_t cell : data.grid_order()) {
    for (const auto& probe : data.probes()) {
      const auto& items = data.items(cell, probe.name);
      if (items.empty()) continue;
      CellProbeStats r;
      r.cell = cell;
      r.probe = probe.name;
      for (const auto& item : items) {
        if (item.ok) {
          ++r.items_ok;
        } else if (item.settled) {
          ++r.items_settled;
        } else {
          r.failed_items.push_back(item.item);
        }
      }
      for (const auto& metric : probe.metrics) {
        MetricStats m;
        m.metric = metric.name;
        m.higher_is_better = metric.higher_is_better();
        m.values = data.values(cell, probe.name, metric.name);
        m.summary = stats::summarize(m.values.values);
        m.ci = ci_of(m.values.values, options);
        r.metrics.push_back(std::move(m));
      }
      s.results.push_back(std::move(r));
    }
  }
}

/// Phase test: against the reference, one family per (group, probe, metric), Holm across its cells.
void test_against_reference(const RunData& data, const SummaryOptions& options, RunSummary& s) {
  const auto& cells = data.cells();
  for (const auto& model : data.groups()) {
    const auto ref = data.reference(model);
    if (!ref) continue;
    for (const auto& probe : data.probes()) {
      for (const auto& metric : probe.metrics) {
        const MetricStats* ref_stats = s.find(*ref, probe.name, metric.name);
        if (ref_stats == nullptr || ref_stats->values.values.empty()) continue;
        std::vector<MetricStats*> family;
        std::vector<double> ps;
        for (auto& r : s.results) {
          if (r.probe != probe.name || r.cell == *ref || cells[r.cell].group() != model) continue;
          for (auto& m : r.metrics) {
            if (m.metric != metric.name) continue;
            std::vector<double> x, y;
            pair_up(m.values, ref_stats->values, x, y);
            if (x.empty()) continue;
            m.vs_reference = paired_test(x, y, metric.kind, options);
            family.push_back(&m);
            ps.push_back(m.vs_reference->p);
          }
        }
        const std::vector<double> adjusted = stats::holm_adjust(ps);
        for (std::size_t i = 0; i < family.size(); ++i) {
          family[i]->vs_reference->p_holm = adjusted[i];
          family[i]->vs_reference->significant = adjusted[i] < options.alpha;
        }
      }
    }
  }
}

/// One grid of a group, probe and metric: the precision gradient and the K / V marginal means
/// (nullopt when no cell of the group has values).
std::optional<GridStats> grid_of(const RunData& data, const SummaryOptions& options, const RunSummary& s,
                                 const std::string& model, const ProbeDef& probe, const MetricDef& metric) {
  const auto& cells = data.cells();
  GridStats g;
  g.model = model;
  g.probe = probe.name;
  g.metric = metric.name;
  g.higher_is_better = metric.higher_is_better();
  g.quality = metric.is_judged();
  std::vector<double> bits_k, bits_v, bits_kv, means;
  std::map<std::string, std::vector<double>> rows, columns;  // cell means by K type, by V type
  for (std::size_t cell = 0; cell < cells.size(); ++cell) {
    if (cells[cell].group() != model) continue;
    const MetricStats* m = s.find(cell, probe.name, metric.name);
    if (m == nullptr || m->values.values.empty()) continue;
    rows[cells[cell].type_k].push_back(m->summary.mean);
    columns[cells[cell].type_v].push_back(m->summary.mean);
    const auto bk = stats::bits_per_value(cells[cell].type_k);
    const auto bv = stats::bits_per_value(cells[cell].type_v);
    if (!bk || !bv) continue;
    bits_k.push_back(*bk);
    bits_v.push_back(*bv);
    bits_kv.push_back(*bk + *bv);
    means.push_back(m->summary.mean);
  }
  if (rows.empty()) return std::nullopt;
  // The gradient is a quality verdict: a diagnostic (a base perplexity, a token count) has no better side.
  if (g.quality) {
    g.gradient = stats::precision_gradient(bits_kv, means, g.higher_is_better, options.alpha);
    g.k_gradient = stats::precision_gradient(bits_k, means, g.higher_is_better, options.alpha);
    g.v_gradient = stats::precision_gradient(bits_v, means, g.higher_is_better, options.alpha);
  }
  for (const auto& type : data.k_types()) {
    if (rows.contains(type)) g.rows.push_back(axis_mean(type, rows[type], options));
  }
  for (const auto& type : data.v_types()) {
    if (columns.contains(type)) g.columns.push_back(axis_mean(type, columns[type], options));
  }
  g.k_spread = spread(g.rows);
  g.v_spread = spread(g.columns);
  return g;
}

/// Phase grids: every (group, probe, metric) that has values.
void grid_stats(const RunData& data, const SummaryOptions& options, RunSummary& s) {
  for (const auto& model : data.groups()) {
    for (const auto& probe : data.probes()) {
      for (const auto& metric : probe.metrics) {
        if (auto g = grid_of(data, options, s, model, probe, metric)) s.grids.push_back(std::move(*g));
      }
    }
  }
}

/// Phase headlines: seed 001's summary row per probe and group.
void headlines(const RunData& data, RunSummary& s) {
  const auto& cells = data.cells();
  for (const auto& probe : data.probes()) {
    const MetricRoles& roles = *s.roles_of(probe.name);
    for (const auto& model : data.groups()) {
      Headline h;
      h.model = model;
      h.probe = probe.name;
      h.pass_metric = roles.pass_metric;
      h.main_metric = roles.main_metric;
      h.k = probe.items;
      std::vector<double> passes, means;
      for (const auto& r : s.results) {
        if (r.probe != probe.name || cells[r.cell].group() != model) continue;
        h.k = std::max(h.k, r.items_ok + r.failed_items.size() + r.items_settled);
        if (r.items_ok == 0) continue;
        ++h.combos;
        if (const MetricStats* m = s.find(r.cell, probe.name, roles.pass_metric)) {
          double count = 0;
          for (double v : m->values.values) count += v == 1.0 ? 1.0 : 0.0;
          passes.push_back(count);
        }
        if (const MetricStats* m = s.find(r.cell, probe.name, roles.main_metric); m && !m->values.values.empty()) {
          means.push_back(m->summary.mean);
        }
      }
      if (h.combos == 0) continue;
      h.pass_count = stats::summarize(passes);
      h.main = stats::summarize(means);
      if (const GridStats* g = s.grid(model, probe.name, roles.main_metric)) h.gradient = g->gradient.verdict;
      s.headlines.push_back(std::move(h));
    }
  }
}

}  // namespace

void pair_up(const Values& x, const Values& y, std::vector<double>& out_x, std::vector<double>& out_y) {
  out_x.clear();
  out_y.clear();
  std::map<std::string, double> by_item;
  for (std::size_t i = 0; i < y.items.size(); ++i) by_item.emplace(y.items[i], y.values[i]);
  for (std::size_t i = 0; i < x.items.size(); ++i) {
    auto it = by_item.find(x.items[i]);
    if (it == by_item.end()) continue;
    out_x.push_back(x.values[i]);
    out_y.push_back(it->second);
  }
}

ReferenceTest paired_test(std::span<const double> x, std::span<const double> y, probe::MetricKind kind,
                          const SummaryOptions& options) {
  ReferenceTest t;
  t.n_pairs = std::min(x.size(), y.size());
  if (t.n_pairs == 0 || x.size() != y.size()) {
    t.delta = t.p = t.p_holm = kNaN;
    t.delta_ci = {kNaN, kNaN};
    return t;
  }
  std::vector<double> diff(t.n_pairs);
  for (std::size_t i = 0; i < t.n_pairs; ++i) diff[i] = x[i] - y[i];
  t.delta = stats::mean(diff);
  t.delta_ci = ci_of(diff, options);
  if (kind == probe::MetricKind::binary && is_binary(x) && is_binary(y)) {
    t.test = "mcnemar";
    for (std::size_t i = 0; i < t.n_pairs; ++i) {
      if (y[i] == 1.0 && x[i] == 0.0) ++t.b;
      if (x[i] == 1.0 && y[i] == 0.0) ++t.c;
    }
    t.p = stats::mcnemar_p(t.b, t.c);
  } else {
    t.test = "wilcoxon";
    const stats::WilcoxonResult w = stats::wilcoxon_signed_rank(x, y);
    t.w_plus = w.w_plus;
    t.w_minus = w.w_minus;
    t.p = w.p;
  }
  t.p_holm = t.p;
  return t;
}

const CellProbeStats* RunSummary::find(std::size_t cell, const std::string& probe) const {
  for (const auto& r : results) {
    if (r.cell == cell && r.probe == probe) return &r;
  }
  return nullptr;
}

const MetricStats* RunSummary::find(std::size_t cell, const std::string& probe, const std::string& metric) const {
  const CellProbeStats* r = find(cell, probe);
  if (r == nullptr) return nullptr;
  for (const auto& m : r->metrics) {
    if (m.metric == metric) return &m;
  }
  return nullptr;
}

const GridStats* RunSummary::grid(const std::string& model, const std::string& probe, const std::string& metric) const {
  for (const auto& g : grids) {
    if (g.model == model && g.probe == probe && g.metric == metric) return &g;
  }
  return nullptr;
}

const MetricRoles* RunSummary::roles_of(const std::string& probe) const {
  for (const auto& r : roles) {
    if (r.probe == probe) return &r;
  }
  return nullptr;
}

RunSummary summarize_run(const RunData& data, const SummaryOptions& options) {
  RunSummary s;
  s.options = options;
  for (const auto& probe : data.probes()) s.roles.push_back(roles_for(probe));
  describe_cells(data, options, s);
  test_against_reference(data, options, s);
  grid_stats(data, options, s);
  headlines(data, s);
  return s;
}

}  // namespace kvsweep::report
