/// The field lists of summary.json's probes, cells, results, their metrics and tests.

#include "kvsweep/report/analysis/summary_fields.hpp"

#include <algorithm>

namespace kvsweep::report {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

template <class T>
using Field = SummaryField<T>;

// ---- a probe and its metric declarations ----

void write_probe_metrics(const SummaryProbe& p, ojson& out) {
  ojson metrics = ojson::array();
  for (const auto& spec : p.metrics) {
    ojson entry(probe::to_json(spec));
    entry["binary"] = std::find(p.binary.begin(), p.binary.end(), spec.name) != p.binary.end();
    metrics.push_back(std::move(entry));
  }
  out["metrics"] = std::move(metrics);
}

void read_probe_metrics(SummaryProbe& p, const SummaryIn& in) {
  const json& metrics = in.array("metrics");
  bool complete = !metrics.empty();
  for (const auto& m : metrics) complete = complete && probe::has_declaration(m);
  // A summary of an older run writes the inferred specs and "declared": false.
  p.inferred = !complete;
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const json& m = metrics[i];
    const config::Site at = in.site.child("metrics").index(i);
    if (complete) {
      auto spec = probe::metric_spec_from_json(m, at.file() + ": " + at.path());
      if (!spec) throw core::FatalError(spec.error().message);  // it names the file and path already
      if (config::get_bool(m, "binary", false, at)) p.binary.push_back(spec->name);
      p.metrics.push_back(std::move(*spec));
    } else if (m.is_object() && !config::get_string(m, "name", "", at).empty()) {
      const bool binary = config::get_bool(m, "binary", false, at);
      p.metrics.push_back(probe::quality(
          config::get_string(m, "name", "", at),
          config::get_bool(m, "higher_is_better", true, at) ? probe::Direction::higher_better
                                                            : probe::Direction::lower_better,
          binary ? probe::MetricKind::binary : probe::MetricKind::continuous));
      if (binary) p.binary.push_back(p.metrics.back().name);
    }
  }
}

constexpr Field<SummaryProbe> kProbeFields[] = {
    {"name", [](const SummaryProbe& p, ojson& o) { o["name"] = p.name; },
     [](SummaryProbe& p, const SummaryIn& in) { p.name = in.text("name"); }},
    {"kind", [](const SummaryProbe& p, ojson& o) { o["kind"] = p.kind; },
     [](SummaryProbe& p, const SummaryIn& in) { p.kind = in.text("kind"); }},
    {"items", [](const SummaryProbe& p, ojson& o) { o["items"] = p.items; },
     [](SummaryProbe& p, const SummaryIn& in) { p.items = in.count("items"); }},
    {"deterministic", [](const SummaryProbe& p, ojson& o) { o["deterministic"] = p.deterministic; },
     [](SummaryProbe& p, const SummaryIn& in) { p.deterministic = in.flag("deterministic", false); }},
    {"declared", [](const SummaryProbe& p, ojson& o) { o["declared"] = p.declared; },
     [](SummaryProbe& p, const SummaryIn& in) { p.declared = in.flag("declared", true); }},
    {"pass_metric", [](const SummaryProbe& p, ojson& o) { o["pass_metric"] = p.pass_metric; },
     [](SummaryProbe& p, const SummaryIn& in) { p.pass_metric = in.text("pass_metric"); }},
    {"main_metric", [](const SummaryProbe& p, ojson& o) { o["main_metric"] = p.main_metric; },
     [](SummaryProbe& p, const SummaryIn& in) { p.main_metric = in.text("main_metric"); }},
    {"metrics", write_probe_metrics, read_probe_metrics},
};

// ---- a cell ----

/// The reported settings compare explains by: `found`, `declared`, then sweep::reported_settings().
void write_effective(const SummaryCell& c, ojson& out) {
  if (!c.effective) return;
  ojson effective = ojson::object();
  if (c.effective->found) effective["found"] = *c.effective->found;
  if (c.effective->declared) effective["declared"] = *c.effective->declared;
  for (const sweep::ReportedSetting& setting : sweep::reported_settings())
    if (const json value = setting.value(*c.effective); !value.is_null()) effective[setting.name] = ojson(value);
  out["effective"] = std::move(effective);
}

DeviceBuffers read_device(const SummaryIn& in) {
  return {in.text("device"), in.flag("gpu", false), in.number("model_mib"), in.number("kv_mib"), in.number("compute_mib")};
}

