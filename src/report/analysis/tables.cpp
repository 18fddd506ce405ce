#include "kvsweep/report/analysis/tables.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "kvsweep/report/format.hpp"
#include "kvsweep/stats/gradient.hpp"

namespace kvsweep::report {

namespace {

std::string mean_sd(const stats::Summary& s, int decimals) {
  if (s.n == 0) return "—";
  // sd is undefined for one cell: the mean alone.
  return report::mean_sd(s.mean, s.sd, decimals);
}

std::string rho_p(const stats::GradientResult& g) {
  if (std::isnan(g.rho)) return "—";
  return fixed(g.rho, 2) + " (p " + format_p(g.p) + ")";
}

/// Display width in code points (the grid uses "—", one column wide but three bytes).
std::size_t width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string pad_left(const std::string& s, std::size_t w) {
  const std::size_t n = width(s);
  return n >= w ? s : std::string(w - n, ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t w) {
  const std::size_t n = width(s);
  return n >= w ? s : s + std::string(w - n, ' ');
}

int metric_decimals(const RunSummary& summary, const std::string& probe, const std::string& metric) {
  std::vector<double> means;
  for (const auto& r : summary.results) {
    if (r.probe != probe) continue;
    for (const auto& m : r.metrics) {
      if (m.metric == metric && m.summary.n > 0) means.push_back(m.summary.mean);
    }
  }
  return decimals_for(means);
}

}  // namespace

std::string better_arrow(bool higher_is_better) { return higher_is_better ? "↑" : "↓"; }

std::string better_arrow(const MetricDef& metric) {
  if (metric.direction == probe::Direction::none) return "(diagnostic)";
  if (metric.role == probe::MetricRole::cost) return better_arrow(metric.higher_is_better()) + " (cost)";
  if (!metric.is_judged()) return better_arrow(metric.higher_is_better()) + " (diagnostic)";
  // The role beside the arrow: a change is not a loss, a distance is judged by its threshold (quality: bare).
  if (metric.role == probe::MetricRole::change) return better_arrow(metric.higher_is_better()) + " (change)";
  if (metric.role == probe::MetricRole::distance) return better_arrow(metric.higher_is_better()) + " (distance)";
  return better_arrow(metric.higher_is_better());
}

Table headline_table(const RunData& data, const RunSummary& summary, const std::string& probe) {
  Table t;
  std::vector<const Headline*> rows;
  for (const auto& h : summary.headlines) {
    if (h.probe == probe) rows.push_back(&h);
  }
  if (rows.empty()) return t;
  const Headline& first = *rows.front();
  const bool has_pass = !first.pass_metric.empty();
  const bool same_k = std::all_of(rows.begin(), rows.end(), [&](const Headline* h) { return h->k == first.k; });
  const std::string k_text = same_k ? std::to_string(first.k) : "k";
  std::vector<double> means;
  for (const auto* h : rows) {
    means.push_back(h->main.min);
    means.push_back(h->main.max);
  }
  const int dec = decimals_for(means);
  const ProbeDef* def = data.probe(probe);
  bool hib = true;
  if (def) {
    for (const auto& m : def->metrics) {
      if (m.name == first.main_metric) hib = m.higher_is_better();
    }
  }

  t.header = {"model", "combos"};
  t.numeric = {false, true};
  if (has_pass) {
    t.header.push_back("pass /" + k_text + " (mean ± sd)");
    t.numeric.push_back(true);
  }
  t.header.push_back("avg " + first.main_metric + " " + better_arrow(hib) + " (mean ± sd)");
  t.header.push_back(first.main_metric + " range");
  t.header.push_back("gradient?");
  t.numeric.insert(t.numeric.end(), {true, true, false});
  for (const auto* h : rows) {
    std::vector<std::string> row = {h->model, std::to_string(h->combos)};
    if (has_pass) row.push_back(mean_sd(h->pass_count, 2));
    row.push_back(mean_sd(h->main, dec));
    row.push_back(h->main.n == 0 ? "—" : fixed(h->main.min, dec) + " – " + fixed(h->main.max, dec));
    row.push_back(std::string(stats::to_string(h->gradient)));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table cell_table(const RunData& data, const RunSummary& summary, const std::string& probe) {
  Table t;
  const ProbeDef* def = data.probe(probe);
  if (def == nullptr) return t;
  t.header = {"cell", "K", "V", "outcome", "items ok", "failed"};
  t.numeric = {false, false, false, false, true, true};
  std::vector<int> decimals;
  for (const auto& m : def->metrics) {
    t.header.push_back(m.name + " " + better_arrow(m));
    t.numeric.push_back(true);
    decimals.push_back(metric_decimals(summary, probe, m.name));
  }
  for (const std::size_t cell : data.grid_order()) {
    const CellProbeStats* r = summary.find(cell, probe);
    if (r == nullptr) continue;
    const CellDef& c = data.cells()[cell];
    std::vector<std::string> row = {c.id + (c.is_reference ? " (ref)" : ""),
                                    c.type_k,
                                    c.type_v,
                                    c.outcome,
                                    std::to_string(r->items_ok),
                                    std::to_string(r->failed_items.size())};
    for (std::size_t i = 0; i < def->metrics.size(); ++i) {
      const MetricStats* m = summary.find(cell, probe, def->metrics[i].name);
      if (m == nullptr || m->summary.n == 0) {
        row.push_back("—");
        continue;
      }
      const int dec = decimals[i];
      std::string text = fixed(m->summary.mean, dec) + " [" + fixed(m->ci.lower, dec) + ", " +
                         fixed(m->ci.upper, dec) + "]";
      if (m->vs_reference && m->vs_reference->significant) text += " *";
      row.push_back(std::move(text));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table gradient_table(const RunData& data, const RunSummary& summary, const std::string& probe) {
  Table t;
  t.header = {"model", "metric", "ρ bits(K+V) (p)", "gradient?", "K row means: spread", "ρ bits(K) (p)",
              "V column means: spread", "ρ bits(V) (p)", "larger effect"};
  t.numeric = {false, false, true, false, true, true, true, true, false};
  const ProbeDef* def = data.probe(probe);
  if (def == nullptr) return t;
  for (const auto& model : data.groups()) {
    for (const auto& metric : def->metrics) {
      if (!metric.is_judged()) continue;  // a gradient is a quality verdict
      const GridStats* g = summary.grid(model, probe, metric.name);
      if (g == nullptr) continue;
      std::vector<double> means;
      for (const auto& a : g->rows) means.push_back(a.summary.mean);
      const int dec = decimals_for(means);
      std::string larger = "—";
      if (!std::isnan(g->k_spread) && !std::isnan(g->v_spread) && g->k_spread != g->v_spread) {
        larger = g->k_spread > g->v_spread ? "K" : "V";
      }
      t.rows.push_back({model, metric.name + " " + better_arrow(metric), rho_p(g->gradient),
                        std::string(stats::to_string(g->gradient.verdict)), fixed(g->k_spread, dec),
                        rho_p(g->k_gradient), fixed(g->v_spread, dec), rho_p(g->v_gradient), larger});
    }
  }
  return t;
}

Table outcome_table(const RunData& data, const RunSummary& summary) {
  Table t;
  // The path column only when the manifest recorded paths (a run written before them keeps its columns).
  const bool paths = std::any_of(data.cells().begin(), data.cells().end(), [](const CellDef& c) { return !c.path.empty(); });
  t.header = {"cell", "model", "K", "V", "outcome", "items ok", "failed", "KV MiB", "rot K/V", "ready s", "message"};
  t.numeric = {false, false, false, false, false, true, true, true, false, true, false};
  if (paths) {
    t.header.insert(t.header.begin() + 9, "path");
    t.numeric.insert(t.numeric.begin() + 9, false);
  }
  for (const std::size_t cell : data.grid_order()) {
    const CellDef& c = data.cells()[cell];
    std::size_t ok = 0, failed = 0, settled = 0;
    for (const auto& r : summary.results) {
      if (r.cell != cell) continue;
      ok += r.items_ok;
      failed += r.failed_items.size();
      settled += r.items_settled;
    }
    std::string message = c.message;
    if (settled > 0)
      message += (message.empty() ? "" : "; ") + std::string("adaptive: ") + std::to_string(settled) +
                 " item(s) settled, not run";
    // A converted or fallback? path costs speed: say why and what to do.
    if (c.path == "converted" || c.path == "fallback?")
      message += std::string(message.empty() ? "" : "; ") + "path " + c.path + ": " + c.path_reason;
    t.rows.push_back({c.id + (c.is_reference ? " (ref)" : ""), c.group(), c.type_k, c.type_v, c.outcome,
                      std::to_string(ok), std::to_string(failed), fixed(c.kv_mib, 2), c.rotation, fixed(c.ready_s, 1),
                      message});
    if (paths) t.rows.back().insert(t.rows.back().begin() + 9, c.path.empty() ? "—" : c.path);
  }
  return t;
}

std::string grid_block(const RunData& data, const RunSummary& summary, const std::string& model,
                       const std::string& probe, const std::string& metric) {
  const GridStats* g = summary.grid(model, probe, metric);
  std::vector<double> all;
  for (const auto& k : data.k_types()) {
    for (const auto& v : data.v_types()) {
      const auto cell = data.find_cell(model, k, v);
      if (!cell) continue;
      if (const MetricStats* m = summary.find(*cell, probe, metric); m && m->summary.n > 0) all.push_back(m->summary.mean);
    }
  }
  const int dec = decimals_for(all);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"ctk\\ctv"};
  for (const auto& v : data.v_types()) header.push_back(v);
  header.push_back("K mean");
  rows.push_back(header);
  for (const auto& k : data.k_types()) {
    std::vector<std::string> row = {k};
    bool any = false;
    for (const auto& v : data.v_types()) {
      const auto cell = data.find_cell(model, k, v);
      if (!cell) {
        row.push_back("");
        continue;
      }
      any = true;
      const MetricStats* m = summary.find(*cell, probe, metric);
      if (m == nullptr || m->summary.n == 0) {
        row.push_back("—");
        continue;
      }
      std::string text = fixed(m->summary.mean, dec);
      if (m->vs_reference && m->vs_reference->significant) text += "*";
      row.push_back(std::move(text));
    }
    if (!any) continue;
    std::string k_mean = "—";
    if (g) {
      for (const auto& a : g->rows) {
        if (a.type == k) k_mean = fixed(a.summary.mean, dec);
      }
    }
    row.push_back(k_mean);
    rows.push_back(std::move(row));
  }
  std::vector<std::string> v_row = {"V mean"};
  for (const auto& v : data.v_types()) {
    std::string text = "—";
    if (g) {
      for (const auto& a : g->columns) {
        if (a.type == v) text = fixed(a.summary.mean, dec);
      }
    }
    v_row.push_back(text);
  }
  v_row.push_back("");
  rows.push_back(std::move(v_row));

  std::vector<std::size_t> widths(header.size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool star = i > 0 && !row[i].empty() && row[i].back() == '*';
      widths[i] = std::max(widths[i], width(row[i]) - (star ? 1 : 0));
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i == 0) {
        line += pad_right(row[i], widths[i]);
      } else {
        // A trailing '*' hangs outside the column so the digits stay aligned.
        const bool star = !row[i].empty() && row[i].back() == '*';
        const std::string core = star ? row[i].substr(0, row[i].size() - 1) : row[i];
        line += "  " + pad_left(core, widths[i]) + (star ? "*" : " ");
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace kvsweep::report
