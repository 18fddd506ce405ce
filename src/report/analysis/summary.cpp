/// Summary written and read by its field lists: the top level, the context's parts compare reads, and
/// the getters every field's read uses.

#include "kvsweep/report/analysis/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kvsweep/report/analysis/summary_fields.hpp"

namespace kvsweep::report {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using config::Site;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kKind = "kvsweep-summary";

/// The parts of the context compare and the published comparison read: the run, the server, the models.
void read_context(Summary& s, const json& context, const Site& at) {
  if (!context.is_object()) at.fail("expected an object, got " + config::shown(context));
  if (context.contains("run")) {
    s.run_name = config::get_string(context["run"], "name", "", at.child("run"));
    s.config_hash = config::get_string(context["run"], "config_hash", "", at.child("run"));
  }
  if (context.contains("server")) {
    s.server_version = config::get_string(context["server"], "version", "", at.child("server"));
    s.server_build_commit = config::get_string(context["server"], "build_commit", "", at.child("server"));
  }
  s.models = config::get_objects<SummaryModel>(context, "models", at, [](const json& m, const Site& site) {
    return SummaryModel{config::get_string(m, "name", "", site), config::get_string(m, "path", "", site),
                        config::get_string(m, "sha256", "", site)};
  });
}

// The statistics block: how the numbers were computed, its methods in words.
ojson statistics_json(const SummaryOptions& o) {
  return {
      {"bootstrap",
       {{"statistic", "mean"}, {"iterations", o.bootstrap_iterations}, {"confidence", o.confidence}, {"seed", o.bootstrap_seed}}},
      {"alpha", o.alpha},
      {"paired_test", "mcnemar for metrics declared binary, else wilcoxon signed-rank; cell vs reference on common items"},
      {"multiple_comparisons", "holm across a model's non-reference cells, per probe metric"},
      {"gradient", "spearman rho of bits_per_value(type_k) + bits_per_value(type_v) vs the cell mean"},
  };
}

SummaryOptions read_statistics(const SummaryIn& in) {
  SummaryOptions o;
  if (!in.has("statistics")) return o;
  const SummaryIn stats = in.member("statistics");
  if (stats.has("bootstrap")) {
    const SummaryIn b = stats.member("bootstrap");
    if (b.has("iterations")) o.bootstrap_iterations = b.count("iterations");
    if (b.has("confidence")) o.confidence = b.number("confidence");
    if (b.has("seed")) o.bootstrap_seed = b.count("seed");
  }
  if (stats.has("alpha")) o.alpha = stats.number("alpha");
  return o;
}

template <class T>
ojson rows_json(std::span<const SummaryField<T>> fields, const std::vector<T>& rows) {
  ojson out = ojson::array();
  for (const T& row : rows) out.push_back(write_fields(fields, row));
  return out;
}

SummaryProbe read_probe(const SummaryIn& in) { return read_fields(summary_probe_fields(), in); }
SummaryCell read_cell(const SummaryIn& in) { return read_fields(summary_cell_fields(), in); }
SummaryResult read_result(const SummaryIn& in) { return read_fields(summary_result_fields(), in); }
SummaryGrid read_grid(const SummaryIn& in) { return read_fields(summary_grid_fields(), in); }
SummaryHeadline read_headline(const SummaryIn& in) { return read_fields(summary_headline_fields(), in); }
SummaryVariantEffect read_effect(const SummaryIn& in) { return read_fields(summary_variant_effect_fields(), in); }

constexpr SummaryField<Summary> kFields[] = {
    // schema_version and kind are checked before any field is read (Summary::from_json).
    {"schema_version", [](const Summary& s, ojson& o) { o["schema_version"] = s.schema_version; },
     [](Summary& s, const SummaryIn& in) { s.schema_version = in.obj["schema_version"].get<int>(); }},
    {"kind", [](const Summary&, ojson& o) { o["kind"] = kKind; }, [](Summary&, const SummaryIn&) {}},
    {"context", [](const Summary& s, ojson& o) { if (!s.context.is_null()) o["context"] = ojson(s.context); },
     [](Summary& s, const SummaryIn& in) {
       if (!in.has("context")) return;
       read_context(s, in.obj["context"], in.site.child("context"));
       s.context = in.obj["context"];
     }},
    {"statistics", [](const Summary& s, ojson& o) { o["statistics"] = statistics_json(s.options); },
     [](Summary& s, const SummaryIn& in) { s.options = read_statistics(in); }},
    {"probes", [](const Summary& s, ojson& o) { o["probes"] = rows_json(summary_probe_fields(), s.probes); },
     [](Summary& s, const SummaryIn& in) { s.probes = in.objects("probes", read_probe); }},
    {"cells", [](const Summary& s, ojson& o) { o["cells"] = rows_json(summary_cell_fields(), s.cells); },
     [](Summary& s, const SummaryIn& in) { s.cells = in.objects("cells", read_cell); }},
    {"results", [](const Summary& s, ojson& o) { o["results"] = rows_json(summary_result_fields(), s.results); },
     [](Summary& s, const SummaryIn& in) { s.results = in.objects("results", read_result); }},
    {"grids", [](const Summary& s, ojson& o) { o["grids"] = rows_json(summary_grid_fields(), s.grids); },
     [](Summary& s, const SummaryIn& in) { s.grids = in.objects("grids", read_grid); }},
    {"headlines", [](const Summary& s, ojson& o) { o["headlines"] = rows_json(summary_headline_fields(), s.headlines); },
     [](Summary& s, const SummaryIn& in) { s.headlines = in.objects("headlines", read_headline); }},
    // cost_json()'s record, kept as written (compare does not read it).
    {"cost", [](const Summary& s, ojson& o) { if (!s.cost.is_null()) o["cost"] = s.cost; },
     [](Summary& s, const SummaryIn& in) { if (in.has("cost")) s.cost = in.ordered["cost"]; }},
    // Only in a run with variants.
    {"variant_effects",
     [](const Summary& s, ojson& o) {
       if (!s.variant_effects.empty()) o["variant_effects"] = rows_json(summary_variant_effect_fields(), s.variant_effects);
     },
     [](Summary& s, const SummaryIn& in) { s.variant_effects = in.objects("variant_effects", read_effect); }},
};

/// The document as a Summary, or a FatalError naming the key path of what is wrong.
Summary read_document(const ojson& ordered, const Site& root) {
  const json doc(ordered);  // the checked values, by the getters every reader of a user's JSON uses
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array()) {
    root.fail("not a kvsweep summary (no \"results\" array)");
  }
  if (config::get_string(doc, "kind", "", root) != kKind) {
    root.child("kind").fail("not a kvsweep summary (expected \"kvsweep-summary\")");
  }
  const json& version = doc.contains("schema_version") ? doc["schema_version"] : json();
  if (!version.is_number_integer() || version.get<long long>() < 1 || version.get<long long>() > kReportSchemaVersion) {
    root.child("schema_version").fail("unsupported: " + version.dump() + " (this kvsweep reads versions up to " +
                                      std::to_string(kReportSchemaVersion) + ")");
  }
  return read_fields(summary_fields(), SummaryIn{doc, ordered, root});
}

}  // namespace

