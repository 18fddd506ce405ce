/// parse_published and load_published: a published/*.json document read into typed numbers.

#include "kvsweep/core/read_file.hpp"
#include "kvsweep/report/analysis/published.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "kvsweep/config/config.hpp"
#include "kvsweep/config/keys.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using json = nlohmann::json;

/// The optional "range": [low, high] of `obj`.
std::optional<std::pair<double, double>> range(const json& obj, const config::Site& site) {
  if (!obj.contains("range")) return std::nullopt;
  const json& r = obj["range"];
  if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number() || r[0].get<double>() > r[1].get<double>()) {
    site.child("range").fail("expected [low, high]");
  }
  return std::pair{r[0].get<double>(), r[1].get<double>()};
}

std::vector<std::string> type_list(const json& obj, const char* key, const config::Site& site) {
  const json& arr = config::get_member(obj, key, site);
  const config::Site list_site = site.child(key);
  if (!arr.is_array() || arr.empty()) list_site.fail("expected a non-empty array of cache types");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_string()) list_site.index(i).fail("expected a string");
    const std::string t = arr[i].get<std::string>();
    config::check_cache_type(t, list_site.index(i));
    if (std::find(out.begin(), out.end(), t) != out.end()) list_site.index(i).fail("'" + t + "' twice");
    out.push_back(t);
  }
  return out;
}

/// A precision as `obj` states it (decimals and/or tolerance); unstated fields stay unset.
Precision parse_precision(const json& obj, const config::Site& site) {
  Precision p;
  if (obj.contains("decimals")) p.decimals = static_cast<int>(config::get_int_in(obj, "decimals", 0, 0, 9, site));
  if (obj.contains("tolerance"))
    p.tolerance = config::get_number_in(obj, "tolerance", 0.0, 0.0, std::numeric_limits<double>::infinity(), site);
  return p;
}

/// Per grid row: one number per V type, or with `items` one array of a number per item.
void parse_row_values(const json& values, const PublishedGrid& grid, const std::string& k, double lo, double hi,
                      const config::Site& values_site, std::vector<PublishedCell>& cells) {
  if (!values.is_array() || values.size() != grid.v_types.size()) {
    values_site.fail("expected " + std::to_string(grid.v_types.size()) + " " +
                     (grid.items.empty() ? "numbers" : "arrays") + " (one per type_v), got " +
                     (values.is_array() ? std::to_string(values.size()) : values.dump()));
  }
  // null: the document gives no figure for this cell (or item).
  auto figure = [&](const json& v, const config::Site& at, const std::string& v_type, const std::string& item) {
    if (v.is_null()) return;
    if (!v.is_number() || !std::isfinite(v.get<double>())) at.fail("expected a finite number, got " + v.dump());
    const double x = v.get<double>();
    if (x < lo || x > hi)
      at.fail(shortest(x) + " is outside the grid's range [" + shortest(lo) + ", " + shortest(hi) + "]");
    cells.push_back({k, v_type, item, x});
  };
  for (std::size_t j = 0; j < values.size(); ++j) {
    if (grid.items.empty()) {
      figure(values[j], values_site.index(j), grid.v_types[j], "");
      continue;
    }
    const json& per_item = values[j];
    if (per_item.is_null()) continue;
    if (!per_item.is_array() || per_item.size() != grid.items.size())
      values_site.index(j).fail("expected " + std::to_string(grid.items.size()) + " numbers (one per item), got " +
                                config::shown(per_item));
    for (std::size_t i = 0; i < per_item.size(); ++i)
      figure(per_item[i], values_site.index(j).index(i), grid.v_types[j], grid.items[i]);
  }
}

PublishedGrid parse_grid(const json& g, const config::Site& site) {
  config::check_keys(g, {"id", "title", "statistic", "run", "note", "range", "variant", "settings", "model", "probe",
                         "metric", "decimals", "tolerance", "items", "type_v", "rows"},
                     site);
  PublishedGrid grid;
  grid.id = config::get_required_string(g, "id", site);
  grid.title = config::get_string(g, "title", "", site);
  grid.variant = config::get_string(g, "variant", "", site);
  grid.model = config::get_string(g, "model", "", site);
  grid.probe = config::get_string(g, "probe", "", site);
  grid.metric = config::get_string(g, "metric", "", site);
  grid.precision = parse_precision(g, site);
  grid.items = config::get_strings(g, "items", {}, site);
  if (g.contains("settings")) {
    const json& st = g["settings"];
    config::check_keys(st, {"env", "args"}, site.child("settings"));
    if (st.contains("env") && !st["env"].is_object()) site.child("settings").child("env").fail("expected an object");
    if (st.contains("args") && !st["args"].is_array()) site.child("settings").child("args").fail("expected an array");
    grid.settings = {{"env", st.value("env", json::object())}, {"args", st.value("args", json::array())}};
    if (grid.variant.empty()) site.child("settings").fail("settings are a variant's: give the grid's \"variant\" too");
  }
  grid.v_types = type_list(g, "type_v", site);
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (auto r = range(g, site)) std::tie(lo, hi) = *r;
  const json& rows = config::get_member(g, "rows", site);
  const config::Site rows_site = site.child("rows");
  if (!rows.is_array() || rows.empty()) rows_site.fail("expected a non-empty array of {type_k, values}");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const config::Site row_site = rows_site.index(i);
    config::check_keys(rows[i], {"type_k", "values"}, row_site);
    const std::string k = config::get_required_string(rows[i], "type_k", row_site);
    config::check_cache_type(k, row_site.child("type_k"));
    if (std::find(grid.k_types.begin(), grid.k_types.end(), k) != grid.k_types.end()) {
      row_site.child("type_k").fail("'" + k + "' twice");
    }
    grid.k_types.push_back(k);
    parse_row_values(config::get_member(rows[i], "values", row_site), grid, k, lo, hi, row_site.child("values"),
                     grid.cells);
  }
  return grid;
}

