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
#include "kvsweep/report/run_data.hpp"
#include "kvsweep/report/summary.hpp"
#include "kvsweep/report/summary_json.hpp"
#include "kvsweep/report/tables.hpp"
#include "kvsweep/stats/summary.hpp"
#include "kvsweep/stats/tests.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

struct ProbeInfo {
  bool deterministic = false;
  std::map<std::string, bool> higher_is_better;
  std::vector<std::string> order;
};

std::map<std::string, ProbeInfo> probe_infos(const nlohmann::json& doc) {
  std::map<std::string, ProbeInfo> out;
  if (!doc.contains("probes") || !doc["probes"].is_array()) return out;
  for (const auto& p : doc["probes"]) {
    ProbeInfo info;
    info.deterministic = p.value("deterministic", false);
    if (p.contains("metrics") && p["metrics"].is_array()) {
      for (const auto& m : p["metrics"]) {
        if (!m.is_object()) continue;
        info.higher_is_better[str(m, "name")] = m.value("higher_is_better", true);
        info.order.push_back(str(m, "name"));
      }
    }
    out[str(p, "name")] = std::move(info);
  }
  return out;
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
  return str(r, "model") + "\t" + str(r, "type_k") + "\t" + str(r, "type_v") + "\t" + str(r, "probe");
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
  return str(c[section], key);
}

