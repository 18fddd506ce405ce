#include "kvsweep/report/compare.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/json_fields.hpp"
#include "kvsweep/report/run_data.hpp"
#include "kvsweep/report/summary.hpp"
#include "kvsweep/report/summary_json.hpp"
#include "kvsweep/stats/power.hpp"
#include "kvsweep/stats/summary.hpp"
#include "kvsweep/stats/tests.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ProbeInfo {
  bool deterministic = false;
  bool declared = false;  // the summary carries the probe's metric declarations
  std::vector<probe::MetricSpec> metrics;
};

/// The probes of a summary with their metric declarations; a summary written before declarations
/// existed gets the older inference: quality, direction from higher_is_better, binary from "binary".
core::Expected<std::map<std::string, ProbeInfo>> probe_infos(const nlohmann::json& doc, const char* which) {
  std::map<std::string, ProbeInfo> out;
  if (!doc.contains("probes") || !doc["probes"].is_array()) return out;
  for (const auto& p : doc["probes"]) {
    ProbeInfo info;
    info.deterministic = p.value("deterministic", false);
    if (p.contains("metrics") && p["metrics"].is_array()) {
      bool complete = !p["metrics"].empty();
      for (const auto& m : p["metrics"]) complete = complete && probe::has_declaration(m);
      // A summary of an older run writes the inferred specs and "declared": false.
      info.declared = complete && p.value("declared", true);
      for (std::size_t i = 0; i < p["metrics"].size(); ++i) {
        const auto& m = p["metrics"][i];
        if (complete) {
          auto spec = probe::metric_spec_from_json(
              m, std::string(which) + ": probes." + string_field(p, "name") + ".metrics[" + std::to_string(i) + "]");
          if (!spec) return std::unexpected(spec.error());
          info.metrics.push_back(std::move(*spec));
        } else if (m.is_object() && !string_field(m, "name").empty()) {
          info.metrics.push_back(probe::quality(
              string_field(m, "name"),
              m.value("higher_is_better", true) ? probe::Direction::higher_better : probe::Direction::lower_better,
              m.value("binary", false) ? probe::MetricKind::binary : probe::MetricKind::continuous));
        }
      }
    }
    out[string_field(p, "name")] = std::move(info);
  }
  return out;
}

/// A metric's declaration: the run's, else the baseline's, else (neither lists it) an inferred
/// higher-is-better quality metric, binary when both runs' values are all 0 or 1.
probe::MetricSpec spec_for(const std::map<std::string, ProbeInfo>& current, const std::map<std::string, ProbeInfo>& baseline,
                           const std::string& probe_name, const std::string& metric, bool values_binary) {
  for (const auto* infos : {&current, &baseline}) {
    const auto it = infos->find(probe_name);
    if (it == infos->end()) continue;
    if (const auto* spec = probe::find_metric(it->second.metrics, metric)) return *spec;
    if (it->second.declared) return probe::diagnostic(metric, probe::MetricKind::continuous);  // emitted, undeclared
  }
  return probe::quality(metric, probe::Direction::higher_better,
                        values_binary ? probe::MetricKind::binary : probe::MetricKind::continuous);
}

bool all_binary(const std::map<std::string, double>& values) {
  return std::all_of(values.begin(), values.end(), [](const auto& kv) { return kv.second == 0.0 || kv.second == 1.0; });
}

std::map<std::string, double> values_of(const nlohmann::json& metric) {
  std::map<std::string, double> out;
  if (!metric.is_object() || !metric.contains("values") || !metric["values"].is_object()) return out;
  for (const auto& [item, v] : metric["values"].items()) {
    if (v.is_number() && std::isfinite(v.get<double>())) out[item] = v.get<double>();
  }
  return out;
}

std::string result_key(const nlohmann::json& r) {
  return string_field(r, "model") + "\t" + string_field(r, "type_k") + "\t" + string_field(r, "type_v") + "\t" + string_field(r, "probe");
}