void write_memory(const SummaryCell& c, ojson& out) {
  if (c.memory.empty()) return;
  ojson memory = ojson::array();
  for (const auto& d : c.memory)
    memory.push_back({{"device", d.device}, {"gpu", d.gpu}, {"model_mib", d.model_mib}, {"kv_mib", d.kv_mib},
                      {"compute_mib", d.compute_mib}});
  out["memory"] = std::move(memory);
}

constexpr Field<SummaryCell> kCellFields[] = {
    {"id", [](const SummaryCell& c, ojson& o) { o["id"] = c.id; }, [](SummaryCell& c, const SummaryIn& in) { c.id = in.text("id"); }},
    {"model", [](const SummaryCell& c, ojson& o) { o["model"] = c.model; },
     [](SummaryCell& c, const SummaryIn& in) { c.model = in.text("model"); }},
    {"type_k", [](const SummaryCell& c, ojson& o) { o["type_k"] = c.type_k; },
     [](SummaryCell& c, const SummaryIn& in) { c.type_k = in.text("type_k"); }},
    {"type_v", [](const SummaryCell& c, ojson& o) { o["type_v"] = c.type_v; },
     [](SummaryCell& c, const SummaryIn& in) { c.type_v = in.text("type_v"); }},
    {"is_reference", [](const SummaryCell& c, ojson& o) { o["is_reference"] = c.is_reference; },
     [](SummaryCell& c, const SummaryIn& in) { c.is_reference = in.flag("is_reference", false); }},
    {"outcome", [](const SummaryCell& c, ojson& o) { o["outcome"] = c.outcome; },
     [](SummaryCell& c, const SummaryIn& in) { c.outcome = in.text("outcome"); }},
    {"message", [](const SummaryCell& c, ojson& o) { o["message"] = c.message; },
     [](SummaryCell& c, const SummaryIn& in) { c.message = in.text("message"); }},
    {"kv_mib", [](const SummaryCell& c, ojson& o) { o["kv_mib"] = c.kv_mib; },
     [](SummaryCell& c, const SummaryIn& in) { c.kv_mib = in.number("kv_mib"); }},
    // Only in a run with variants.
    {"variant", [](const SummaryCell& c, ojson& o) { if (!c.variant.empty()) o["variant"] = c.variant; },
     [](SummaryCell& c, const SummaryIn& in) { c.variant = in.text("variant"); }},
    // The attention path and why, when the manifest has them.
    {"path", [](const SummaryCell& c, ojson& o) { if (!c.path.empty()) o["path"] = c.path; },
     [](SummaryCell& c, const SummaryIn& in) { c.path = in.text("path"); }},
    {"path_reason", [](const SummaryCell& c, ojson& o) { if (!c.path.empty()) o["path_reason"] = c.path_reason; },
     [](SummaryCell& c, const SummaryIn& in) { c.path_reason = in.text("path_reason"); }},
    {"effective", write_effective,
     [](SummaryCell& c, const SummaryIn& in) {
       if (in.has("effective")) c.effective = sweep::CellEffective::from_json(in.member("effective").obj);
     }},
    {"memory", write_memory, [](SummaryCell& c, const SummaryIn& in) { c.memory = in.objects("memory", read_device); }},
};

// ---- a test against another cell ----

