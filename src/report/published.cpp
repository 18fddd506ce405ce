#include "kvsweep/report/published.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "kvsweep/report/format.hpp"
#include "kvsweep/report/tables.hpp"
#include "kvsweep/stats/precision.hpp"
#include "kvsweep/stats/summary.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using json = nlohmann::json;

/// A parse failure carrying the JSON path where it happened; turned into an Error once.
struct Bad {
  std::string message;
};

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string index_path(const std::string& parent, std::size_t i) { return parent + "[" + std::to_string(i) + "]"; }

const json& member(const json& obj, const char* key, const std::string& where) {
  if (!obj.is_object() || !obj.contains(key)) throw Bad{join_path(where, key) + ": missing"};
  return obj[key];
}

std::string text(const json& obj, const char* key, const std::string& where, bool required) {
  if (!obj.is_object() || !obj.contains(key)) {
    if (required) throw Bad{join_path(where, key) + ": missing (a string)"};
    return "";
  }
  const json& v = obj[key];
  if (!v.is_string()) throw Bad{join_path(where, key) + ": expected a string, got " + v.dump()};
  if (required && v.get<std::string>().empty()) throw Bad{join_path(where, key) + ": empty"};
  return v.get<std::string>();
}

/// A number, or NaN when absent: a document that gives no number leaves the key out.
double number(const json& obj, const char* key, const std::string& where) {
  if (!obj.is_object() || !obj.contains(key)) return kNaN;
  const json& v = obj[key];
  if (!v.is_number()) throw Bad{join_path(where, key) + ": expected a number, got " + v.dump()};
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw Bad{join_path(where, key) + ": not a finite number"};
  return d;
}

void check_type(const std::string& type, const std::string& where) {
  if (!stats::bits_per_value(type)) {
    throw Bad{where + ": unknown cache type '" + type +
              "' (valid: f32, f16, bf16, q8_0, q5_1, q5_0, q4_1, q4_0, iq4_nl)"};
  }
}

std::vector<std::string> type_list(const json& obj, const char* key, const std::string& where) {
  const json& arr = member(obj, key, where);
  const std::string path = join_path(where, key);
  if (!arr.is_array() || arr.empty()) throw Bad{path + ": expected a non-empty array of cache types"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_string()) throw Bad{index_path(path, i) + ": expected a string"};
    const std::string t = arr[i].get<std::string>();
    check_type(t, index_path(path, i));
    if (std::find(out.begin(), out.end(), t) != out.end()) throw Bad{index_path(path, i) + ": '" + t + "' twice"};
    out.push_back(t);
  }
  return out;
}

PublishedGrid parse_grid(const json& g, const std::string& where) {
  if (!g.is_object()) throw Bad{where + ": expected an object"};
  PublishedGrid grid;
  grid.id = text(g, "id", where, true);
  grid.title = text(g, "title", where, false);
  grid.v_types = type_list(g, "type_v", where);
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (g.contains("range")) {
    const json& r = g["range"];
    if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number() || r[0].get<double>() > r[1].get<double>()) {
      throw Bad{join_path(where, "range") + ": expected [low, high]"};
    }
    lo = r[0].get<double>();
    hi = r[1].get<double>();
  }
  const json& rows = member(g, "rows", where);
  const std::string rows_path = join_path(where, "rows");
  if (!rows.is_array() || rows.empty()) throw Bad{rows_path + ": expected a non-empty array of {type_k, values}"};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string row_path = index_path(rows_path, i);
    const std::string k = text(rows[i], "type_k", row_path, true);
    check_type(k, join_path(row_path, "type_k"));
    if (std::find(grid.k_types.begin(), grid.k_types.end(), k) != grid.k_types.end()) {
      throw Bad{join_path(row_path, "type_k") + ": '" + k + "' twice"};
    }
    grid.k_types.push_back(k);
    const json& values = member(rows[i], "values", row_path);
    const std::string values_path = join_path(row_path, "values");
    if (!values.is_array() || values.size() != grid.v_types.size()) {
      throw Bad{values_path + ": expected " + std::to_string(grid.v_types.size()) + " numbers (one per type_v), got " +
                (values.is_array() ? std::to_string(values.size()) : values.dump())};
    }
    for (std::size_t j = 0; j < values.size(); ++j) {
      if (!values[j].is_number() || !std::isfinite(values[j].get<double>())) {
        throw Bad{index_path(values_path, j) + ": expected a finite number, got " + values[j].dump()};
      }
      const double v = values[j].get<double>();
      if (v < lo || v > hi) {
        throw Bad{index_path(values_path, j) + ": " + shortest(v) + " is outside the grid's range [" + shortest(lo) +
                  ", " + shortest(hi) + "]"};
      }
      grid.cells.push_back({k, grid.v_types[j], v});
    }
  }
  return grid;
}