std::string model_sha(const nlohmann::json& doc, const std::string& model) {
  if (!doc.contains("context") || !doc["context"].contains("models") || !doc["context"]["models"].is_array()) return "";
  for (const auto& m : doc["context"]["models"]) {
    if (str(m, "name") == model) return str(m, "sha256");
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

  // What differs in the context is worth saying; it is not an error (that is what compare is for).
  for (const char* key : {"version", "build_commit"}) {
    const std::string a = context_text(baseline, "server", key), b = context_text(current, "server", key);
    if (!a.empty() && !b.empty() && a != b) cmp.warnings.push_back("server " + std::string(key) + " differs: baseline " + a + ", run " + b);
  }

  const auto current_probes = probe_infos(current);
  const auto baseline_probes = probe_infos(baseline);
  std::map<std::string, const nlohmann::json*> base_results;
  for (const auto& r : baseline["results"]) base_results[result_key(r)] = &r;
  std::map<std::string, bool> seen_base;
  std::vector<std::string> sha_warned;

  for (const auto& r : current["results"]) {
    const auto it = base_results.find(result_key(r));
    if (it == base_results.end()) continue;
    seen_base[it->first] = true;
    const nlohmann::json& b = *it->second;
    const std::string model = str(r, "model");
    if (std::find(sha_warned.begin(), sha_warned.end(), model) == sha_warned.end()) {
      sha_warned.push_back(model);
      const std::string sa = model_sha(baseline, model), sb = model_sha(current, model);
      if (!sa.empty() && !sb.empty() && sa != sb) {
        cmp.warnings.push_back("model " + model + " has a different sha256 in the baseline (" + sa.substr(0, 12) +
                               " vs " + sb.substr(0, 12) + ")");
      }
    }
    const std::string probe = str(r, "probe");
    const auto cp = current_probes.find(probe);
    const auto bp = baseline_probes.find(probe);
    if (!r.contains("metrics") || !r["metrics"].is_object() || !b.contains("metrics") || !b["metrics"].is_object()) continue;
    // The probe's metric order (the document's objects are sorted by name).
    std::vector<std::string> metric_order;
    if (cp != current_probes.end()) metric_order = cp->second.order;
    for (const auto& [name, value] : r["metrics"].items()) {
      if (std::find(metric_order.begin(), metric_order.end(), name) == metric_order.end()) metric_order.push_back(name);
    }
    for (const std::string& metric : metric_order) {
      if (!r["metrics"].contains(metric) || !b["metrics"].contains(metric)) continue;
      const nlohmann::json& cur_metric = r["metrics"][metric];
      Check c;
      c.cell = str(r, "cell");
      c.model = model;
      c.type_k = str(r, "type_k");
      c.type_v = str(r, "type_v");
      c.probe = probe;
      c.metric = metric;
      if (cp != current_probes.end() && cp->second.higher_is_better.contains(metric)) {
        c.higher_is_better = cp->second.higher_is_better.at(metric);
      } else if (bp != baseline_probes.end() && bp->second.higher_is_better.contains(metric)) {
        c.higher_is_better = bp->second.higher_is_better.at(metric);
      }
      // Deterministic only if both runs say so.
      c.deterministic = cp != current_probes.end() && cp->second.deterministic &&
                        (bp == baseline_probes.end() || bp->second.deterministic);
      const auto xs = values_of(cur_metric);
      const auto ys = values_of(b["metrics"][metric]);
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
        c.current_mean = c.delta = c.p = c.p_holm = kNaN;
        c.tolerance = tol.relative ? tol.value * std::fabs(c.baseline_mean) : tol.value;
        if (!ys.empty()) {
          c.verdict = Verdict::regression;
          c.reason = "the baseline has " + std::to_string(ys.size()) + " values, this run none (outcome " +
                     str(r, "outcome") + ", " + std::to_string(r.value("items_failed", 0)) + " items failed)";
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
      const ReferenceTest t = paired_test(x, y, SummaryOptions{});
      c.test = t.test;
      c.p = t.p;
      cmp.checks.push_back(std::move(c));
    }
  }
  // Baseline results this run has nothing for: a regression when the run has the cell (it failed
  // to load, crashed, wedged), else only a warning (a different grid).
  std::map<std::string, const nlohmann::json*> current_cells;
  if (current.contains("cells") && current["cells"].is_array()) {
    for (const auto& c : current["cells"]) {
      current_cells[str(c, "model") + "\t" + str(c, "type_k") + "\t" + str(c, "type_v")] = &c;
    }
  }
  for (const auto& [key, r] : base_results) {
    if (seen_base.contains(key)) continue;
    const nlohmann::json& b = *r;
    const auto cell = current_cells.find(str(b, "model") + "\t" + str(b, "type_k") + "\t" + str(b, "type_v"));
    if (cell == current_cells.end()) {
      cmp.warnings.push_back("the baseline has " + str(b, "cell") + " " + str(b, "probe") + ", this run does not");
      continue;
    }
    if (!b.contains("metrics") || !b["metrics"].is_object()) continue;
    for (const auto& [metric, base_metric] : b["metrics"].items()) {
      const auto ys = values_of(base_metric);
      if (ys.empty()) continue;
      Check c;
      c.cell = str(*cell->second, "id");
      c.model = str(b, "model");
      c.type_k = str(b, "type_k");
      c.type_v = str(b, "type_v");
      c.probe = str(b, "probe");
      c.metric = metric;
      std::vector<double> base_values;
      for (const auto& [item, v] : ys) base_values.push_back(v);
      c.baseline_mean = stats::mean(base_values);
      c.current_mean = c.delta = c.p = c.p_holm = kNaN;
      const Tolerance& tol = tolerance_for(options, c.probe, metric);
      c.tolerance = tol.relative ? tol.value * std::fabs(c.baseline_mean) : tol.value;
      c.verdict = Verdict::regression;
      c.reason = "the baseline has " + std::to_string(ys.size()) + " values, this run none (outcome " +
                 str(*cell->second, "outcome") + ")";
      cmp.checks.push_back(std::move(c));
    }
  }
  if (cmp.checks.empty()) {
    return core::fail(core::ErrorKind::invalid,
                      "the run and the baseline share no (cell, probe, metric): different grids, probes or models?");
  }

  // Holm across every check that has a test: the family is the whole gate.
  std::vector<double> ps;
  std::vector<Check*> tested;
  for (auto& c : cmp.checks) {
    if (c.n_common == 0) continue;
    ps.push_back(c.p);
    tested.push_back(&c);
  }
  const std::vector<double> adjusted = stats::holm_adjust(ps);
  for (std::size_t i = 0; i < tested.size(); ++i) {
    Check& c = *tested[i];
    c.p_holm = adjusted[i];
    const double bad = c.higher_is_better ? -c.delta : c.delta;
    // A hair above the tolerance from float rounding is not a change.
    const double slack = 1e-12 * std::max(1.0, std::fabs(c.baseline_mean));
    const bool significant = c.p_holm < options.alpha;
    const bool exact = c.deterministic && c.identical_items;
    const bool evidence = significant || exact;
    const std::string change = "mean " + shortest(c.baseline_mean) + " → " + shortest(c.current_mean) + " (Δ " +
                               (c.delta > 0 ? "+" : "") + shortest(c.delta) + ", tolerance " + shortest(c.tolerance) +
                               ")";
    const std::string why = significant ? c.test + " p " + format_p(c.p) + ", Holm " + format_p(c.p_holm)
                            : exact     ? "deterministic probe, same " + std::to_string(c.n_common) + " items"
                                        : c.test + " p " + format_p(c.p) + ", Holm " + format_p(c.p_holm) +
                                          " (not significant)";
    if (bad > c.tolerance + slack && evidence) {
      c.verdict = Verdict::regression;
    } else if (-bad > c.tolerance + slack && evidence) {
      c.verdict = Verdict::improved;
    } else {
      c.verdict = Verdict::ok;
    }
    c.reason = change + "; " + why;
  }
  return cmp;
}

int exit_status(const Comparison& comparison) {
  return comparison.count(Verdict::regression) > 0 ? core::exit_code::regression : core::exit_code::ok;
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

std::string write_compare_table(const Comparison& comparison) {
  Table t;
  t.header = {"cell", "probe", "metric", "n", "baseline", "run", "Δ", "tolerance", "test", "p (Holm)", "verdict"};
  t.numeric = {false, false, false, true, true, true, true, true, false, true, false};
  for (const auto& c : comparison.checks) {
    std::vector<double> both{c.baseline_mean, c.current_mean};
    const int dec = std::max(decimals_for(both), 3);
    t.rows.push_back({c.cell, c.probe, c.metric + " " + better_arrow(c.higher_is_better), std::to_string(c.n_common),
                      fixed(c.baseline_mean, dec), fixed(c.current_mean, dec), signed_fixed(c.delta, dec),
                      fixed(c.tolerance, dec), c.test.empty() ? "—" : c.test, format_p(c.p_holm),
                      c.verdict == Verdict::regression ? "REGRESSION" : std::string(to_string(c.verdict))});
  }
  std::string out = render_markdown(t);
  auto counted = [](std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  out += "\n" + counted(comparison.checks.size(), "check", "checks") + ": " +
         counted(comparison.count(Verdict::regression), "regression", "regressions") + ", " +
         counted(comparison.count(Verdict::improved), "improvement", "improvements") + ", " +
         counted(comparison.count(Verdict::no_data), "without data", "without data") + ".\n";
  for (const auto& c : comparison.checks) {
    if (c.verdict == Verdict::regression) out += "REGRESSION " + c.cell + " " + c.probe + "/" + c.metric + ": " + c.reason + "\n";
  }
  return out;
}

std::string write_junit(const Comparison& comparison) {
  const std::size_t tests = comparison.checks.size();
  const std::size_t failures = comparison.count(Verdict::regression);
  const std::size_t skipped = comparison.count(Verdict::no_data);
  const std::string counts = "tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
                             "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\"";
  std::string suite = "kvsweep compare";
  if (!comparison.current_name.empty() || !comparison.baseline_name.empty()) {
    suite += ": " + comparison.current_name + " vs baseline " + comparison.baseline_name;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kvsweep compare\" " + counts +
                    ">\n  <testsuite name=\"" + xml_escape(suite) + "\" " + counts + ">\n";
  for (const auto& c : comparison.checks) {
    out += "    <testcase classname=\"kvsweep." + xml_escape(c.probe) + "\" name=\"" + xml_escape(c.cell + " " + c.metric) +
           "\" time=\"0\"";
    if (c.verdict == Verdict::regression) {
      out += ">\n      <failure type=\"regression\" message=\"" +
             xml_escape(c.cell + " " + c.probe + "/" + c.metric + " regressed") + "\">" + xml_escape(c.reason) +
             "</failure>\n    </testcase>\n";
    } else if (c.verdict == Verdict::no_data) {
      out += ">\n      <skipped message=\"" + xml_escape(c.reason) + "\"/>\n    </testcase>\n";
    } else {
      out += ">\n      <system-out>" + xml_escape(std::string(to_string(c.verdict)) + ": " + c.reason) +
             "</system-out>\n    </testcase>\n";
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace kvsweep::report