constexpr Field<SummaryTest> kTestFields[] = {
    {"reference", [](const SummaryTest& t, ojson& o) { o["reference"] = t.reference; },
     [](SummaryTest& t, const SummaryIn& in) { t.reference = in.text("reference"); }},
    {"test", [](const SummaryTest& t, ojson& o) { o["test"] = t.test.test; },
     [](SummaryTest& t, const SummaryIn& in) { t.test.test = in.text("test"); }},
    {"n_pairs", [](const SummaryTest& t, ojson& o) { o["n_pairs"] = t.test.n_pairs; },
     [](SummaryTest& t, const SummaryIn& in) { t.test.n_pairs = in.count("n_pairs"); }},
    {"delta", [](const SummaryTest& t, ojson& o) { o["delta"] = t.test.delta; },
     [](SummaryTest& t, const SummaryIn& in) { t.test.delta = in.number("delta"); }},
    {"delta_ci95", [](const SummaryTest& t, ojson& o) { o["delta_ci95"] = ojson::array({t.test.delta_ci.lower, t.test.delta_ci.upper}); },
     [](SummaryTest& t, const SummaryIn& in) { std::tie(t.test.delta_ci.lower, t.test.delta_ci.upper) = in.interval("delta_ci95"); }},
    {"p", [](const SummaryTest& t, ojson& o) { o["p"] = t.test.p; }, [](SummaryTest& t, const SummaryIn& in) { t.test.p = in.number("p"); }},
    {"p_holm", [](const SummaryTest& t, ojson& o) { o["p_holm"] = t.test.p_holm; },
     [](SummaryTest& t, const SummaryIn& in) { t.test.p_holm = in.number("p_holm"); }},
    {"significant", [](const SummaryTest& t, ojson& o) { o["significant"] = t.test.significant; },
     [](SummaryTest& t, const SummaryIn& in) { t.test.significant = in.flag("significant", false); }},
    // McNemar's discordant pairs, or Wilcoxon's rank sums: the test's own numbers.
    {"b", [](const SummaryTest& t, ojson& o) { if (t.test.test == "mcnemar") o["b"] = t.test.b; },
     [](SummaryTest& t, const SummaryIn& in) { t.test.b = in.count("b"); }},
    {"c", [](const SummaryTest& t, ojson& o) { if (t.test.test == "mcnemar") o["c"] = t.test.c; },
     [](SummaryTest& t, const SummaryIn& in) { t.test.c = in.count("c"); }},
    {"w_plus", [](const SummaryTest& t, ojson& o) { if (t.test.test != "mcnemar") o["w_plus"] = t.test.w_plus; },
     [](SummaryTest& t, const SummaryIn& in) { t.test.w_plus = in.number("w_plus"); }},
    {"w_minus", [](const SummaryTest& t, ojson& o) { if (t.test.test != "mcnemar") o["w_minus"] = t.test.w_minus; },
     [](SummaryTest& t, const SummaryIn& in) { t.test.w_minus = in.number("w_minus"); }},
};

// ---- a metric of a result ----

void write_values(const SummaryMetric& m, ojson& out) {
  ojson values = ojson::object();
  for (const auto& [item, v] : m.values) values[item] = v;
  out["values"] = std::move(values);
}

void read_values(SummaryMetric& m, const SummaryIn& in) {
  if (!in.has("values")) return;
  const json& values = in.obj["values"];
  const config::Site at = in.site.child("values");
  if (!values.is_object()) at.fail("expected an object of values by item, got " + config::shown(values));
  const SummaryIn by_item{values, in.ordered["values"], at};
  for (const auto& [item, v] : in.ordered["values"].items()) m.values.emplace_back(item, by_item.number(item.c_str()));
}

constexpr Field<SummaryMetric> kMetricFields[] = {
    {"n", [](const SummaryMetric& m, ojson& o) { o["n"] = m.n; }, [](SummaryMetric& m, const SummaryIn& in) { m.n = in.count("n"); }},
    {"mean", [](const SummaryMetric& m, ojson& o) { o["mean"] = m.mean; },
     [](SummaryMetric& m, const SummaryIn& in) { m.mean = in.number("mean"); }},
    {"sd", [](const SummaryMetric& m, ojson& o) { o["sd"] = m.sd; }, [](SummaryMetric& m, const SummaryIn& in) { m.sd = in.number("sd"); }},
    {"min", [](const SummaryMetric& m, ojson& o) { o["min"] = m.min; },
     [](SummaryMetric& m, const SummaryIn& in) { m.min = in.number("min"); }},
    {"max", [](const SummaryMetric& m, ojson& o) { o["max"] = m.max; },
     [](SummaryMetric& m, const SummaryIn& in) { m.max = in.number("max"); }},
    {"median", [](const SummaryMetric& m, ojson& o) { o["median"] = m.median; },
     [](SummaryMetric& m, const SummaryIn& in) { m.median = in.number("median"); }},
    {"ci95", [](const SummaryMetric& m, ojson& o) { o["ci95"] = ojson::array({m.ci_lower, m.ci_upper}); },
     [](SummaryMetric& m, const SummaryIn& in) { std::tie(m.ci_lower, m.ci_upper) = in.interval("ci95"); }},
    {"vs_reference",
     [](const SummaryMetric& m, ojson& o) {
       if (m.vs_reference) o["vs_reference"] = write_fields(summary_test_fields(), *m.vs_reference);
     },
     [](SummaryMetric& m, const SummaryIn& in) {
       if (in.has("vs_reference")) m.vs_reference = read_fields(summary_test_fields(), in.member("vs_reference"));
     }},
    {"values", write_values, read_values},
};