std::span<const SummaryField<Summary>> summary_fields() { return kFields; }

// ---- the getters ----

std::string SummaryIn::text(const char* key) const { return config::get_string(obj, key, "", site); }

double SummaryIn::number(const char* key) const {
  // summary.json writes NaN as null; a document still in memory (to_json's) holds the NaN itself.
  if (!obj.contains(key) || obj[key].is_null()) return kNaN;
  if (obj[key].is_number_float() && !std::isfinite(obj[key].get<double>())) return kNaN;
  return config::get_number(obj, key, kNaN, site);
}

std::size_t SummaryIn::count(const char* key) const {
  const double v = number(key);
  if (std::isnan(v)) return 0;
  if (v < 0) site.child(key).fail("expected a count, got " + obj[key].dump());
  // An integer as written (a seed above 2^53 keeps its digits).
  return obj[key].is_number_unsigned() ? obj[key].get<std::size_t>() : static_cast<std::size_t>(v);
}

bool SummaryIn::flag(const char* key, bool fallback) const { return config::get_bool(obj, key, fallback, site); }

std::vector<std::string> SummaryIn::texts(const char* key) const { return config::get_strings(obj, key, {}, site); }

const nlohmann::json& SummaryIn::array(const char* key) const {
  static const json empty = json::array();
  if (!obj.contains(key)) return empty;
  if (!obj[key].is_array()) site.child(key).fail("expected an array, got " + config::shown(obj[key]));
  return obj[key];
}

std::pair<double, double> SummaryIn::interval(const char* key) const {
  std::pair<double, double> out{kNaN, kNaN};
  const json& ci = array(key);
  if (ci.empty()) return out;
  if (ci.size() != 2) site.child(key).fail("expected [lower, upper], got " + ci.dump());
  for (std::size_t i = 0; i < 2; ++i)
    if (!ci[i].is_null() && !ci[i].is_number()) site.child(key).index(i).fail("expected a number, got " + config::shown(ci[i]));
  if (ci[0].is_number()) out.first = ci[0].get<double>();
  if (ci[1].is_number()) out.second = ci[1].get<double>();
  return out;
}

SummaryIn SummaryIn::member(const char* key) const {
  const json& value = config::get_member(obj, key, site);
  if (!value.is_object()) site.child(key).fail("expected an object, got " + config::shown(value));
  return {value, ordered[key], site.child(key)};
}

// ---- Summary ----

std::map<std::string, double> SummaryMetric::finite_values() const {
  std::map<std::string, double> out;
  for (const auto& [item, v] : values)
    if (std::isfinite(v)) out[item] = v;
  return out;
}

const SummaryMetric* SummaryResult::metric(std::string_view name) const {
  const auto it = std::find_if(metrics.begin(), metrics.end(), [&](const SummaryMetric& m) { return m.name == name; });
  return it == metrics.end() ? nullptr : &*it;
}

void Summary::set_context(nlohmann::json block) {
  read_context(*this, block, Site("summary.json", "context"));
  context = std::move(block);
}

const SummaryModel* Summary::model(std::string_view name) const {
  const auto it = std::find_if(models.begin(), models.end(), [&](const SummaryModel& m) { return m.name == name; });
  return it == models.end() ? nullptr : &*it;
}

const SummaryProbe* Summary::probe(std::string_view name) const {
  const auto it = std::find_if(probes.begin(), probes.end(), [&](const SummaryProbe& p) { return p.name == name; });
  return it == probes.end() ? nullptr : &*it;
}

core::Expected<Summary> Summary::from_json(const nlohmann::ordered_json& doc, std::string_view which) {
  try {
    return read_document(doc, Site(std::string(which), ""));
  } catch (const core::FatalError& e) {
    return core::fail(core::ErrorKind::parse, e.message);
  }
}

nlohmann::ordered_json to_json(const Summary& summary) { return write_fields(summary_fields(), summary); }

}  // namespace kvsweep::report
