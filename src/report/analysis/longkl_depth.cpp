#include "kvsweep/report/analysis/longkl_depth.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "kvsweep/probe/longkl/longkl_scoring.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/stats/summary.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The bin of a window's key ("d4k-w2" → "d4k").
std::string bin_of(const std::string& key) { return key.substr(0, key.rfind("-w")); }

/// The positions of one cell's windows in one bin, pooled.
struct Pool {
  int start = std::numeric_limits<int>::max();
  std::vector<double> kl, dp;
  std::size_t agree = 0, outside = 0;
};

DepthBinStats stats_of(const std::string& bin, const Pool* pool) {
  DepthBinStats s;
  s.bin = bin;
  if (pool == nullptr || pool->kl.empty()) {
    s.mean_kl = s.p99_kl = s.top1 = s.mean_dp = kNaN;
    return s;
  }
  std::vector<double> sorted = pool->kl;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0, dp = 0;
  for (double v : pool->kl) sum += v;
  for (double v : pool->dp) dp += v;
  const double n = static_cast<double>(pool->kl.size());
  s.start = pool->start;
  s.positions = pool->kl.size();
  s.mean_kl = sum / n;
  s.p99_kl = stats::quantile_sorted(sorted, 0.99);
  s.top1 = static_cast<double>(pool->agree) / n;
  s.mean_dp = dp / n;
  s.outside = pool->outside;
  return s;
}

}  // namespace

std::vector<DepthCurves> longkl_depth(const RunData& data, const ProbeDef& probe) {
  std::vector<DepthCurves> out;
  for (const auto& group : data.groups()) {
    DepthCurves g;
    g.model = group;
    g.probe = probe.name;
    std::map<int, std::string> bins;  // by start: ascending depth
    for (const std::size_t cell : data.grid_order()) {
      if (data.cells()[cell].group() != group) continue;
      std::map<std::string, Pool> pools;
      DepthCell c;
      c.cell = cell;
      for (const auto& item : data.items(cell, probe.name)) {
        if (!item.ok) continue;
        auto r = probe::LongKlResponse::from_json(item.response);
        if (!r || r->positions.empty()) continue;
        Pool& pool = pools[bin_of(item.item)];
        pool.start = std::min(pool.start, r->positions.front());
        for (std::size_t i = 0; i < r->positions.size(); ++i) {
          pool.kl.push_back(r->kl[i]);
          pool.dp.push_back(r->dp[i]);
          pool.agree += r->same_top1[i] != 0;
          pool.outside += static_cast<std::size_t>(r->outside[i]);
          c.last_position = std::max(c.last_position, r->positions[i]);
        }
        c.evaluated += r->evaluated;
        c.replayed += r->replayed_tokens;
        c.positions += static_cast<long long>(r->positions.size());
      }
      if (pools.empty()) continue;
      for (const auto& [name, pool] : pools) {
        bool known = false;
        for (auto& [start, n] : bins) known = known || n == name;
        if (!known) bins[pool.start] = name;
      }
      for (const auto& [name, pool] : pools) c.bins.push_back(stats_of(name, &pool));
      g.cells.push_back(std::move(c));
    }
    if (g.cells.empty()) continue;
    for (const auto& [start, name] : bins) g.bins.push_back(name);
    // Every cell's stats in the group's bin order, empty where it has none.
    for (auto& c : g.cells) {
      std::vector<DepthBinStats> ordered;
      for (const auto& name : g.bins) {
        const auto it = std::find_if(c.bins.begin(), c.bins.end(), [&](const DepthBinStats& s) { return s.bin == name; });
        ordered.push_back(it != c.bins.end() ? *it : stats_of(name, nullptr));
      }
      c.bins = std::move(ordered);
    }
    out.push_back(std::move(g));
  }
  return out;
}

void longkl_depth_section(Document& doc, const RunData& data, const ProbeDef& probe) {
  const auto curves = longkl_depth(data, probe);
  if (curves.empty()) return;
  doc.heading(3, "KL by depth");
  doc.paragraph("KL(reference ‖ cell) at each depth bin, the positions of its windows pooled. It is a lower bound "
                "of the full KL: it is taken over the reference's top-K ids (those the cell also lists) and one "
                "bucket for the rest of the vocabulary. Top-1: the share of positions where the cell's most "
                "probable token is the reference's; Δp: the cell's probability of that token minus the "
                "reference's; outside: reference ids missing from the cell's longer list.");
  for (const auto& g : curves) {
    Table t;
    t.header = {"cell"};
    t.numeric = {false};
    for (const auto& bin : g.bins) {
      t.header.push_back(bin + " KL mean / p99");
      t.numeric.push_back(true);
    }
    for (const char* extra : {"top-1 (deepest)", "Δp (deepest)", "outside", "evaluated tokens"}) {
      t.header.push_back(extra);
      t.numeric.push_back(true);
    }
    for (const auto& c : g.cells) {
      const CellDef& def = data.cells()[c.cell];
      std::vector<std::string> row = {def.types() + (def.is_reference ? " (reference)" : "")};
      std::size_t outside = 0;
      for (const auto& s : c.bins) {
        row.push_back(std::isnan(s.mean_kl) ? "—" : fixed(s.mean_kl, 4) + " / " + fixed(s.p99_kl, 4));
        outside += s.outside;
      }
      const DepthBinStats& deepest = c.bins.back();
      row.push_back(std::isnan(deepest.top1) ? "—" : fixed(100.0 * deepest.top1, 1) + " %");
      row.push_back(signed_fixed(deepest.mean_dp, 4));
      row.push_back(std::to_string(outside));
      // What the schedule costs: the deepest prompt (the document up to it, each token once) plus
      // each position after a window's first; replays of a resumed cell are extra and shown apart.
      const long long bound = c.last_position + c.positions;
      std::string cost = std::to_string(c.evaluated) + " (" + fixed(static_cast<double>(c.evaluated) / static_cast<double>(bound), 3) +
                         " × " + std::to_string(bound) + ")";
      if (c.replayed > 0) cost += " (+" + std::to_string(c.replayed) + " replayed)";
      row.push_back(std::move(cost));
      t.rows.push_back(std::move(row));
    }
    if (curves.size() > 1) doc.paragraph(g.model + ":");
    doc.table(std::move(t));
  }
  doc.paragraph("Evaluated tokens: what the cell's server reported it evaluated (timings.prompt_n) for its "
                "windows, as a share of the document up to the deepest position plus the positions scored.",
                Paragraph::Tone::context);
}

}  // namespace kvsweep::report