core::Expected<void> check_document(const nlohmann::json& doc, const char* which) {
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array()) {
    return core::fail(core::ErrorKind::parse, std::string(which) + " is not a kvsweep summary (no \"results\" array)");
  }
  if (doc.value("kind", std::string()) != "kvsweep-summary") {
    return core::fail(core::ErrorKind::parse, std::string(which) + " is not a kvsweep summary (kind is not kvsweep-summary)");
  }
  if (!doc.contains("schema_version") || !doc["schema_version"].is_number_integer() ||
      doc["schema_version"].get<int>() > kReportSchemaVersion) {
    return core::fail(core::ErrorKind::parse, std::string(which) + ": unsupported schema_version (this kvsweep reads " +
                                                  std::to_string(kReportSchemaVersion) + ")");
  }
  return {};
}

std::string context_text(const nlohmann::json& doc, const char* section, const char* key) {
  if (!doc.contains("context") || !doc["context"].is_object()) return "";
  const auto& c = doc["context"];
  if (!c.contains(section) || !c[section].is_object()) return "";
  return string_field(c[section], key);
}

std::string model_sha(const nlohmann::json& doc, const std::string& model) {
  if (!doc.contains("context") || !doc["context"].contains("models") || !doc["context"]["models"].is_array()) return "";
  for (const auto& m : doc["context"]["models"]) {
    if (string_field(m, "name") == model) return string_field(m, "sha256");
  }
  return "";
}

const Tolerance& tolerance_for(const CompareOptions& o, const std::string& probe, const std::string& metric) {
  if (auto it = o.tolerances.find(probe + "." + metric); it != o.tolerances.end()) return it->second;
  if (auto it = o.tolerances.find(metric); it != o.tolerances.end()) return it->second;
  return o.default_tolerance;
}

}  // namespace

core::Expected<std::pair<std::string, Tolerance>> parse_tolerance(std::string_view spec) {
  const auto eq = spec.find('=');
  auto bad = [&](const std::string& why) {
    return core::fail(core::ErrorKind::invalid, "--tolerance " + std::string(spec) + ": " + why +
                                                    " (expected METRIC=VALUE, PROBE.METRIC=VALUE or *=VALUE; VALUE "
                                                    "absolute like 0.02 or relative like 5%)");
  };
  if (eq == std::string_view::npos || eq == 0) return bad("no METRIC=");
  const std::string key(spec.substr(0, eq));
  std::string_view value = spec.substr(eq + 1);
  Tolerance t;
  t.relative = !value.empty() && value.back() == '%';
  if (t.relative) value.remove_suffix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v) || v < 0) {
    return bad("the value is not a number >= 0");
  }
  t.value = t.relative ? v / 100.0 : v;
  return std::pair<std::string, Tolerance>{key, t};
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::ok: return "ok";
    case Verdict::regression: return "regression";
    case Verdict::inconclusive: return "inconclusive";
    case Verdict::improved: return "improved";
    case Verdict::no_data: return "no data";
  }
  return "ok";
}

std::size_t Comparison::count(Verdict verdict) const {
  return static_cast<std::size_t>(
      std::count_if(checks.begin(), checks.end(), [&](const Check& c) { return c.verdict == verdict; }));
}