PublishedSummaryRow parse_summary_row(const json& r, const std::string& where) {
  if (!r.is_object()) throw Bad{where + ": expected an object"};
  PublishedSummaryRow row;
  row.id = text(r, "id", where, true);
  row.label = text(r, "label", where, false);
  if (row.label.empty()) row.label = row.id;
  const double run = number(r, "run", where);
  row.run = std::isnan(run) ? 0 : static_cast<int>(run);
  row.combos = number(r, "combos", where);
  const std::string pass_path = join_path(where, "pass");
  const json pass = r.value("pass", json::object());
  row.pass_mean = number(pass, "mean", pass_path);
  row.pass_sd = number(pass, "sd", pass_path);
  const std::string matched_path = join_path(where, "matched");
  const json matched = r.value("matched", json::object());
  row.mean = number(matched, "mean", matched_path);
  row.sd = number(matched, "sd", matched_path);
  row.min = number(matched, "min", matched_path);
  row.max = number(matched, "max", matched_path);
  if (!std::isnan(row.min) && !std::isnan(row.max) && row.min > row.max) throw Bad{matched_path + ": min > max"};
  row.gradient = text(r, "gradient", where, false);
  return row;
}

PublishedModelDelta parse_model(const json& m, const std::string& where) {
  if (!m.is_object()) throw Bad{where + ": expected an object"};
  PublishedModelDelta model;
  model.label = text(m, "label", where, true);
  const json& match = member(m, "match", where);
  const std::string match_path = join_path(where, "match");
  if (!match.is_array() || match.empty()) throw Bad{match_path + ": expected a non-empty array of words"};
  for (std::size_t i = 0; i < match.size(); ++i) {
    if (!match[i].is_string() || match[i].get<std::string>().empty()) throw Bad{index_path(match_path, i) + ": expected a word"};
    std::string word = match[i].get<std::string>();
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
    model.match.push_back(word);
  }
  model.delta = number(m, "delta", where);
  model.reference_value = number(m, "reference_value", where);
  model.other_value = number(m, "other_value", where);
  model.range_lo = model.range_hi = kNaN;
  if (m.contains("range")) {
    const json& r = m["range"];
    if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number() || r[0].get<double>() > r[1].get<double>()) {
      throw Bad{join_path(where, "range") + ": expected [low, high]"};
    }
    model.range_lo = r[0].get<double>();
    model.range_hi = r[1].get<double>();
  }
  if (std::isnan(model.delta) && std::isnan(model.reference_value) && std::isnan(model.other_value) &&
      std::isnan(model.range_lo)) {
    throw Bad{where + ": no number (give delta, reference_value, other_value or range)"};
  }
  model.note = text(m, "note", where, false);
  return model;
}

