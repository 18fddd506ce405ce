/// export_published: a run's summary written as a published file (`kvsweep published export`).

#include <algorithm>
#include <cmath>
#include <set>

#include "kvsweep/report/analysis/published.hpp"

namespace kvsweep::report {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

bool selected(const std::vector<std::string>& wanted, const std::string& a, const std::string& b = "") {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), a) != wanted.end() ||
         (!b.empty() && std::find(wanted.begin(), wanted.end(), b) != wanted.end());
}

/// The types in the config's grid order (grid.k / grid.v), then any other the run holds, as first seen.
std::vector<std::string> type_order(const sweep::Manifest& m, const char* key, const std::vector<std::string>& seen) {
  std::vector<std::string> out;
  const json grid = m.config.is_object() ? m.config.value("grid", json::object()) : json::object();
  if (grid.is_object() && grid.contains(key) && grid[key].is_array())
    for (const auto& t : grid[key])
      if (t.is_string() && std::find(seen.begin(), seen.end(), t.get<std::string>()) != seen.end())
        out.push_back(t.get<std::string>());
  for (const auto& t : seen)
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  return out;
}

/// Three significant digits of the grid's smallest figure; none for whole numbers (counts, indices).
int decimals_of(const std::vector<double>& values) {
  double smallest = 0;
  bool whole = true;
  for (double v : values) {
    if (std::fabs(v - std::round(v)) > 1e-9) whole = false;
    if (v != 0 && (smallest == 0 || std::fabs(v) < smallest)) smallest = std::fabs(v);
  }
  if (whole || smallest == 0) return whole ? 0 : 3;
  return std::clamp(2 - static_cast<int>(std::floor(std::log10(smallest))), 0, 9);
}

double rounded(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

struct GridKey {
  std::string model, variant, probe;
  bool operator<(const GridKey& o) const { return std::tie(model, variant, probe) < std::tie(o.model, o.variant, o.probe); }
};

/// One grid of a (model, variant, probe) and metric: null where the run has no figure.
ojson grid_json(const Summary& run, const sweep::Manifest& manifest, const GridKey& key, const std::string& metric,
                bool per_item, bool many_models, const PublishedExportOptions& options) {
  std::vector<const SummaryResult*> results;
  std::vector<std::string> ks, vs;
  std::set<std::string> items;
  for (const SummaryResult& r : run.results) {
    if (r.model != key.model || r.variant != key.variant || r.probe != key.probe) continue;
    const SummaryMetric* m = r.metric(metric);
    if (m == nullptr || m->n == 0) continue;
    results.push_back(&r);
    if (std::find(ks.begin(), ks.end(), r.type_k) == ks.end()) ks.push_back(r.type_k);
    if (std::find(vs.begin(), vs.end(), r.type_v) == vs.end()) vs.push_back(r.type_v);
    for (const auto& [item, v] : m->finite_values()) items.insert(item);
  }
  if (results.empty()) return nullptr;
  ks = type_order(manifest, "k", ks);
  vs = type_order(manifest, "v", vs);
  const std::vector<std::string> item_list(items.begin(), items.end());
  auto find = [&](const std::string& k, const std::string& v) -> const SummaryMetric* {
    for (const SummaryResult* r : results)
      if (r->type_k == k && r->type_v == v) return r->metric(metric);
    return nullptr;
  };
  std::vector<double> all;
  for (const SummaryResult* r : results) {
    const SummaryMetric* m = r->metric(metric);
    if (per_item) for (const auto& [item, v] : m->finite_values()) all.push_back(v);
    else all.push_back(m->mean);
  }
  const int decimals = options.decimals >= 0 ? options.decimals : decimals_of(all);
  ojson rows = ojson::array();
  for (const auto& k : ks) {
    ojson values = ojson::array();
    for (const auto& v : vs) {
      const SummaryMetric* m = find(k, v);
      if (m == nullptr) {
        values.push_back(nullptr);
      } else if (!per_item) {
        values.push_back(rounded(m->mean, decimals));
      } else {
        ojson per = ojson::array();
        const auto by_item = m->finite_values();
        for (const auto& item : item_list) {
          const auto it = by_item.find(item);
          per.push_back(it == by_item.end() ? ojson(nullptr) : ojson(rounded(it->second, decimals)));
        }
        values.push_back(std::move(per));
      }
    }
    rows.push_back({{"type_k", k}, {"values", std::move(values)}});
  }
  std::string id = (key.variant.empty() ? "" : key.variant + "-") + key.probe + "-" + metric;
  if (many_models) id = key.model + "-" + id;
  ojson g = {{"id", id}, {"title", metric + " (" + key.probe + ")" + (per_item ? ", per item" : ", cell mean")}};
  if (many_models) g["model"] = key.model;
  if (!key.variant.empty()) {
    g["variant"] = key.variant;
    const json settings = variant_settings(manifest, key.variant);
    if (!settings.is_null()) g["settings"] = settings;
  }
  g["probe"] = key.probe;
  g["metric"] = metric;
  g["decimals"] = decimals;
  if (per_item) g["items"] = item_list;
  g["type_v"] = vs;
  g["rows"] = std::move(rows);
  return g;
}

}  // namespace