PublishedSummaryRow parse_summary_row(const json& r, const config::Site& site) {
  config::check_keys(r, {"run", "id", "label", "corpus", "combos", "pass", "matched", "gradient"}, site);
  PublishedSummaryRow row;
  row.id = config::get_required_string(r, "id", site);
  row.label = config::get_string(r, "label", "", site);
  if (row.label.empty()) row.label = row.id;
  const double run = config::get_number(r, "run", kNaN, site);
  row.run = std::isnan(run) ? 0 : static_cast<int>(run);
  row.combos = config::get_number(r, "combos", kNaN, site);
  const config::Site pass_site = site.child("pass");
  const json pass = r.value("pass", json::object());
  config::check_keys(pass, {"mean", "sd"}, pass_site);
  row.pass_mean = config::get_number(pass, "mean", kNaN, pass_site);
  row.pass_sd = config::get_number(pass, "sd", kNaN, pass_site);
  const config::Site matched_site = site.child("matched");
  const json matched = r.value("matched", json::object());
  config::check_keys(matched, {"mean", "sd", "min", "max"}, matched_site);
  row.mean = config::get_number(matched, "mean", kNaN, matched_site);
  row.sd = config::get_number(matched, "sd", kNaN, matched_site);
  row.min = config::get_number(matched, "min", kNaN, matched_site);
  row.max = config::get_number(matched, "max", kNaN, matched_site);
  if (!std::isnan(row.min) && !std::isnan(row.max) && row.min > row.max) matched_site.fail("min > max");
  row.gradient = config::get_string(r, "gradient", "", site);
  return row;
}

PublishedModelDelta parse_model(const json& m, const config::Site& site) {
  config::check_keys(m, {"label", "match", "delta", "reference_value", "other_value", "range", "note"}, site);
  PublishedModelDelta model;
  model.label = config::get_required_string(m, "label", site);
  const json& match = config::get_member(m, "match", site);
  const config::Site match_site = site.child("match");
  if (!match.is_array() || match.empty()) match_site.fail("expected a non-empty array of words");
  for (std::size_t i = 0; i < match.size(); ++i) {
    if (!match[i].is_string() || match[i].get<std::string>().empty()) match_site.index(i).fail("expected a word");
    std::string word = match[i].get<std::string>();
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
    model.match.push_back(word);
  }
  model.delta = config::get_number(m, "delta", kNaN, site);
  model.reference_value = config::get_number(m, "reference_value", kNaN, site);
  model.other_value = config::get_number(m, "other_value", kNaN, site);
  model.range_lo = model.range_hi = kNaN;
  if (auto r = range(m, site)) std::tie(model.range_lo, model.range_hi) = *r;
  if (std::isnan(model.delta) && std::isnan(model.reference_value) && std::isnan(model.other_value) &&
      std::isnan(model.range_lo)) {
    site.fail("no number (give delta, reference_value, other_value or range)");
  }
  model.note = config::get_string(m, "note", "", site);
  return model;
}

