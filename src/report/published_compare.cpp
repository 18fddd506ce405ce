/// compare_published: a run's summary document set beside a published one, cell by cell.

#include "kvsweep/report/published.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "kvsweep/report/json_fields.hpp"
#include "kvsweep/stats/summary.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using json = nlohmann::json;

/// Values by item of one metric entry of a summary result.
std::map<std::string, double> item_values(const json& metric) {
  std::map<std::string, double> out;
  if (!metric.is_object() || !metric.contains("values") || !metric["values"].is_object()) return out;
  for (const auto& [item, v] : metric["values"].items()) {
    if (v.is_number() && std::isfinite(v.get<double>())) out[item] = v.get<double>();
  }
  return out;
}

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

/// The run's results indexed by (model, probe, type_k, type_v).
struct RunIndex {
  std::map<std::string, const json*> results;
  static std::string key(const std::string& model, const std::string& probe, const std::string& k, const std::string& v) {
    return model + "\t" + probe + "\t" + k + "\t" + v;
  }
  const json* metric(const std::string& model, const std::string& probe, const std::string& k, const std::string& v,
                     const std::string& name) const {
    auto it = results.find(key(model, probe, k, v));
    if (it == results.end()) return nullptr;
    const json& r = *it->second;
    if (!r.contains("metrics") || !r["metrics"].is_object() || !r["metrics"].contains(name)) return nullptr;
    const json& m = r["metrics"][name];
    if (!m.is_object() || number_field(m, "n") < 1) return nullptr;
    return &m;
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
  if (!run.is_object() || run.value("kind", std::string()) != "kvsweep-summary" || !run.contains("results") ||
      !run["results"].is_array()) {
    return core::fail(core::ErrorKind::parse, "the run's summary is not a kvsweep summary");
  }
  PublishedComparison cmp;
  cmp.published = published;
  cmp.metric = options.metric.empty() ? published.metric : options.metric;
  if (run.contains("context") && run["context"].is_object() && run["context"].contains("run")) {
    cmp.run_name = string_field(run["context"]["run"], "name");
  }

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

  // The run's probes: the one named as the file says, else every probe of that kind.
  std::map<std::string, std::size_t> probe_items;
  std::vector<std::string> all_probes;
  if (run.contains("probes") && run["probes"].is_array()) {
    for (const auto& p : run["probes"]) {
      all_probes.push_back(string_field(p, "name"));
      probe_items[string_field(p, "name")] = static_cast<std::size_t>(std::max(0.0, std::isnan(number_field(p, "items")) ? 0.0 : number_field(p, "items")));
      if (string_field(p, "name") == published.probe) cmp.run_probes = {published.probe};
    }
    if (cmp.run_probes.empty()) {
      for (const auto& p : run["probes"]) {
        if (string_field(p, "kind") == published.probe) cmp.run_probes.push_back(string_field(p, "name"));
      }
    }
  }
  if (cmp.run_probes.empty()) {
    std::string names;
    for (const auto& n : all_probes) names += (names.empty() ? "" : ", ") + n;
    cmp.warnings.push_back("the run has no probe named or of kind '" + published.probe + "' (its probes: " +
                           (names.empty() ? "none" : names) + "); every published number is \"not run\"");
  }

  RunIndex index;
  std::vector<std::string> models;  // in result order, each once
  for (const auto& r : run["results"]) {
    index.results[RunIndex::key(string_field(r, "model"), string_field(r, "probe"), string_field(r, "type_k"), string_field(r, "type_v"))] = &r;
    const std::string m = string_field(r, "model");
    if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
  }
  std::map<std::string, std::string> model_paths;
  if (run.contains("context") && run["context"].is_object() && run["context"].contains("models") &&
      run["context"]["models"].is_array()) {
    for (const auto& m : run["context"]["models"]) model_paths[string_field(m, "name")] = string_field(m, "path");
  }

  // Does the metric exist at all for the matched probes? Say so once rather than 36 "not run"s silently.
  bool metric_seen = false;
  for (const auto& [key, r] : index.results) {
    if (std::find(cmp.run_probes.begin(), cmp.run_probes.end(), string_field(*r, "probe")) == cmp.run_probes.end()) continue;
    if ((*r).contains("metrics") && (*r)["metrics"].is_object() && (*r)["metrics"].contains(cmp.metric)) metric_seen = true;
  }
  if (!cmp.run_probes.empty() && !metric_seen) {
    cmp.warnings.push_back("the run's " + cmp.run_probes.front() + " probe has no metric '" + cmp.metric +
                           "' (--metric NAME picks another)");
  }

  const double slack = 0.5 * std::pow(10.0, -published.decimals);
  const stats::BootstrapOptions boot{stats::Statistic::mean, 2000, 0.95, 42};

  for (const std::string& probe : cmp.run_probes) {
    // Models that have this probe, in result order.
    std::vector<std::string> probe_models;
    for (const auto& m : models) {
      for (const auto& [key, r] : index.results) {
        if (string_field(*r, "model") == m && string_field(*r, "probe") == probe) {
          probe_models.push_back(m);
          break;
        }
      }
    }

    // The run's summary row: per cell, items passing and the metric's mean; then across cells.
    for (const auto& m : probe_models) {
      RunHeadline h;
      h.model = m;
      h.probe = probe;
      std::vector<double> means, passes;
      std::size_t k = probe_items.contains(probe) ? probe_items.at(probe) : 0;
      for (const auto& [key, r] : index.results) {
        if (string_field(*r, "model") != m || string_field(*r, "probe") != probe) continue;
        const json* metric = index.metric(m, probe, string_field(*r, "type_k"), string_field(*r, "type_v"), cmp.metric);
        if (!metric) continue;
        means.push_back(number_field(*metric, "mean"));
        k = std::max(k, static_cast<std::size_t>(number_field(*metric, "n")));
        if (const json* pass = published.pass_metric.empty()
                                   ? nullptr
                                   : index.metric(m, probe, string_field(*r, "type_k"), string_field(*r, "type_v"), published.pass_metric)) {
          double count = 0;
          for (const auto& [item, v] : item_values(*pass)) count += v;
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
      if (run.contains("grids") && run["grids"].is_array()) {
        for (const auto& g : run["grids"]) {
          if (string_field(g, "model") == m && string_field(g, "probe") == probe && string_field(g, "metric") == cmp.metric && g.contains("gradient")) {
            h.gradient = string_field(g["gradient"], "verdict");
          }
        }
      }
      if (h.combos > 0 && !published.summaries.empty()) cmp.headlines.push_back(std::move(h));
    }

    for (const PublishedGrid* grid : grids) {
      std::vector<std::string> grid_models = probe_models;
      if (grid_models.empty()) grid_models.push_back("");
      for (const auto& m : grid_models) {
        GridCheck gc;
        gc.grid_id = grid->id;
        gc.title = grid->title;
        gc.model = m;
        gc.probe = probe;
        for (const auto& cell : grid->cells) {
          CellCheck c = not_run(cell);
          if (const json* metric = index.metric(m, probe, cell.type_k, cell.type_v, cmp.metric)) {
            c.run = true;
            c.n = static_cast<std::size_t>(number_field(*metric, "n"));
            c.run_mean = number_field(*metric, "mean");
            if (metric->contains("ci95") && (*metric)["ci95"].is_array() && (*metric)["ci95"].size() == 2) {
              const json& ci = (*metric)["ci95"];
              c.ci_lower = ci[0].is_number() ? ci[0].get<double>() : kNaN;
              c.ci_upper = ci[1].is_number() ? ci[1].get<double>() : kNaN;
            }
            c.diff = c.run_mean - c.published;
            c.inside = inside_interval(c.published, c.ci_lower, c.ci_upper, slack);
          }
          gc.cells.push_back(std::move(c));
        }
        cmp.grids.push_back(std::move(gc));
      }
    }
  }
  if (cmp.run_probes.empty()) {
    // Nothing to match: list every published cell as not run.
    for (const PublishedGrid* grid : grids) {
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
    const PublishedDeltas& d = *published.deltas;
    auto fill = [&](ModelDeltaCheck& c, const std::string& probe) {
      c.probe = probe;
      const json* ref = index.metric(c.model, probe, d.type_k_reference, d.type_v_reference, cmp.metric);
      const json* other = index.metric(c.model, probe, d.type_k_other, d.type_v_other, cmp.metric);
      auto cell = [](const json* m, bool& has, double& mean, double& lo, double& hi) {
        has = m != nullptr;
        mean = lo = hi = kNaN;
        if (!m) return;
        mean = number_field(*m, "mean");
        if (m->contains("ci95") && (*m)["ci95"].is_array() && (*m)["ci95"].size() == 2 && (*m)["ci95"][0].is_number() &&
            (*m)["ci95"][1].is_number()) {
          lo = (*m)["ci95"][0].get<double>();
          hi = (*m)["ci95"][1].get<double>();
        }
      };
      cell(ref, c.has_reference, c.reference_mean, c.reference_lower, c.reference_upper);
      cell(other, c.has_other, c.other_mean, c.other_lower, c.other_upper);
      c.delta = c.delta_lower = c.delta_upper = kNaN;
      if (!ref || !other) return;
      // Paired over the items both settings answered (the same seeds and texts), as the paired tests do.
      const auto xs = item_values(*ref), ys = item_values(*other);
      std::vector<double> diffs;
      for (const auto& [item, x] : xs) {
        if (auto it = ys.find(item); it != ys.end()) diffs.push_back(x - it->second);
      }
      c.n_pairs = diffs.size();
      if (diffs.empty()) {
        c.delta = c.reference_mean - c.other_mean;
        return;
      }
      c.delta = stats::mean(diffs);
      const stats::ConfidenceInterval ci = stats::bootstrap_ci(diffs, boot);
      c.delta_lower = ci.lower;
      c.delta_upper = ci.upper;
    };

    std::set<std::string> matched_models;
    for (const auto& pm : d.models) {
      bool any = false;
      for (const auto& probe : cmp.run_probes) {
        for (const auto& m : models) {
          std::set<std::string> words = words_of(m);
          if (model_paths.contains(m)) words.merge(words_of(model_paths.at(m)));
          const bool all = std::all_of(pm.match.begin(), pm.match.end(), [&](const std::string& w) { return words.contains(w); });
          if (!all) continue;
          ModelDeltaCheck c;
          c.published = pm;
          c.model = m;
          fill(c, probe);
          if (!c.has_reference && !c.has_other) continue;
          any = true;
          matched_models.insert(m);
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

    // The run's own aggregate: every model with both settings, matched to a published model or not.
    std::vector<double> deltas;
    for (const auto& probe : cmp.run_probes) {
      for (const auto& m : models) {
        ModelDeltaCheck c;
        c.model = m;
        fill(c, probe);
        if (!c.has_reference || !c.has_other) continue;
        deltas.push_back(c.delta);
        if (c.delta > 0) ++cmp.aggregate.improved;
        if (!matched_models.contains(m)) {
          cmp.warnings.push_back("run model " + m + " matches no published model (match words are in the file)");
        }
      }
    }
    cmp.aggregate.models = deltas.size();
    cmp.aggregate.mean_delta = stats::mean(deltas);
  }
  return cmp;
}

}  // namespace kvsweep::report
