/// parse_published and load_published: a published/*.json document read into typed numbers.

#include "kvsweep/report/published.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <sstream>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/core/cache_types.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using json = nlohmann::json;

const json& member(const json& obj, const char* key, const config::Site& site) {
  if (!obj.is_object() || !obj.contains(key)) site.child(key).fail("missing");
  return obj[key];
}

std::string text(const json& obj, const char* key, const config::Site& site, bool required) {
  if (!obj.is_object() || !obj.contains(key)) {
    if (required) site.child(key).fail("missing (a string)");
    return "";
  }
  const json& v = obj[key];
  if (!v.is_string()) site.child(key).fail("expected a string, got " + v.dump());
  if (required && v.get<std::string>().empty()) site.child(key).fail("empty");
  return v.get<std::string>();
}

/// A number, or NaN when absent: a document that gives no number leaves the key out.
double number(const json& obj, const char* key, const config::Site& site) {
  if (!obj.is_object() || !obj.contains(key)) return kNaN;
  const json& v = obj[key];
  if (!v.is_number()) site.child(key).fail("expected a number, got " + v.dump());
  const double d = v.get<double>();
  if (!std::isfinite(d)) site.child(key).fail("not a finite number");
  return d;
}

/// The optional "range": [low, high] of `obj`.
std::optional<std::pair<double, double>> range(const json& obj, const config::Site& site) {
  if (!obj.contains("range")) return std::nullopt;
  const json& r = obj["range"];
  if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number() || r[0].get<double>() > r[1].get<double>()) {
    site.child("range").fail("expected [low, high]");
  }
  return std::pair{r[0].get<double>(), r[1].get<double>()};
}

void check_type(const std::string& type, const config::Site& site) {
  std::string valid;
  for (const auto& t : core::kCacheTypes) {
    if (t.name == type) return;
    valid += (valid.empty() ? "" : ", ") + std::string(t.name);
  }
  site.fail("unknown cache type '" + type + "' (valid: " + valid + ")");
}

std::vector<std::string> type_list(const json& obj, const char* key, const config::Site& site) {
  const json& arr = member(obj, key, site);
  const config::Site list_site = site.child(key);
  if (!arr.is_array() || arr.empty()) list_site.fail("expected a non-empty array of cache types");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_string()) list_site.index(i).fail("expected a string");
    const std::string t = arr[i].get<std::string>();
    check_type(t, list_site.index(i));
    if (std::find(out.begin(), out.end(), t) != out.end()) list_site.index(i).fail("'" + t + "' twice");
    out.push_back(t);
  }
  return out;
}

PublishedGrid parse_grid(const json& g, const config::Site& site) {
  if (!g.is_object()) site.fail("expected an object");
  PublishedGrid grid;
  grid.id = text(g, "id", site, true);
  grid.title = text(g, "title", site, false);
  grid.v_types = type_list(g, "type_v", site);
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (auto r = range(g, site)) std::tie(lo, hi) = *r;
  const json& rows = member(g, "rows", site);
  const config::Site rows_site = site.child("rows");
  if (!rows.is_array() || rows.empty()) rows_site.fail("expected a non-empty array of {type_k, values}");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const config::Site row_site = rows_site.index(i);
    const std::string k = text(rows[i], "type_k", row_site, true);
    check_type(k, row_site.child("type_k"));
    if (std::find(grid.k_types.begin(), grid.k_types.end(), k) != grid.k_types.end()) {
      row_site.child("type_k").fail("'" + k + "' twice");
    }
    grid.k_types.push_back(k);
    const json& values = member(rows[i], "values", row_site);
    const config::Site values_site = row_site.child("values");
    if (!values.is_array() || values.size() != grid.v_types.size()) {
      values_site.fail("expected " + std::to_string(grid.v_types.size()) + " numbers (one per type_v), got " +
                (values.is_array() ? std::to_string(values.size()) : values.dump()));
    }
    for (std::size_t j = 0; j < values.size(); ++j) {
      if (!values[j].is_number() || !std::isfinite(values[j].get<double>())) {
        values_site.index(j).fail("expected a finite number, got " + values[j].dump());
      }
      const double v = values[j].get<double>();
      if (v < lo || v > hi) {
        values_site.index(j).fail(shortest(v) + " is outside the grid's range [" + shortest(lo) +
                  ", " + shortest(hi) + "]");
      }
      grid.cells.push_back({k, grid.v_types[j], v});
    }
  }
  return grid;
}