core::Expected<Comparison> compare_summaries(const nlohmann::json& current, const nlohmann::json& baseline,
                                             const CompareOptions& options) {
  if (auto ok = check_document(current, "the run's summary"); !ok) return std::unexpected(ok.error());
  if (auto ok = check_document(baseline, "the baseline"); !ok) return std::unexpected(ok.error());
  Comparison cmp;
  cmp.current_name = context_text(current, "run", "name");
  cmp.baseline_name = context_text(baseline, "run", "name");
  cmp.alpha = options.alpha;
  cmp.fail_inconclusive = options.fail_inconclusive;

  // What differs in the context is worth saying; it is not an error (that is what compare is for).
  for (const char* key : {"version", "build_commit"}) {
    const std::string a = context_text(baseline, "server", key), b = context_text(current, "server", key);
    if (!a.empty() && !b.empty() && a != b) cmp.warnings.push_back("server " + std::string(key) + " differs: baseline " + a + ", run " + b);
  }

  auto current_infos = probe_infos(current, "the run's summary");
  if (!current_infos) return std::unexpected(current_infos.error());
  auto baseline_infos = probe_infos(baseline, "the baseline");
  if (!baseline_infos) return std::unexpected(baseline_infos.error());
  const auto& current_probes = *current_infos;
  const auto& baseline_probes = *baseline_infos;
  for (const auto& [infos, which] : {std::pair{&current_probes, "the run's summary"}, std::pair{&baseline_probes, "the baseline"}}) {
    for (const auto& [name, info] : *infos) {
      if (!info.declared) {
        cmp.warnings.push_back(std::string(which) + " has no metric declarations for " + name +
                               " (written by an older kvsweep): every metric is gated as quality, directions as "
                               "recorded, 0/1 values as binary");
      }
    }
  }
  std::map<std::string, const nlohmann::json*> base_results;
  for (const auto& r : baseline["results"]) base_results[result_key(r)] = &r;
  std::map<std::string, bool> seen_base;
  std::vector<std::string> sha_warned;

  auto start_check = [&](const nlohmann::json& r, const std::string& cell, const std::string& metric,
                         const probe::MetricSpec& spec) {
    Check c;
    c.cell = cell;
    c.model = string_field(r, "model");
    c.type_k = string_field(r, "type_k");
    c.type_v = string_field(r, "type_v");
    c.probe = string_field(r, "probe");
    c.metric = metric;
    c.higher_is_better = spec.higher_is_better();
    c.kind = spec.kind;
    return c;
  };

  for (const auto& r : current["results"]) {
    const auto it = base_results.find(result_key(r));
    if (it == base_results.end()) continue;
    seen_base[it->first] = true;
    const nlohmann::json& b = *it->second;
    const std::string model = string_field(r, "model");
    if (std::find(sha_warned.begin(), sha_warned.end(), model) == sha_warned.end()) {
      sha_warned.push_back(model);
      const std::string sa = model_sha(baseline, model), sb = model_sha(current, model);
      if (!sa.empty() && !sb.empty() && sa != sb) {
        cmp.warnings.push_back("model " + model + " has a different sha256 in the baseline (" + sa.substr(0, 12) +
                               " vs " + sb.substr(0, 12) + ")");
      }
    }
    const std::string probe = string_field(r, "probe");
    const auto cp = current_probes.find(probe);
    const auto bp = baseline_probes.find(probe);
    if (!r.contains("metrics") || !r["metrics"].is_object() || !b.contains("metrics") || !b["metrics"].is_object()) continue;
    // The probe's metric order (the document's objects are sorted by name).
    std::vector<std::string> metric_order;
    if (cp != current_probes.end()) {
      for (const auto& m : cp->second.metrics) metric_order.push_back(m.name);
    }
    for (const auto& [name, value] : r["metrics"].items()) {
      if (std::find(metric_order.begin(), metric_order.end(), name) == metric_order.end()) metric_order.push_back(name);
    }
    for (const std::string& metric : metric_order) {
      if (!r["metrics"].contains(metric) || !b["metrics"].contains(metric)) continue;
      const auto xs = values_of(r["metrics"][metric]);
      const auto ys = values_of(b["metrics"][metric]);
      const probe::MetricSpec spec =
          spec_for(current_probes, baseline_probes, probe, metric, all_binary(xs) && all_binary(ys));
      if (!spec.is_quality()) {
        ++cmp.diagnostics;
        continue;
      }
      Check c = start_check(r, string_field(r, "cell"), metric, spec);
      // Deterministic only if both runs say so.
      c.deterministic = cp != current_probes.end() && cp->second.deterministic &&
                        (bp == baseline_probes.end() || bp->second.deterministic);
      std::vector<double> x, y;
      bool same = xs.size() == ys.size();
      for (const auto& [item, v] : xs) {
        auto yit = ys.find(item);
        if (yit == ys.end()) {
          same = false;
          continue;
        }
        x.push_back(v);
        y.push_back(yit->second);
      }
      c.identical_items = same && !x.empty();
      c.n_common = x.size();
      const Tolerance& tol = tolerance_for(options, probe, metric);
      if (x.empty()) {
        std::vector<double> base_values;
        for (const auto& [item, v] : ys) base_values.push_back(v);
        c.baseline_mean = stats::mean(base_values);
        c.current_mean = c.delta = c.p = c.p_holm = c.min_p = kNaN;
        c.tolerance = tol.relative ? tol.value * std::fabs(c.baseline_mean) : tol.value;
        if (!ys.empty()) {
          c.verdict = Verdict::regression;
          c.reason = "the baseline has " + std::to_string(ys.size()) + " values, this run none (outcome " +
                     string_field(r, "outcome") + ", " + std::to_string(r.value("items_failed", 0)) + " items failed)";
        } else {
          c.verdict = Verdict::no_data;
          c.reason = "no values in either run";
        }
        cmp.checks.push_back(std::move(c));
        continue;
      }
      c.baseline_mean = stats::mean(y);
      c.current_mean = stats::mean(x);
      c.delta = c.current_mean - c.baseline_mean;
      c.tolerance = tol.relative ? tol.value * std::fabs(c.baseline_mean) : tol.value;
      if (c.deterministic && c.identical_items) {
        c.p = c.p_holm = c.min_p = kNaN;  // the exact rule needs no test
      } else {
        const ReferenceTest t = paired_test(x, y, spec.kind, SummaryOptions{});
        c.test = t.test;
        c.p = t.p;
      }
      cmp.checks.push_back(std::move(c));
    }
  }
  // Baseline results this run has nothing for: a regression when the run has the cell (it failed
  // to load, crashed, wedged), else only a warning (a different grid).
  std::map<std::string, const nlohmann::json*> current_cells;
  if (current.contains("cells") && current["cells"].is_array()) {
    for (const auto& c : current["cells"]) {
      current_cells[string_field(c, "model") + "\t" + string_field(c, "type_k") + "\t" + string_field(c, "type_v")] = &c;
    }
  }
  for (const auto& [key, r] : base_results) {
    if (seen_base.contains(key)) continue;
    const nlohmann::json& b = *r;
    const auto cell = current_cells.find(string_field(b, "model") + "\t" + string_field(b, "type_k") + "\t" + string_field(b, "type_v"));
    if (cell == current_cells.end()) {
      cmp.warnings.push_back("the baseline has " + string_field(b, "cell") + " " + string_field(b, "probe") + ", this run does not");
      continue;
    }
    if (!b.contains("metrics") || !b["metrics"].is_object()) continue;
    for (const auto& [metric, base_metric] : b["metrics"].items()) {
      const auto ys = values_of(base_metric);
      if (ys.empty()) continue;
      const probe::MetricSpec spec = spec_for(current_probes, baseline_probes, string_field(b, "probe"), metric, all_binary(ys));
      if (!spec.is_quality()) continue;
      Check c = start_check(b, string_field(*cell->second, "id"), metric, spec);
      std::vector<double> base_values;
      for (const auto& [item, v] : ys) base_values.push_back(v);
      c.baseline_mean = stats::mean(base_values);
      c.current_mean = c.delta = c.p = c.p_holm = c.min_p = kNaN;
      const Tolerance& tol = tolerance_for(options, c.probe, metric);
      c.tolerance = tol.relative ? tol.value * std::fabs(c.baseline_mean) : tol.value;
      c.verdict = Verdict::regression;
      c.reason = "the baseline has " + std::to_string(ys.size()) + " values, this run none (outcome " +
                 string_field(*cell->second, "outcome") + ")";
      cmp.checks.push_back(std::move(c));
    }
  }
  if (cmp.checks.empty()) {
    return core::fail(core::ErrorKind::invalid,
                      "the run and the baseline share no (cell, probe, quality metric): different grids, probes or "
                      "models?");
  }

  // Holm across every check that has a test: the family is the whole gate's stochastic part.
  std::vector<double> ps;
  std::vector<Check*> tested;
  for (auto& c : cmp.checks) {
    if (c.n_common == 0 || c.test.empty()) continue;
    ps.push_back(c.p);
    tested.push_back(&c);
  }
  cmp.tested = tested.size();
  const std::vector<double> adjusted = stats::holm_adjust(ps);
  // Holm's first step compares the smallest p with alpha / m: a check whose best possible p is not
  // below that can never be called significant, whatever its data.
  const double threshold = options.alpha / static_cast<double>(std::max<std::size_t>(1, tested.size()));
  for (std::size_t i = 0; i < tested.size(); ++i) {
    Check& c = *tested[i];
    c.p_holm = adjusted[i];
    const auto test = c.test == "mcnemar" ? stats::PairedTest::mcnemar : stats::PairedTest::wilcoxon;
    // McNemar looks only at the discordant pairs: a change of this size in a 0/1 mean is at best
    // |Δ| · n items flipping the same way, whatever n is. Wilcoxon ranks: any n pairs may all move.
    const std::size_t pairs = test == stats::PairedTest::mcnemar
                                  ? std::min<std::size_t>(c.n_common, static_cast<std::size_t>(std::llround(
                                                                          std::fabs(c.delta) * static_cast<double>(c.n_common))))
                                  : c.n_common;
    c.min_p = stats::min_attainable_p(test, pairs);
    c.powered = c.min_p < threshold;
    c.n_needed = stats::pairs_needed(test, threshold).value_or(0);
  }
  for (auto& c : cmp.checks) {
    if (c.n_common == 0) continue;
    const double bad = c.higher_is_better ? -c.delta : c.delta;
    // A hair above the tolerance from float rounding is not a change.
    const double slack = 1e-12 * std::max(1.0, std::fabs(c.baseline_mean));
    const bool exact = c.test.empty();
    const bool significant = !exact && c.p_holm < options.alpha;
    const bool evidence = significant || exact;
    const std::string change = "mean " + shortest(c.baseline_mean) + " → " + shortest(c.current_mean) + " (Δ " +
                               (c.delta > 0 ? "+" : "") + shortest(c.delta) + ", tolerance " + shortest(c.tolerance) +
                               ")";
    std::string why = exact       ? "deterministic probe, same " + std::to_string(c.n_common) + " items"
                      : significant ? c.test + " p " + format_p(c.p) + ", Holm " + format_p(c.p_holm)
                                    : c.test + " p " + format_p(c.p) + ", Holm " + format_p(c.p_holm) + " (not significant)";
    if (bad > c.tolerance + slack && evidence) {
      c.verdict = Verdict::regression;
    } else if (bad > c.tolerance + slack && !c.powered) {
      c.verdict = Verdict::inconclusive;
      const bool flips = c.test == "mcnemar";
      const auto net = std::llround(std::fabs(c.delta) * static_cast<double>(c.n_common));
      why = std::to_string(c.n_common) + " items per cell" +
            (flips ? ", this change is " + std::to_string(net) + " net flips" : std::string()) +
            ": the smallest p " + c.test + " can give is " + format_p(c.min_p) +
            (c.n_needed > 0 ? "; at least " + std::to_string(c.n_needed) +
                                  (flips ? " items flipping the same way" : " items") + " are needed"
                            : "") +
            " to detect a change at alpha " + shortest(options.alpha) + " (Holm over " + std::to_string(cmp.tested) +
            " tested checks)";
    } else if (-bad > c.tolerance + slack && evidence) {
      c.verdict = Verdict::improved;
    } else {
      c.verdict = Verdict::ok;
    }
    c.reason = change + "; " + why;
  }
  return cmp;
}

