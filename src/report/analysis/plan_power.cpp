#include "kvsweep/report/analysis/plan_power.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "kvsweep/report/format.hpp"
#include "kvsweep/stats/noninferiority.hpp"

namespace kvsweep::report {

SettleOutlook settle_outlook(const probe::MetricSpec& metric, double margin, std::size_t items, double alpha) {
  SettleOutlook o{metric.name, metric.kind, margin, items, false, std::nullopt, 0.0, std::nullopt};
  if (metric.kind != probe::MetricKind::binary) {
    o.settles = items >= 2;
    if (!o.settles) o.items_needed = 2;
    return o;
  }
  // Every item passed on both sides; the pass rate does not matter, only that nothing differs.
  stats::PairedTable agree;
  agree.both = static_cast<double>(std::max<std::size_t>(items, 1));
  const stats::NonInferiority best = stats::noninferiority_paired_binary(agree, margin, alpha);
  o.settles = items > 0 && best.verdict == stats::Decision::non_inferior;
  if (!o.settles) o.items_needed = best.items_needed;
  if (std::isfinite(best.lower)) o.margin_settling = std::ceil(-best.lower * 100.0 + 1e-9) / 100.0;
  return o;
}

namespace {

/// The line of one verdict class: `names` the metrics in it (one: its name, else "a, b, c (3 metrics)"),
/// `hint` what names the metric in the --margin advice.
std::string class_line(const SettleOutlook& o, const std::string& names, const std::string& hint) {
  const std::string head = names + " (" + std::string(probe::to_string(o.kind)) + ", margin " + shortest(o.margin) + "): ";
  const std::string have = "this plan has " + std::to_string(o.items);
  if (o.kind != probe::MetricKind::binary) {
    return head + (o.settles ? "can settle from 2 items when the cells agree item for item (" + have +
                                   "; a spread of differences needs more)"
                             : "needs at least 2 items; " + have + " — it will stay unknown");
  }
  if (o.settles) {
    return head + "can settle: " + have + ", enough when the cells agree item for item";
  }
  std::string line = head + (o.items_needed ? "needs ~" + std::to_string(*o.items_needed) + " items"
                                            : std::string("no number of items is enough")) +
                     " even if every item agrees; " + have + " — it will stay unknown";
  if (o.items_needed && o.items_max && *o.items_needed > *o.items_max)
    line += "; more than the " + std::to_string(*o.items_max) + " functions its corpus holds, so more items cannot "
            "settle it: give the corpus more functions, or gate on another metric (the probe's \"gate\")";
  if (o.margin_settling > 0.0 && o.items > 0)
    line += " (a margin of " + shortest(o.margin_settling) + " would settle it, promising less: a cell up to " +
            shortest(std::round(o.margin_settling * 1000.0) / 10.0) +
            " points of pass rate below the reference would pass; recommend --margin " + hint + "=" +
            shortest(o.margin_settling) + ")";
  return line;
}

/// Outlooks in one verdict class read the same line but for their names.
bool same_class(const SettleOutlook& a, const SettleOutlook& b) {
  return a.kind == b.kind && a.margin == b.margin && a.items == b.items && a.settles == b.settles &&
         a.items_needed == b.items_needed && a.margin_settling == b.margin_settling && a.items_max == b.items_max;
}

}  // namespace

std::string settle_line(const SettleOutlook& o) { return class_line(o, o.metric, o.metric); }

std::vector<std::string> settle_lines(const std::vector<SettleOutlook>& outlooks) {
  std::vector<std::vector<const SettleOutlook*>> classes;
  for (const auto& o : outlooks) {
    auto it = std::find_if(classes.begin(), classes.end(), [&](const auto& c) { return same_class(*c.front(), o); });
    if (it == classes.end()) classes.push_back({&o});
    else it->push_back(&o);
  }
  std::vector<std::string> out;
  for (const auto& c : classes) {
    if (c.size() == 1) {
      out.push_back(settle_line(*c.front()));
      continue;
    }
    // A few names in full; past that the first ones and how many more, so one line stays one line.
    std::string names;
    for (std::size_t i = 0; i < c.size() && i < kNamesShown; ++i) names += (i == 0 ? "" : ", ") + c[i]->metric;
    if (c.size() > kNamesShown) names += ", …";
    std::string line = class_line(*c.front(), names + " (" + std::to_string(c.size()) + " metrics)", "METRIC");
    constexpr std::string_view kIt = "— it will stay", kEach = "— each will stay";
    if (const auto at = line.find(kIt); at != std::string::npos) line.replace(at, kIt.size(), kEach);
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace kvsweep::report