PublishedSummaryRow parse_summary_row(const json& r, const config::Site& site) {
  if (!r.is_object()) site.fail("expected an object");
  PublishedSummaryRow row;
  row.id = text(r, "id", site, true);
  row.label = text(r, "label", site, false);
  if (row.label.empty()) row.label = row.id;
  const double run = number(r, "run", site);
  row.run = std::isnan(run) ? 0 : static_cast<int>(run);
  row.combos = number(r, "combos", site);
  const config::Site pass_site = site.child("pass");
  const json pass = r.value("pass", json::object());
  row.pass_mean = number(pass, "mean", pass_site);
  row.pass_sd = number(pass, "sd", pass_site);
  const config::Site matched_site = site.child("matched");
  const json matched = r.value("matched", json::object());
  row.mean = number(matched, "mean", matched_site);
  row.sd = number(matched, "sd", matched_site);
  row.min = number(matched, "min", matched_site);
  row.max = number(matched, "max", matched_site);
  if (!std::isnan(row.min) && !std::isnan(row.max) && row.min > row.max) matched_site.fail("min > max");
  row.gradient = text(r, "gradient", site, false);
  return row;
}

PublishedModelDelta parse_model(const json& m, const config::Site& site) {
  if (!m.is_object()) site.fail("expected an object");
  PublishedModelDelta model;
  model.label = text(m, "label", site, true);
  const json& match = member(m, "match", site);
  const config::Site match_site = site.child("match");
  if (!match.is_array() || match.empty()) match_site.fail("expected a non-empty array of words");
  for (std::size_t i = 0; i < match.size(); ++i) {
    if (!match[i].is_string() || match[i].get<std::string>().empty()) match_site.index(i).fail("expected a word");
    std::string word = match[i].get<std::string>();
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
    model.match.push_back(word);
  }
  model.delta = number(m, "delta", site);
  model.reference_value = number(m, "reference_value", site);
  model.other_value = number(m, "other_value", site);
  model.range_lo = model.range_hi = kNaN;
  if (auto r = range(m, site)) std::tie(model.range_lo, model.range_hi) = *r;
  if (std::isnan(model.delta) && std::isnan(model.reference_value) && std::isnan(model.other_value) &&
      std::isnan(model.range_lo)) {
    site.fail("no number (give delta, reference_value, other_value or range)");
  }
  model.note = text(m, "note", site, false);
  return model;
}

PublishedDeltas parse_deltas(const json& d, const config::Site& site) {
  if (!d.is_object()) site.fail("expected an object");
  PublishedDeltas out;
  out.title = text(d, "title", site, false);
  out.definition = text(d, "definition", site, false);
  const config::Site ref_site = site.child("reference"), other_site = site.child("other");
  const json& ref = member(d, "reference", site);
  const json& other = member(d, "other", site);
  out.reference_label = text(ref, "label", ref_site, true);
  out.type_k_reference = text(ref, "type_k", ref_site, true);
  out.type_v_reference = text(ref, "type_v", ref_site, true);
  out.other_label = text(other, "label", other_site, true);
  out.type_k_other = text(other, "type_k", other_site, true);
  out.type_v_other = text(other, "type_v", other_site, true);
  check_type(out.type_k_reference, ref_site.child("type_k"));
  check_type(out.type_v_reference, ref_site.child("type_v"));
  check_type(out.type_k_other, other_site.child("type_k"));
  check_type(out.type_v_other, other_site.child("type_v"));
  const json& models = member(d, "models", site);
  const config::Site models_site = site.child("models");
  if (!models.is_array() || models.empty()) models_site.fail("expected a non-empty array");
  for (std::size_t i = 0; i < models.size(); ++i) out.models.push_back(parse_model(models[i], models_site.index(i)));
  if (d.contains("aggregate")) {
    const config::Site agg_site = site.child("aggregate");
    PublishedAggregate agg;
    agg.models = number(d["aggregate"], "models", agg_site);
    agg.improved = number(d["aggregate"], "improved", agg_site);
    agg.mean_delta = number(d["aggregate"], "mean_delta", agg_site);
    out.aggregate = agg;
  }
  return out;
}