core::Expected<ojson> export_published(const Summary& run, const sweep::Manifest& manifest,
                                      const PublishedExportOptions& options) {
  std::set<GridKey> keys;
  std::set<std::string> model_names;
  for (const SummaryResult& r : run.results) {
    const SummaryProbe* p = run.probe(r.probe);
    if (p == nullptr || !selected(options.probes, p->name, p->kind) || !selected(options.variants, r.variant)) continue;
    keys.insert({r.model, r.variant, r.probe});
    model_names.insert(r.model);
  }
  if (keys.empty()) return core::fail(core::ErrorKind::invalid, "nothing to export: no result of the probes and variants asked for");
  ojson grids = ojson::array();
  std::set<std::string> probes_out, metrics_out;
  for (const GridKey& key : keys) {
    const SummaryProbe* p = run.probe(key.probe);
    // A deterministic probe's few items are figures of their own (each prompt's flip index); else the cell mean.
    const bool per_item = p->deterministic && p->items >= 2 && p->items <= 8;
    for (const probe::MetricSpec& spec : p->metrics) {
      const bool wanted = options.metrics.empty() ? spec.is_judged() : selected(options.metrics, spec.name);
      if (!wanted) continue;
      ojson g = grid_json(run, manifest, key, spec.name, per_item, model_names.size() > 1, options);
      if (g.is_null()) continue;
      grids.push_back(std::move(g));
      probes_out.insert(key.probe);
      metrics_out.insert(spec.name);
    }
  }
  for (const auto& m : options.metrics)
    if (!metrics_out.contains(m))
      return core::fail(core::ErrorKind::invalid, "--metric " + m + ": no exported probe of the run records it");
  if (grids.empty()) return core::fail(core::ErrorKind::invalid, "nothing to export: no metric of the probes asked for");

  PublishedSetup setup = run_setup(manifest);
  std::erase_if(setup.probes, [&](const PublishedProbeSetup& p) { return !probes_out.contains(p.name); });
  // Every grid's probe is in the setup with its kind, so the file reads back (a manifest without its entry: the summary's).
  for (const auto& name : probes_out) {
    if (setup.probe(name) != nullptr && setup.probe(name)->name == name) continue;
    const SummaryProbe* p = run.probe(name);
    setup.probes.push_back({p->name, p->kind, p->items, json::object()});
  }
  ojson doc = {{"schema_version", kPublishedSchemaVersion},
               {"kind", "kvsweep-published"},
               {"name", options.name.empty() ? run.run_name : options.name},
               {"source", {{"title", "kvsweep run " + run.run_name}, {"file", "manifest.json"}}},
               {"setup", ojson(setup_json(setup))},
               {"grids", std::move(grids)}};
  return doc;
}

}  // namespace kvsweep::report