PublishedDeltas parse_deltas(const json& d, const config::Site& site) {
  config::check_keys(d, {"title", "definition", "reference", "other", "models", "aggregate"}, site);
  PublishedDeltas out;
  out.title = config::get_string(d, "title", "", site);
  out.definition = config::get_string(d, "definition", "", site);
  const config::Site ref_site = site.child("reference"), other_site = site.child("other");
  const json& ref = config::get_member(d, "reference", site);
  const json& other = config::get_member(d, "other", site);
  config::check_keys(ref, {"label", "type_k", "type_v"}, ref_site);
  config::check_keys(other, {"label", "type_k", "type_v"}, other_site);
  out.reference_label = config::get_required_string(ref, "label", ref_site);
  out.type_k_reference = config::get_required_string(ref, "type_k", ref_site);
  out.type_v_reference = config::get_required_string(ref, "type_v", ref_site);
  out.other_label = config::get_required_string(other, "label", other_site);
  out.type_k_other = config::get_required_string(other, "type_k", other_site);
  out.type_v_other = config::get_required_string(other, "type_v", other_site);
  config::check_cache_type(out.type_k_reference, ref_site.child("type_k"));
  config::check_cache_type(out.type_v_reference, ref_site.child("type_v"));
  config::check_cache_type(out.type_k_other, other_site.child("type_k"));
  config::check_cache_type(out.type_v_other, other_site.child("type_v"));
  out.models = config::get_objects<PublishedModelDelta>(d, "models", site, parse_model, config::Need::one_or_more);
  if (d.contains("aggregate")) {
    const config::Site agg_site = site.child("aggregate");
    config::check_keys(d["aggregate"], {"models", "improved", "mean_delta", "note"}, agg_site);
    PublishedAggregate agg;
    agg.models = config::get_number(d["aggregate"], "models", kNaN, agg_site);
    agg.improved = config::get_number(d["aggregate"], "improved", kNaN, agg_site);
    agg.mean_delta = config::get_number(d["aggregate"], "mean_delta", kNaN, agg_site);
    out.aggregate = agg;
  }
  return out;
}

/// The probe kind a published probe name stands for: a kind itself, else the setup's probe of that name.
std::string kind_of(const std::string& probe, const PublishedSetup& setup, const config::Site& site) {
  const auto kinds = probe::probe_kinds();
  if (std::find(kinds.begin(), kinds.end(), probe) != kinds.end()) return probe;
  if (const PublishedProbeSetup* p = setup.probe(probe)) return p->kind;
  std::vector<std::string> names = kinds;
  for (const auto& p : setup.probes) names.push_back(p.name);
  site.fail("unknown probe '" + probe + "'" + config::did_you_mean_or_list(probe, names) +
            ": name a probe kind, or a probe the setup's \"probes\" lists with its kind");
}

/// A metric the probe's kind declares, or a did-you-mean error.
void check_metric(const std::string& metric, const std::string& kind, const config::Site& site) {
  const auto names = kind_metric_names(kind);
  if (names.empty() || std::find(names.begin(), names.end(), metric) != names.end()) return;
  site.fail("unknown metric '" + metric + "' of a " + kind + " probe" + config::did_you_mean_or_list(metric, names));
}

/// Each grid's probe, metric and precision, its own or the file's; all three must be stated somewhere.
void settle_grids(Published& p, const config::Site& root) {
  for (std::size_t i = 0; i < p.grids.size(); ++i) {
    PublishedGrid& g = p.grids[i];
    const config::Site at = root.child("grids").index(i);
    for (std::size_t j = 0; j < i; ++j)
      if (p.grids[j].id == g.id) at.child("id").fail("'" + g.id + "' twice");
    if (g.probe.empty()) g.probe = p.probe;
    if (g.metric.empty()) g.metric = p.metric;
    if (g.probe.empty()) at.child("probe").fail("missing: state the grid's probe (or the file's \"probe\")");
    if (g.metric.empty()) at.child("metric").fail("missing: state the grid's metric (or the file's \"metric\")");
    if (!g.precision.stated()) g.precision = p.precision;
    if (!g.precision.stated())
      at.fail("no precision: state \"decimals\" (the figures' rounding) or \"tolerance\" (an absolute difference "
              "still reproduced), here or for the whole file");
    check_metric(g.metric, kind_of(g.probe, p.setup, at.child("probe")), at.child("metric"));
  }
}

