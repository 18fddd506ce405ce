/// read_summary_document: summary.json checked and read into a SummaryDocument.

#include "kvsweep/report/input/summary_document.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/report/input/context.hpp"

namespace kvsweep::report {

namespace {

using json = nlohmann::json;
using config::Site;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A number; NaN when absent or null (summary.json writes NaN as null).
double number_or_nan(const json& obj, const char* key, const Site& site) {
  if (!obj.contains(key) || obj[key].is_null()) return kNaN;
  return config::get_number(obj, key, kNaN, site);
}

/// A count; 0 when absent or null.
std::size_t count(const json& obj, const char* key, const Site& site) {
  const double v = number_or_nan(obj, key, site);
  if (std::isnan(v)) return 0;
  if (v < 0) site.child(key).fail("expected a count, got " + obj[key].dump());
  return static_cast<std::size_t>(v);
}

/// obj[key] when it is an array, an empty array when absent.
const json& array_of(const json& obj, const char* key, const Site& site) {
  static const json empty = json::array();
  if (!obj.contains(key)) return empty;
  if (!obj[key].is_array()) site.child(key).fail("expected an array, got " + config::shown(obj[key]));
  return obj[key];
}

std::string text(const json& obj, const char* key, const Site& site) { return config::get_string(obj, key, "", site); }

SummaryProbe read_probe(const json& p, const Site& site) {
  SummaryProbe probe;
  probe.name = text(p, "name", site);
  probe.kind = text(p, "kind", site);
  probe.items = count(p, "items", site);
  probe.deterministic = config::get_bool(p, "deterministic", false, site);
  const json& metrics = array_of(p, "metrics", site);
  bool complete = !metrics.empty();
  for (const auto& m : metrics) complete = complete && probe::has_declaration(m);
  // A summary of an older run writes the inferred specs and "declared": false.
  probe.declared = complete && config::get_bool(p, "declared", true, site);
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const json& m = metrics[i];
    const Site at = site.child("metrics").index(i);
    if (complete) {
      auto spec = probe::metric_spec_from_json(m, at.file() + ": " + at.path());
      if (!spec) throw core::FatalError(spec.error().message);  // it names the file and path already
      probe.metrics.push_back(std::move(*spec));
    } else if (m.is_object() && !text(m, "name", at).empty()) {
      probe.metrics.push_back(probe::quality(
          text(m, "name", at),
          config::get_bool(m, "higher_is_better", true, at) ? probe::Direction::higher_better
                                                            : probe::Direction::lower_better,
          config::get_bool(m, "binary", false, at) ? probe::MetricKind::binary : probe::MetricKind::continuous));
    }
  }
  return probe;
}

/// The key's fields of a cell or a result, checked as text.
core::CellKey read_key(const json& c, const Site& site) {
  return {text(c, "model", site), text(c, "variant", site), text(c, "type_k", site), text(c, "type_v", site)};
}

SummaryCell read_cell(const json& c, const Site& site) {
  SummaryCell cell;
  cell.id = text(c, "id", site);
  cell.set_key(read_key(c, site));
  cell.outcome = text(c, "outcome", site);
  return cell;
}

SummaryMetric read_metric(const std::string& name, const json& m, const Site& site) {
  if (!m.is_object()) site.fail("expected an object, got " + config::shown(m));
  SummaryMetric metric;
  metric.name = name;
  metric.n = count(m, "n", site);
  metric.mean = number_or_nan(m, "mean", site);
  metric.ci_lower = metric.ci_upper = kNaN;
  const json& ci = array_of(m, "ci95", site);
  if (!ci.empty()) {
    if (ci.size() != 2) site.child("ci95").fail("expected [lower, upper], got " + ci.dump());
    for (std::size_t i = 0; i < 2; ++i) {
      if (!ci[i].is_null() && !ci[i].is_number()) site.child("ci95").index(i).fail("expected a number, got " + config::shown(ci[i]));
    }
    if (ci[0].is_number()) metric.ci_lower = ci[0].get<double>();
    if (ci[1].is_number()) metric.ci_upper = ci[1].get<double>();
  }
  if (m.contains("values")) {
    const json& values = m["values"];
    if (!values.is_object()) site.child("values").fail("expected an object of values by item, got " + config::shown(values));
    for (const auto& [item, v] : values.items()) {
      const double x = number_or_nan(values, item.c_str(), site.child("values"));
      if (std::isfinite(x)) metric.values[item] = x;
    }
  }
  return metric;
}

SummaryResult read_result(const json& r, const Site& site) {
  SummaryResult result;
  result.cell = text(r, "cell", site);
  result.set_key(read_key(r, site));
  result.probe = text(r, "probe", site);
  result.outcome = text(r, "outcome", site);
  result.items_failed = count(r, "items_failed", site);
  result.items_settled = count(r, "items_settled", site);
  if (r.contains("metrics")) {
    const json& metrics = r["metrics"];
    if (!metrics.is_object()) site.child("metrics").fail("expected an object of metrics by name, got " + config::shown(metrics));
    for (const auto& [name, m] : metrics.items()) result.metrics.push_back(read_metric(name, m, site.child("metrics").child(name)));
  }
  return result;
}

SummaryGrid read_grid(const json& g, const Site& site) {
  SummaryGrid grid{text(g, "model", site), text(g, "variant", site), text(g, "probe", site), text(g, "metric", site), ""};
  if (g.contains("gradient")) grid.gradient = text(config::get_member(g, "gradient", site), "verdict", site.child("gradient"));
  return grid;
}

SummaryHeadline read_headline(const json& h, const Site& site) {
  return {text(h, "model", site),       text(h, "variant", site),     text(h, "probe", site),
          text(h, "pass_metric", site), text(h, "main_metric", site), text(h, "gradient", site)};
}

SummaryDocument read_document(const json& doc, const Site& root) {
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array()) {
    root.fail("not a kvsweep summary (no \"results\" array)");
  }
  if (config::get_string(doc, "kind", "", root) != "kvsweep-summary") {
    root.child("kind").fail("not a kvsweep summary (expected \"kvsweep-summary\")");
  }
  SummaryDocument out;
  const json& version = doc.contains("schema_version") ? doc["schema_version"] : json();
  if (!version.is_number_integer() || version.get<long long>() < 1 || version.get<long long>() > kReportSchemaVersion) {
    root.child("schema_version").fail("unsupported: " + version.dump() + " (this kvsweep reads versions up to " +
                                      std::to_string(kReportSchemaVersion) + ")");
  }
  out.schema_version = version.get<int>();
  if (doc.contains("context")) {
    const json& context = doc["context"];
    const Site at = root.child("context");
    if (!context.is_object()) at.fail("expected an object, got " + config::shown(context));
    if (context.contains("run")) {
      out.run_name = text(context["run"], "name", at.child("run"));
      out.config_hash = text(context["run"], "config_hash", at.child("run"));
    }
    if (context.contains("server")) {
      out.server_version = text(context["server"], "version", at.child("server"));
      out.server_build_commit = text(context["server"], "build_commit", at.child("server"));
    }
    out.models = config::get_objects<SummaryModel>(context, "models", at, [](const json& m, const Site& s) {
      return SummaryModel{text(m, "name", s), text(m, "path", s), text(m, "sha256", s)};
    });
  }
  out.probes = config::get_objects<SummaryProbe>(doc, "probes", root, read_probe);
  out.cells = config::get_objects<SummaryCell>(doc, "cells", root, read_cell);
  out.results = config::get_objects<SummaryResult>(doc, "results", root, read_result);
  out.grids = config::get_objects<SummaryGrid>(doc, "grids", root, read_grid);
  out.headlines = config::get_objects<SummaryHeadline>(doc, "headlines", root, read_headline);
  return out;
}

}  // namespace

const SummaryMetric* SummaryResult::metric(std::string_view name) const {
  const auto it = std::find_if(metrics.begin(), metrics.end(), [&](const SummaryMetric& m) { return m.name == name; });
  return it == metrics.end() ? nullptr : &*it;
}

const SummaryModel* SummaryDocument::model(std::string_view name) const {
  const auto it = std::find_if(models.begin(), models.end(), [&](const SummaryModel& m) { return m.name == name; });
  return it == models.end() ? nullptr : &*it;
}

const SummaryProbe* SummaryDocument::probe(std::string_view name) const {
  const auto it = std::find_if(probes.begin(), probes.end(), [&](const SummaryProbe& p) { return p.name == name; });
  return it == probes.end() ? nullptr : &*it;
}



core::Expected<SummaryDocument> read_summary_document(const nlohmann::json& doc, std::string_view which) {
  try {
    return read_document(doc, Site(std::string(which), ""));
  } catch (const core::FatalError& e) {
    return core::fail(core::ErrorKind::parse, e.message);
  }
}

}  // namespace kvsweep::report