Published parse_document(const json& doc) {
  const config::Site root("", "");
  if (!doc.is_object()) root.fail("expected a JSON object");
  if (doc.value("kind", std::string()) != "kvsweep-published") {
    root.child("kind").fail("expected \"kvsweep-published\" (is this a published-numbers file?)");
  }
  if (!doc.contains("schema_version") || !doc["schema_version"].is_number_integer() ||
      doc["schema_version"].get<int>() < 1 || doc["schema_version"].get<int>() > kPublishedSchemaVersion) {
    root.child("schema_version").fail("expected an integer from 1 to " + std::to_string(kPublishedSchemaVersion));
  }
  Published p;
  p.name = text(doc, "name", root, true);
  const json& source = member(doc, "source", root);
  p.source.title = text(source, "title", root.child("source"), true);
  p.source.file = text(source, "file", root.child("source"), true);
  p.source.seed = text(source, "seed", root.child("source"), false);
  p.probe = text(doc, "probe", root, true);
  p.metric = text(doc, "metric", root, true);
  p.pass_metric = text(doc, "pass_metric", root, false);
  const double decimals = number(doc, "decimals", root);
  if (!std::isnan(decimals)) {
    if (decimals < 0 || decimals > 9 || decimals != std::floor(decimals)) root.child("decimals").fail("expected an integer 0-9");
    p.decimals = static_cast<int>(decimals);
  }
  const double items = number(doc, "items_per_cell", root);
  if (!std::isnan(items)) {
    if (items < 1 || items != std::floor(items)) root.child("items_per_cell").fail("expected a positive integer");
    p.items_per_cell = static_cast<std::size_t>(items);
  }
  if (doc.contains("summaries")) {
    const json& rows = member(doc["summaries"], "rows", root.child("summaries"));
    if (!rows.is_array() || rows.empty()) root.child("summaries").child("rows").fail("expected a non-empty array");
    for (std::size_t i = 0; i < rows.size(); ++i) p.summaries.push_back(parse_summary_row(rows[i], root.child("summaries").child("rows").index(i)));
  }
  if (doc.contains("grids")) {
    const json& grids = doc["grids"];
    if (!grids.is_array()) root.child("grids").fail("expected an array");
    for (std::size_t i = 0; i < grids.size(); ++i) {
      p.grids.push_back(parse_grid(grids[i], root.child("grids").index(i)));
      for (std::size_t j = 0; j + 1 < p.grids.size(); ++j) {
        if (p.grids[j].id == p.grids.back().id) root.child("grids").index(i).child("id").fail("'" + p.grids[j].id + "' twice");
      }
    }
  }
  if (doc.contains("deltas")) p.deltas = parse_deltas(doc["deltas"], root.child("deltas"));
  if (p.summaries.empty() && p.grids.empty() && !p.deltas) root.fail("no numbers: give summaries, grids or deltas");
  return p;
}

}  // namespace

core::Expected<Published> parse_published(const nlohmann::json& doc) {
  try {
    return parse_document(doc);
  } catch (const core::FatalError& e) {
    return core::fail(core::ErrorKind::parse, e.message);
  }
}

core::Expected<Published> load_published(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::fail(core::ErrorKind::io, path.string() + ": cannot read (no such file?)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const json doc = json::parse(buffer.str(), nullptr, false);
  if (doc.is_discarded()) return core::fail(core::ErrorKind::parse, path.string() + ": not valid JSON");
  auto p = parse_published(doc);
  if (!p) return core::fail(p.error().kind, path.string() + ": " + p.error().message);
  return p;
}

}  // namespace kvsweep::report