PublishedDeltas parse_deltas(const json& d, const std::string& where) {
  if (!d.is_object()) throw Bad{where + ": expected an object"};
  PublishedDeltas out;
  out.title = text(d, "title", where, false);
  out.definition = text(d, "definition", where, false);
  const std::string ref_path = join_path(where, "reference"), other_path = join_path(where, "other");
  const json& ref = member(d, "reference", where);
  const json& other = member(d, "other", where);
  out.reference_label = text(ref, "label", ref_path, true);
  out.type_k_reference = text(ref, "type_k", ref_path, true);
  out.type_v_reference = text(ref, "type_v", ref_path, true);
  out.other_label = text(other, "label", other_path, true);
  out.type_k_other = text(other, "type_k", other_path, true);
  out.type_v_other = text(other, "type_v", other_path, true);
  check_type(out.type_k_reference, join_path(ref_path, "type_k"));
  check_type(out.type_v_reference, join_path(ref_path, "type_v"));
  check_type(out.type_k_other, join_path(other_path, "type_k"));
  check_type(out.type_v_other, join_path(other_path, "type_v"));
  const json& models = member(d, "models", where);
  const std::string models_path = join_path(where, "models");
  if (!models.is_array() || models.empty()) throw Bad{models_path + ": expected a non-empty array"};
  for (std::size_t i = 0; i < models.size(); ++i) out.models.push_back(parse_model(models[i], index_path(models_path, i)));
  if (d.contains("aggregate")) {
    const std::string agg_path = join_path(where, "aggregate");
    PublishedAggregate agg;
    agg.models = number(d["aggregate"], "models", agg_path);
    agg.improved = number(d["aggregate"], "improved", agg_path);
    agg.mean_delta = number(d["aggregate"], "mean_delta", agg_path);
    out.aggregate = agg;
  }
  return out;
}

Published parse_document(const json& doc) {
  if (!doc.is_object()) throw Bad{"expected a JSON object"};
  if (doc.value("kind", std::string()) != "kvsweep-published") {
    throw Bad{"kind: expected \"kvsweep-published\" (is this a published-numbers file?)"};
  }
  if (!doc.contains("schema_version") || !doc["schema_version"].is_number_integer() ||
      doc["schema_version"].get<int>() < 1 || doc["schema_version"].get<int>() > kPublishedSchemaVersion) {
    throw Bad{"schema_version: expected an integer from 1 to " + std::to_string(kPublishedSchemaVersion)};
  }
  Published p;
  p.name = text(doc, "name", "", true);
  const json& source = member(doc, "source", "");
  p.source.title = text(source, "title", "source", true);
  p.source.file = text(source, "file", "source", true);
  p.source.seed = text(source, "seed", "source", false);
  p.probe = text(doc, "probe", "", true);
  p.metric = text(doc, "metric", "", true);
  p.pass_metric = text(doc, "pass_metric", "", false);
  const double decimals = number(doc, "decimals", "");
  if (!std::isnan(decimals)) {
    if (decimals < 0 || decimals > 9 || decimals != std::floor(decimals)) throw Bad{"decimals: expected an integer 0-9"};
    p.decimals = static_cast<int>(decimals);
  }
  const double items = number(doc, "items_per_cell", "");
  if (!std::isnan(items)) {
    if (items < 1 || items != std::floor(items)) throw Bad{"items_per_cell: expected a positive integer"};
    p.items_per_cell = static_cast<std::size_t>(items);
  }
  if (doc.contains("summaries")) {
    const json& rows = member(doc["summaries"], "rows", "summaries");
    if (!rows.is_array() || rows.empty()) throw Bad{"summaries.rows: expected a non-empty array"};
    for (std::size_t i = 0; i < rows.size(); ++i) p.summaries.push_back(parse_summary_row(rows[i], index_path("summaries.rows", i)));
  }
  if (doc.contains("grids")) {
    const json& grids = doc["grids"];
    if (!grids.is_array()) throw Bad{"grids: expected an array"};
    for (std::size_t i = 0; i < grids.size(); ++i) {
      p.grids.push_back(parse_grid(grids[i], index_path("grids", i)));
      for (std::size_t j = 0; j + 1 < p.grids.size(); ++j) {
        if (p.grids[j].id == p.grids.back().id) throw Bad{index_path("grids", i) + ".id: '" + p.grids[j].id + "' twice"};
      }
    }
  }
  if (doc.contains("deltas")) p.deltas = parse_deltas(doc["deltas"], "deltas");
  if (p.summaries.empty() && p.grids.empty() && !p.deltas) throw Bad{"no numbers: give summaries, grids or deltas"};
  return p;
}

// ---- comparison -------------------------------------------------------------------------------

std::string str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

/// Values by item of one metric entry of a summary result.
std::map<std::string, double> item_values(const json& metric) {
  std::map<std::string, double> out;
  if (!metric.is_object() || !metric.contains("values") || !metric["values"].is_object()) return out;
  for (const auto& [item, v] : metric["values"].items()) {
    if (v.is_number() && std::isfinite(v.get<double>())) out[item] = v.get<double>();
  }
  return out;
}