Published parse_document(const json& doc) {
  const config::Site root("", "");
  if (!doc.is_object()) root.fail("expected a JSON object");
  if (doc.value("kind", std::string()) != "kvsweep-published") {
    root.child("kind").fail("expected \"kvsweep-published\" (is this a published-numbers file?)");
  }
  if (!doc.contains("schema_version") || !doc["schema_version"].is_number_integer() ||
      doc["schema_version"].get<int>() != kPublishedSchemaVersion) {
    root.child("schema_version").fail("expected " + std::to_string(kPublishedSchemaVersion) +
                                      " (1 predates the setup block and stated precision: add \"setup\", state "
                                      "\"decimals\" or \"tolerance\"; docs/published-format.md)");
  }
  config::check_keys(doc, {"schema_version", "kind", "name", "source", "setup", "probe", "metric", "pass_metric",
                           "decimals", "tolerance", "items_per_cell", "summaries", "grids", "deltas", "not_given", "notes"},
                     root);
  Published p;
  p.name = config::get_required_string(doc, "name", root);
  const json& source = config::get_member(doc, "source", root);
  const config::Site source_site = root.child("source");
  config::check_keys(source, {"title", "file", "url", "seed", "transcribed", "citation"}, source_site);
  p.source.title = config::get_required_string(source, "title", source_site);
  p.source.file = config::get_string(source, "file", "", source_site);
  p.source.url = config::get_string(source, "url", "", source_site);
  if (p.source.file.empty() && p.source.url.empty())
    source_site.child("file").fail("missing: give the shipped document's \"file\" or its \"url\"");
  p.source.seed = config::get_string(source, "seed", "", source_site);
  if (!doc.contains("setup")) root.child("setup").fail("missing (an object: model, build, host, context, probes, …)");
  p.setup = parse_setup(doc["setup"], root.child("setup"));
  p.probe = config::get_string(doc, "probe", "", root);
  p.metric = config::get_string(doc, "metric", "", root);
  p.pass_metric = config::get_string(doc, "pass_metric", "", root);
  p.precision = parse_precision(doc, root);
  const double items = config::get_number(doc, "items_per_cell", kNaN, root);
  if (!std::isnan(items)) {
    if (items < 1 || items != std::floor(items)) root.child("items_per_cell").fail("expected a positive integer");
    p.items_per_cell = static_cast<std::size_t>(items);
  }
  if (doc.contains("summaries")) {
    config::check_keys(doc["summaries"], {"title", "rows"}, root.child("summaries"));
    p.summaries = config::get_objects<PublishedSummaryRow>(doc["summaries"], "rows", root.child("summaries"),
                                                           parse_summary_row, config::Need::one_or_more);
  }
  p.grids = config::get_objects<PublishedGrid>(doc, "grids", root, parse_grid);
  settle_grids(p, root);
  if (doc.contains("deltas")) p.deltas = parse_deltas(doc["deltas"], root.child("deltas"));
  if (!p.summaries.empty() || p.deltas) {
    // Summaries and deltas are of the file's probe and metric, at its precision.
    if (p.probe.empty()) root.child("probe").fail("missing: summaries and deltas are of the file's \"probe\"");
    if (p.metric.empty()) root.child("metric").fail("missing: summaries and deltas are of the file's \"metric\"");
    if (!p.precision.stated()) root.child("decimals").fail("missing: state the figures' \"decimals\" or \"tolerance\"");
    const std::string kind = kind_of(p.probe, p.setup, root.child("probe"));
    check_metric(p.metric, kind, root.child("metric"));
    if (!p.pass_metric.empty()) check_metric(p.pass_metric, kind, root.child("pass_metric"));
  }
  if (p.summaries.empty() && p.grids.empty() && !p.deltas) root.fail("no numbers: give summaries, grids or deltas");
  return p;
}

}  // namespace

std::vector<std::string> kind_metric_names(const std::string& kind) {
  // A probe's metrics do not depend on its settings; a kind that reads inputs is built from the
  // smallest config it takes (a generated corpus).
  const std::vector<json> configs = {{{"kind", kind}},
                                     {{"kind", kind}, {"corpus", {{"random_bodies", {{"functions", 2}}}}}}};
  for (const json& cfg : configs) {
    try {
      const auto made = probe::make_probe(cfg, {config::Site("", ""), std::filesystem::path(".")});
      std::vector<std::string> out;
      for (const auto& m : made->metrics()) out.push_back(m.name);
      return out;
    } catch (const core::FatalError&) {
      continue;
    }
  }
  return {};
}

double Precision::allowed() const {
  if (tolerance >= 0) return tolerance;
  return decimals >= 0 ? 0.5 * std::pow(10.0, -decimals) : 0.0;
}

int Precision::shown_decimals() const {
  if (decimals >= 0) return decimals;
  if (tolerance <= 0) return 3;
  return std::clamp(static_cast<int>(std::ceil(-std::log10(tolerance))) + 1, 0, 9);
}

std::string Precision::allowed_text() const {
  std::string text = fixed(allowed(), shown_decimals() + 1);
  if (text.find('.') == std::string::npos) return text;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

core::Expected<Published> parse_published(const nlohmann::json& doc) {
  try {
    return parse_document(doc);
  } catch (const core::FatalError& e) {
    return core::fail(core::ErrorKind::parse, e.message);
  }
}

core::Expected<Published> load_published(const std::filesystem::path& path) {
  const std::optional<std::string> text = core::read_file(path, core::Links::follow);
  if (!text) return core::fail(core::ErrorKind::io, path.string() + ": cannot read (no such file?)");
  const json doc = json::parse(*text, nullptr, false);
  if (doc.is_discarded()) return core::fail(core::ErrorKind::parse, path.string() + ": not valid JSON");
  auto p = parse_published(doc);
  if (!p) return core::fail(p.error().kind, path.string() + ": " + p.error().message);
  return p;
}

}  // namespace kvsweep::report
