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

PublishedGrid parse_grid(const json& g, const config::Site& site) {
  PublishedGrid grid;
  grid.id = config::get_required_string(g, "id", site);
  grid.title = config::get_string(g, "title", "", site);
  grid.v_types = type_list(g, "type_v", site);
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (auto r = range(g, site)) std::tie(lo, hi) = *r;
  const json& rows = config::get_member(g, "rows", site);
  const config::Site rows_site = site.child("rows");
  if (!rows.is_array() || rows.empty()) rows_site.fail("expected a non-empty array of {type_k, values}");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const config::Site row_site = rows_site.index(i);
    const std::string k = config::get_required_string(rows[i], "type_k", row_site);
    config::check_cache_type(k, row_site.child("type_k"));
    if (std::find(grid.k_types.begin(), grid.k_types.end(), k) != grid.k_types.end()) {
      row_site.child("type_k").fail("'" + k + "' twice");
    }
    grid.k_types.push_back(k);
    const json& values = config::get_member(rows[i], "values", row_site);
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
  PublishedSummaryRow row;
  row.id = config::get_required_string(r, "id", site);
  row.label = config::get_string(r, "label", "", site);
  if (row.label.empty()) row.label = row.id;
  const double run = config::get_number(r, "run", kNaN, site);
  row.run = std::isnan(run) ? 0 : static_cast<int>(run);
  row.combos = config::get_number(r, "combos", kNaN, site);
  const config::Site pass_site = site.child("pass");
  const json pass = r.value("pass", json::object());
  row.pass_mean = config::get_number(pass, "mean", kNaN, pass_site);
  row.pass_sd = config::get_number(pass, "sd", kNaN, pass_site);
  const config::Site matched_site = site.child("matched");
  const json matched = r.value("matched", json::object());
  row.mean = config::get_number(matched, "mean", kNaN, matched_site);
  row.sd = config::get_number(matched, "sd", kNaN, matched_site);
  row.min = config::get_number(matched, "min", kNaN, matched_site);
  row.max = config::get_number(matched, "max", kNaN, matched_site);
  if (!std::isnan(row.min) && !std::isnan(row.max) && row.min > row.max) matched_site.fail("min > max");
  row.gradient = config::get_string(r, "gradient", "", site);
  return row;
}

PublishedModelDelta parse_model(const json& m, const config::Site& site) {
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
  if (!d.is_object()) site.fail("expected an object");
  PublishedDeltas out;
  out.title = config::get_string(d, "title", "", site);
  out.definition = config::get_string(d, "definition", "", site);
  const config::Site ref_site = site.child("reference"), other_site = site.child("other");
  const json& ref = config::get_member(d, "reference", site);
  const json& other = config::get_member(d, "other", site);
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
    PublishedAggregate agg;
    agg.models = config::get_number(d["aggregate"], "models", kNaN, agg_site);
    agg.improved = config::get_number(d["aggregate"], "improved", kNaN, agg_site);
    agg.mean_delta = config::get_number(d["aggregate"], "mean_delta", kNaN, agg_site);
    out.aggregate = agg;
  }
  return out;
}

/// The setup's facts a comparison checks (lines, context); the setup is prose for people otherwise, so
/// whatever else it holds, or a value of another shape, is left alone.
void read_setup(const json& doc, Published& p) {
  const auto setup = doc.find("setup");
  if (setup == doc.end() || !setup->is_object()) return;
  if (const auto lines = setup->find("lines"); lines != setup->end() && lines->is_number_integer())
    p.lines = lines->get<int>();
  const auto ctx = setup->find("context_window");
  if (ctx == setup->end()) return;
  if (ctx->is_number()) {
    p.context_tokens = ctx->get<double>();
  } else if (ctx->is_string()) {
    const std::string text = ctx->get<std::string>();
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() && v > 0) p.context_tokens = (*end == 'K' || *end == 'k') ? v * 1000 : v;
  }
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
  p.name = config::get_required_string(doc, "name", root);
  const json& source = config::get_member(doc, "source", root);
  const config::Site source_site = root.child("source");
  p.source.title = config::get_required_string(source, "title", source_site);
  p.source.file = config::get_required_string(source, "file", source_site);
  p.source.seed = config::get_string(source, "seed", "", source_site);
  p.probe = config::get_required_string(doc, "probe", root);
  p.metric = config::get_required_string(doc, "metric", root);
  p.pass_metric = config::get_string(doc, "pass_metric", "", root);
  const double decimals = config::get_number(doc, "decimals", kNaN, root);
  if (!std::isnan(decimals)) {
    if (decimals < 0 || decimals > 9 || decimals != std::floor(decimals)) root.child("decimals").fail("expected an integer 0-9");
    p.decimals = static_cast<int>(decimals);
  }
  const double items = config::get_number(doc, "items_per_cell", kNaN, root);
  if (!std::isnan(items)) {
    if (items < 1 || items != std::floor(items)) root.child("items_per_cell").fail("expected a positive integer");
    p.items_per_cell = static_cast<std::size_t>(items);
  }
  read_setup(doc, p);
  if (doc.contains("summaries")) {
    p.summaries = config::get_objects<PublishedSummaryRow>(doc["summaries"], "rows", root.child("summaries"),
                                                           parse_summary_row, config::Need::one_or_more);
  }
  p.grids = config::get_objects<PublishedGrid>(doc, "grids", root, parse_grid);
  for (std::size_t i = 0; i < p.grids.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (p.grids[j].id == p.grids[i].id) root.child("grids").index(i).child("id").fail("'" + p.grids[j].id + "' twice");
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
  const std::optional<std::string> text = core::read_file(path, core::Links::follow);
  if (!text) return core::fail(core::ErrorKind::io, path.string() + ": cannot read (no such file?)");
  const json doc = json::parse(*text, nullptr, false);
  if (doc.is_discarded()) return core::fail(core::ErrorKind::parse, path.string() + ": not valid JSON");
  auto p = parse_published(doc);
  if (!p) return core::fail(p.error().kind, path.string() + ": " + p.error().message);
  return p;
}

}  // namespace kvsweep::report