bool Comparison::fails(const Check& check) const {
  return check.verdict == Verdict::regression || (check.verdict == Verdict::inconclusive && fail_inconclusive);
}

int exit_status(const Comparison& comparison) {
  const bool failed = std::any_of(comparison.checks.begin(), comparison.checks.end(),
                                  [&](const Check& c) { return comparison.fails(c); });
  return failed ? core::exit_code::regression : core::exit_code::ok;
}

core::Expected<nlohmann::json> load_summary(const std::filesystem::path& path, const Generator& generator) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    auto data = RunData::load(path);
    if (!data) return core::fail(data.error().kind, path.string() + ": " + data.error().message);
    const RunSummary summary = summarize_run(*data);
    return nlohmann::json::parse(summary_document(*data, summary, generator).dump());
  }
  std::ifstream in(path);
  if (!in) return core::fail(core::ErrorKind::io, path.string() + ": cannot read (no such file or directory?)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(buffer.str(), nullptr, false);
  if (doc.is_discarded()) {
    return core::fail(core::ErrorKind::parse, path.string() + ": not valid JSON (expected a summary.json from kvsweep report)");
  }
  if (auto ok = check_document(doc, path.string().c_str()); !ok) return std::unexpected(ok.error());
  return doc;
}

}  // namespace kvsweep::report