// ---- a (cell, probe) result ----

void write_result_metrics(const SummaryResult& r, ojson& out) {
  ojson metrics = ojson::object();
  for (const auto& m : r.metrics) metrics[m.name] = write_fields(summary_metric_fields(), m);
  out["metrics"] = std::move(metrics);
}

void read_result_metrics(SummaryResult& r, const SummaryIn& in) {
  if (!in.has("metrics")) return;
  const json& metrics = in.obj["metrics"];
  const config::Site at = in.site.child("metrics");
  if (!metrics.is_object()) at.fail("expected an object of metrics by name, got " + config::shown(metrics));
  // In the file's order: the probe's metric order, as written.
  for (const auto& [name, ordered] : in.ordered["metrics"].items()) {
    const json& m = metrics[name];
    if (!m.is_object()) at.child(name).fail("expected an object, got " + config::shown(m));
    r.metrics.push_back(read_fields(summary_metric_fields(), SummaryIn{m, ordered, at.child(name)}));
    r.metrics.back().name = name;
  }
}

constexpr Field<SummaryResult> kResultFields[] = {
    {"cell", [](const SummaryResult& r, ojson& o) { o["cell"] = r.cell; },
     [](SummaryResult& r, const SummaryIn& in) { r.cell = in.text("cell"); }},
    {"model", [](const SummaryResult& r, ojson& o) { o["model"] = r.model; },
     [](SummaryResult& r, const SummaryIn& in) { r.model = in.text("model"); }},
    {"type_k", [](const SummaryResult& r, ojson& o) { o["type_k"] = r.type_k; },
     [](SummaryResult& r, const SummaryIn& in) { r.type_k = in.text("type_k"); }},
    {"type_v", [](const SummaryResult& r, ojson& o) { o["type_v"] = r.type_v; },
     [](SummaryResult& r, const SummaryIn& in) { r.type_v = in.text("type_v"); }},
    {"probe", [](const SummaryResult& r, ojson& o) { o["probe"] = r.probe; },
     [](SummaryResult& r, const SummaryIn& in) { r.probe = in.text("probe"); }},
    {"outcome", [](const SummaryResult& r, ojson& o) { o["outcome"] = r.outcome; },
     [](SummaryResult& r, const SummaryIn& in) { r.outcome = in.text("outcome"); }},
    {"items_ok", [](const SummaryResult& r, ojson& o) { o["items_ok"] = r.items_ok; },
     [](SummaryResult& r, const SummaryIn& in) { r.items_ok = in.count("items_ok"); }},
    {"items_failed", [](const SummaryResult& r, ojson& o) { o["items_failed"] = r.items_failed; },
     [](SummaryResult& r, const SummaryIn& in) { r.items_failed = in.count("items_failed"); }},
    {"failed_items", [](const SummaryResult& r, ojson& o) { o["failed_items"] = r.failed_items; },
     [](SummaryResult& r, const SummaryIn& in) { r.failed_items = in.texts("failed_items"); }},
    // Adaptive runs only.
    {"items_settled", [](const SummaryResult& r, ojson& o) { if (r.items_settled > 0) o["items_settled"] = r.items_settled; },
     [](SummaryResult& r, const SummaryIn& in) { r.items_settled = in.count("items_settled"); }},
    {"metrics", write_result_metrics, read_result_metrics},
    // Only in a run with variants.
    {"variant", [](const SummaryResult& r, ojson& o) { if (!r.variant.empty()) o["variant"] = r.variant; },
     [](SummaryResult& r, const SummaryIn& in) { r.variant = in.text("variant"); }},
};

}  // namespace

std::span<const SummaryField<SummaryProbe>> summary_probe_fields() { return kProbeFields; }
std::span<const SummaryField<SummaryCell>> summary_cell_fields() { return kCellFields; }
std::span<const SummaryField<SummaryResult>> summary_result_fields() { return kResultFields; }
std::span<const SummaryField<SummaryMetric>> summary_metric_fields() { return kMetricFields; }
std::span<const SummaryField<SummaryTest>> summary_test_fields() { return kTestFields; }

}  // namespace kvsweep::report