double num(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return kNaN;
  return j[key].get<double>();
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
    if (!m.is_object() || num(m, "n") < 1) return nullptr;
    return &m;
  }
};

bool inside(double value, double lo, double hi, double slack) {
  return !std::isnan(value) && !std::isnan(lo) && !std::isnan(hi) && value >= lo - slack && value <= hi + slack;
}

}  // namespace

core::Expected<Published> parse_published(const nlohmann::json& doc) {
  try {
    return parse_document(doc);
  } catch (const Bad& bad) {
    return core::fail(core::ErrorKind::parse, bad.message);
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
    cmp.run_name = str(run["context"]["run"], "name");
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
      all_probes.push_back(str(p, "name"));
      probe_items[str(p, "name")] = static_cast<std::size_t>(std::max(0.0, std::isnan(num(p, "items")) ? 0.0 : num(p, "items")));
      if (str(p, "name") == published.probe) cmp.run_probes = {published.probe};
    }
    if (cmp.run_probes.empty()) {
      for (const auto& p : run["probes"]) {
        if (str(p, "kind") == published.probe) cmp.run_probes.push_back(str(p, "name"));
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
    index.results[RunIndex::key(str(r, "model"), str(r, "probe"), str(r, "type_k"), str(r, "type_v"))] = &r;
    const std::string m = str(r, "model");
    if (std::find(models.begin(), models.end(), m) == models.end()) models.push_back(m);
  }
  std::map<std::string, std::string> model_paths;
  if (run.contains("context") && run["context"].is_object() && run["context"].contains("models") &&
      run["context"]["models"].is_array()) {
    for (const auto& m : run["context"]["models"]) model_paths[str(m, "name")] = str(m, "path");
  }

  // Does the metric exist at all for the matched probes? Say so once rather than 36 "not run"s silently.
  bool metric_seen = false;
  for (const auto& [key, r] : index.results) {
    if (std::find(cmp.run_probes.begin(), cmp.run_probes.end(), str(*r, "probe")) == cmp.run_probes.end()) continue;
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
        if (str(*r, "model") == m && str(*r, "probe") == probe) {
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
        if (str(*r, "model") != m || str(*r, "probe") != probe) continue;
        const json* metric = index.metric(m, probe, str(*r, "type_k"), str(*r, "type_v"), cmp.metric);
        if (!metric) continue;
        means.push_back(num(*metric, "mean"));
        k = std::max(k, static_cast<std::size_t>(num(*metric, "n")));
        if (const json* pass = published.pass_metric.empty()
                                   ? nullptr
                                   : index.metric(m, probe, str(*r, "type_k"), str(*r, "type_v"), published.pass_metric)) {
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
          if (str(g, "model") == m && str(g, "probe") == probe && str(g, "metric") == cmp.metric && g.contains("gradient")) {
            h.gradient = str(g["gradient"], "verdict");
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
          CellCheck c;
          c.type_k = cell.type_k;
          c.type_v = cell.type_v;
          c.published = cell.value;
          c.run_mean = c.ci_lower = c.ci_upper = c.diff = kNaN;
          if (const json* metric = index.metric(m, probe, cell.type_k, cell.type_v, cmp.metric)) {
            c.run = true;
            c.n = static_cast<std::size_t>(num(*metric, "n"));
            c.run_mean = num(*metric, "mean");
            if (metric->contains("ci95") && (*metric)["ci95"].is_array() && (*metric)["ci95"].size() == 2) {
              const json& ci = (*metric)["ci95"];
              c.ci_lower = ci[0].is_number() ? ci[0].get<double>() : kNaN;
              c.ci_upper = ci[1].is_number() ? ci[1].get<double>() : kNaN;
            }
            c.diff = c.run_mean - c.published;
            c.inside = inside(c.published, c.ci_lower, c.ci_upper, slack);
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
        CellCheck c;
        c.type_k = cell.type_k;
        c.type_v = cell.type_v;
        c.published = cell.value;
        c.run_mean = c.ci_lower = c.ci_upper = c.diff = kNaN;
        gc.cells.push_back(std::move(c));
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
        mean = num(*m, "mean");
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

namespace {

std::string yes_no(bool b) { return b ? "yes" : "no"; }

std::string mean_sd(double mean, double sd, int dec) {
  if (std::isnan(mean)) return "—";
  if (std::isnan(sd)) return fixed(mean, dec);
  return fixed(mean, dec) + " ± " + fixed(sd, dec);
}

std::string range_text(double lo, double hi, int dec) {
  if (std::isnan(lo) || std::isnan(hi)) return "—";
  return fixed(lo, dec) + " – " + fixed(hi, dec);
}

std::string ci_text(double lo, double hi, int dec) {
  if (std::isnan(lo) || std::isnan(hi)) return "—";
  return "[" + fixed(lo, dec) + ", " + fixed(hi, dec) + "]";
}

std::string count_text(double v) { return std::isnan(v) ? "—" : shortest(v); }

}  // namespace

std::string write_published_comparison(const PublishedComparison& c) {
  const Published& p = c.published;
  const int dec = std::max(p.decimals, 2);
  std::string out = "# Published vs run: " + p.name + "\n\n";
  out += "Source: \"" + p.source.title + "\" (" + p.source.file + (p.source.seed.empty() ? "" : ", seed " + p.source.seed) +
         "). Run: " + (c.run_name.empty() ? "—" : c.run_name) + ". Probe " + p.probe + " (run: " +
         (c.run_probes.empty() ? std::string("none") : c.run_probes.front()) + "), metric " + c.metric +
         (c.metric == p.metric ? "" : " (published: " + p.metric + ")") + ".\n";

  if (!p.summaries.empty()) {
    out += "\n## Run summaries\n\n";
    Table t;
    const std::string per = p.items_per_cell ? " /" + std::to_string(p.items_per_cell) : "";
    t.header = {"source", "run", "combos", "pass (mean ± sd)", "avg " + c.metric + " (mean ± sd)", "range", "gradient?"};
    t.numeric = {false, false, true, true, true, true, false};
    for (const auto& r : p.summaries) {
      t.rows.push_back({"published", md_cell(r.label), count_text(r.combos),
                        std::isnan(r.pass_mean) ? "—" : mean_sd(r.pass_mean, r.pass_sd, dec) + per,
                        mean_sd(r.mean, r.sd, dec), range_text(r.min, r.max, dec), r.gradient.empty() ? "—" : r.gradient});
    }
    for (const auto& h : c.headlines) {
      t.rows.push_back({"this run", md_cell(h.model + " · " + h.probe), std::to_string(h.combos),
                        std::isnan(h.pass_mean) ? "—" : mean_sd(h.pass_mean, h.pass_sd, dec) + " /" + std::to_string(h.k),
                        mean_sd(h.mean, h.sd, dec), range_text(h.min, h.max, dec), h.gradient.empty() ? "—" : h.gradient});
    }
    if (c.headlines.empty()) t.rows.push_back({"this run", "not run", "—", "—", "—", "—", "—"});
    out += render_markdown(t);
  }

  for (const auto& g : c.grids) {
    out += "\n## Grid " + g.grid_id + (g.title.empty() ? "" : ": " + g.title) + "\n\n";
    out += "Run: model " + (g.model.empty() ? std::string("—") : g.model) + ", probe " +
           (g.probe.empty() ? std::string("—") : g.probe) + ", metric " + c.metric + ".\n\n";
    std::vector<double> values;
    for (const auto& cell : g.cells) {
      values.push_back(cell.published);
      if (cell.run) values.push_back(cell.run_mean);
    }
    const int gdec = std::max(decimals_for(values), p.decimals);
    Table t;
    t.header = {"ctk", "ctv", "published", "run", "run − published", "run 95% CI", "n", "inside CI?"};
    t.numeric = {false, false, true, true, true, true, true, false};
    for (const auto& cell : g.cells) {
      if (!cell.run) {
        t.rows.push_back({cell.type_k, cell.type_v, fixed(cell.published, gdec), "not run", "—", "—", "—", "—"});
        continue;
      }
      t.rows.push_back({cell.type_k, cell.type_v, fixed(cell.published, gdec), fixed(cell.run_mean, gdec),
                        signed_fixed(cell.diff, gdec), ci_text(cell.ci_lower, cell.ci_upper, gdec), std::to_string(cell.n),
                        yes_no(cell.inside)});
    }
    out += render_markdown(t);
    const std::size_t run = g.cells.size() - g.count_not_run();
    out += "\n" + std::to_string(g.count_inside()) + " of " + std::to_string(run) +
           " run cells hold the published value in their 95% CI; " + std::to_string(g.count_not_run()) + " of " +
           std::to_string(g.cells.size()) + " published cells not run.\n";
  }

  if (p.deltas) {
    const PublishedDeltas& d = *p.deltas;
    out += "\n## " + (d.title.empty() ? std::string("Per-model deltas") : d.title) + "\n\n";
    out += "Δ = " + d.reference_label + " (" + d.type_k_reference + "/" + d.type_v_reference + ") − " + d.other_label + " (" +
           d.type_k_other + "/" + d.type_v_other + ") of " + c.metric + "; the run's Δ is paired over common items.\n\n";
    Table t;
    t.header = {"published model", "run model", "published Δ", "run Δ", "run Δ 95% CI", "inside CI?",
                "published " + d.reference_label, "run " + d.type_k_reference + "/" + d.type_v_reference,
                "published " + d.other_label, "run " + d.type_k_other + "/" + d.type_v_other};
    t.numeric = {false, false, true, true, true, false, true, true, true, true};
    auto value_cell = [&](double published_value, double lo_range, double hi_range) {
      if (!std::isnan(published_value)) return fixed(published_value, dec);
      if (!std::isnan(lo_range)) return "~" + range_text(lo_range, hi_range, dec);
      return std::string("—");
    };
    auto run_cell = [&](bool has, double mean, double lo, double hi) {
      if (!has) return std::string("not run");
      return fixed(mean, std::max(dec, 3)) + " " + ci_text(lo, hi, std::max(dec, 3));
    };
    for (const auto& m : c.deltas) {
      const auto& pm = m.published;
      const std::string published_delta = std::isnan(pm.delta) ? "—" : signed_fixed(pm.delta, dec);
      if (m.model.empty()) {
        t.rows.push_back({md_cell(pm.label), "not run", published_delta, "—", "—", "—",
                          value_cell(pm.reference_value, pm.range_lo, pm.range_hi), "—",
                          value_cell(pm.other_value, pm.range_lo, pm.range_hi), "—"});
        continue;
      }
      const int rdec = std::max(dec, 3);
      const std::string in = std::isnan(pm.delta) || std::isnan(m.delta_lower)
                                 ? "—"
                                 : yes_no(inside(pm.delta, m.delta_lower, m.delta_upper, 0.5 * std::pow(10.0, -p.decimals)));
      t.rows.push_back({md_cell(pm.label), md_cell(m.model), published_delta,
                        std::isnan(m.delta) ? "—" : signed_fixed(m.delta, rdec),
                        ci_text(m.delta_lower, m.delta_upper, rdec), in,
                        value_cell(pm.reference_value, pm.range_lo, pm.range_hi),
                        run_cell(m.has_reference, m.reference_mean, m.reference_lower, m.reference_upper),
                        value_cell(pm.other_value, pm.range_lo, pm.range_hi),
                        run_cell(m.has_other, m.other_mean, m.other_lower, m.other_upper)});
    }
    out += render_markdown(t);
    if (d.aggregate) {
      const auto& a = *d.aggregate;
      out += "\nPublished: " + count_text(a.models) + " models, " + count_text(a.improved) + " improved under " +
             d.reference_label + ", mean Δ " + (std::isnan(a.mean_delta) ? "—" : signed_fixed(a.mean_delta, dec)) + ".\n";
    }
    out += (d.aggregate ? "" : "\n") + std::string("This run: ") + std::to_string(c.aggregate.models) +
           (c.aggregate.models == 1 ? " model" : " models") + " with both settings, " +
           std::to_string(c.aggregate.improved) + " improved under " + d.reference_label + ", mean Δ " + (c.aggregate.models ? signed_fixed(c.aggregate.mean_delta, std::max(dec, 3)) : "—") + ".\n";
  }
  return out;
}

}  // namespace kvsweep::report
