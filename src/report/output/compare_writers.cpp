#include "kvsweep/report/output/compare_writers.hpp"

#include <algorithm>
#include <map>

#include "kvsweep/report/format.hpp"
#include "kvsweep/report/analysis/tables.hpp"

namespace kvsweep::report {

namespace {

std::string counted(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string verdict_text(const Check& c) {
  if (c.verdict == Verdict::regression) return "REGRESSION";
  if (c.verdict == Verdict::inconclusive) return "INCONCLUSIVE";
  if (c.verdict == Verdict::missing) return "MISSING";
  return std::string(to_string(c.verdict));
}

struct ProbeCounts {
  std::size_t checks = 0;
  std::map<Verdict, std::size_t> by;
};

/// Per probe: how many checks and what became of them.
Table per_probe_table(const Comparison& comparison) {
  std::vector<std::string> order;
  std::map<std::string, ProbeCounts> counts;
  for (const auto& c : comparison.checks) {
    if (!counts.contains(c.probe)) order.push_back(c.probe);
    auto& pc = counts[c.probe];
    ++pc.checks;
    ++pc.by[c.verdict];
  }
  Table per;
  per.header = {"probe", "checks", "ok", "regression", "inconclusive", "improved", "no data"};
  per.numeric = {false, true, true, true, true, true, true};
  // Columns for the rarer verdicts only when some check has one.
  std::vector<Verdict> rare;
  for (const Verdict v : {Verdict::not_comparable, Verdict::missing}) {
    if (comparison.count(v) == 0) continue;
    rare.push_back(v);
    per.header.emplace_back(to_string(v));
    per.numeric.push_back(true);
  }
  for (const auto& probe : order) {
    auto& pc = counts[probe];
    per.rows.push_back({probe, std::to_string(pc.checks), std::to_string(pc.by[Verdict::ok]),
                        std::to_string(pc.by[Verdict::regression]), std::to_string(pc.by[Verdict::inconclusive]),
                        std::to_string(pc.by[Verdict::improved]), std::to_string(pc.by[Verdict::no_data])});
    for (const Verdict v : rare) per.rows.back().push_back(std::to_string(pc.by[v]));
  }
  return per;
}

/// "12 checks: 1 regression, 0 inconclusive, …".
std::string totals_line(const Comparison& comparison) {
  const std::size_t not_comparable = comparison.count(Verdict::not_comparable);
  const std::size_t missing = comparison.count(Verdict::missing);
  return counted(comparison.checks.size(), "check", "checks") + ": " +
         counted(comparison.count(Verdict::regression), "regression", "regressions") + ", " +
         std::to_string(comparison.count(Verdict::inconclusive)) + " inconclusive, " +
         counted(comparison.count(Verdict::improved), "improvement", "improvements") + ", " +
         counted(comparison.count(Verdict::no_data), "without data", "without data") +
         (not_comparable > 0 ? ", " + std::to_string(not_comparable) + " not comparable (no common items)" : "") +
         (missing > 0 ? ", " + std::to_string(missing) + " missing (baseline cells or items this run lacks" +
                            (comparison.allow_missing ? "; --allow-missing: they pass)" : ": they fail the gate)")
                      : "") +
         " (" +
         counted(comparison.diagnostics, "diagnostic metric", "diagnostic metrics") + " not gated).";
}

/// A check that neither passes nor fails the gate: a JUnit <skipped>.
bool skipped_in_junit(Verdict v) {
  return v == Verdict::no_data || v == Verdict::inconclusive || v == Verdict::not_comparable || v == Verdict::missing;
}

/// What follows the check's name in a JUnit failure's message.
std::string failure_message(const Check& c) {
  if (c.verdict == Verdict::regression) return " regressed";
  if (c.verdict == Verdict::missing) return " is missing from the run: " + c.reason;
  return " is inconclusive: " + c.reason;
}

}  // namespace

std::string inconclusive_summary(const Comparison& comparison) {
  // Per probe: the fewest items among its inconclusive checks and the most they need.
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::size_t, std::size_t>> per_probe;  // probe → (min n, max needed)
  std::map<std::string, bool> binary_only;
  for (const auto& c : comparison.checks) {
    if (c.verdict != Verdict::inconclusive) continue;
    auto [it, fresh] = per_probe.try_emplace(c.probe, c.n_common, c.n_needed);
    if (fresh) {
      order.push_back(c.probe);
      binary_only[c.probe] = true;
    }
    it->second.first = std::min(it->second.first, c.n_common);
    it->second.second = std::max(it->second.second, c.n_needed);
    binary_only[c.probe] = binary_only[c.probe] && c.kind == probe::MetricKind::binary;
  }
  if (order.empty()) return "";
  std::string out = std::to_string(comparison.count(Verdict::inconclusive)) + " inconclusive: ";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& [n, needed] = per_probe[order[i]];
    out += (i ? "; " : "") + order[i] + " has " + counted(n, "item", "items") + " per cell; ";
    out += needed > 0 ? "at least " + std::to_string(needed) +
                            (binary_only[order[i]] ? " items that flip the same way" : "") +
                            " are needed to detect a change of this size"
                      : "no number of items can detect a change of this size";
  }
  return out;
}

Document compare_document(const Comparison& comparison, CheckRows rows) {
  Document doc;
  // What differs between the runs comes first: it explains every row below. The manifests' changes
  // (settings, environment, build) before the config hash and the items.
  manifest_changes_section(doc, comparison.changes);
  std::vector<Text> notes;
  for (const auto& d : comparison.differences) notes.push_back({plain("Note: " + d + ".")});
  doc.lines(std::move(notes));
  Table t;
  t.header = {"cell", "probe", "metric", "n", "baseline", "run", "Δ", "tolerance", "test", "p (Holm)", "verdict"};
  t.numeric = {false, false, false, true, true, true, true, true, false, true, false};
  for (const auto& c : comparison.checks) {
    if (rows == CheckRows::not_ok && c.verdict == Verdict::ok) continue;
    std::vector<double> both{c.baseline_mean, c.current_mean};
    const int dec = std::max(decimals_for(both), 3);
    t.rows.push_back({c.cell, c.probe, c.metric + " " + better_arrow(c.higher_is_better), std::to_string(c.n_common),
                      fixed(c.baseline_mean, dec), fixed(c.current_mean, dec), signed_fixed(c.delta, dec),
                      fixed(c.tolerance, dec), !c.test.empty() ? c.test : c.n_common > 0 ? "exact" : "—", format_p(c.p_holm), verdict_text(c)});
  }
  if (!t.rows.empty()) doc.table(std::move(t));
  doc.table(per_probe_table(comparison));
  std::vector<Text> tail{{plain(totals_line(comparison))}};
  if (const std::string why = inconclusive_summary(comparison); !why.empty()) {
    tail.push_back({plain(why + (comparison.fail_inconclusive ? " (--fail-inconclusive: these fail the gate)." : "."))});
  }
  for (const auto& c : comparison.checks) {
    if (c.verdict == Verdict::regression || c.verdict == Verdict::inconclusive || c.verdict == Verdict::missing) {
      tail.push_back({plain(verdict_text(c) + " " + c.cell + " " + c.probe + "/" + c.metric + ": " + c.reason)});
    }
  }
  doc.lines(std::move(tail));
  return doc;
}

std::string write_compare_table(const Comparison& comparison, CheckRows rows) {
  return render_markdown(compare_document(comparison, rows));
}

std::string write_compare_json(const Comparison& comparison) {
  using ojson = nlohmann::ordered_json;
  ojson checks = ojson::array();
  auto number = [](double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); };
  for (const auto& c : comparison.checks) {
    checks.push_back({{"cell", c.cell},
                      {"model", c.model},
                      {"type_k", c.type_k},
                      {"type_v", c.type_v},
                      {"probe", c.probe},
                      {"metric", c.metric},
                      {"direction", c.higher_is_better ? "higher" : "lower"},
                      {"kind", std::string(probe::to_string(c.kind))},
                      {"deterministic", c.deterministic},
                      {"n", c.n_common},
                      {"baseline", number(c.baseline_mean)},
                      {"run", number(c.current_mean)},
                      {"delta", number(c.delta)},
                      {"tolerance", number(c.tolerance)},
                      {"test", c.test.empty() ? ojson(nullptr) : ojson(c.test)},
                      {"p", number(c.p)},
                      {"p_holm", number(c.p_holm)},
                      {"powered", c.powered},
                      {"min_p", number(c.min_p)},
                      {"n_needed", c.n_needed},
                      {"verdict", std::string(to_string(c.verdict))},
                      {"fails", comparison.fails(c)},
                      {"reason", c.reason}});
    if (!c.variant.empty()) checks.back()["variant"] = c.variant;
  }
  ojson counts = ojson::object();
  for (auto v : {Verdict::ok, Verdict::regression, Verdict::inconclusive, Verdict::improved, Verdict::no_data,
                 Verdict::not_comparable, Verdict::missing}) {
    counts[std::string(to_string(v))] = comparison.count(v);
  }
  ojson changes = ojson::array();
  for (const auto& c : comparison.changes) {
    changes.push_back({{"area", std::string(to_string(c.area))},
                       {"name", c.name},
                       {"before", c.before ? ojson(*c.before) : ojson(nullptr)},
                       {"after", c.after ? ojson(*c.after) : ojson(nullptr)},
                       {"text", explain(c)}});
    if (!c.variant.empty()) changes.back()["variant"] = c.variant;
    if (c.area == ChangeArea::setting) {
      changes.back()["cells"] = c.cells;
      changes.back()["cells_compared"] = c.cells_compared;
    }
  }
  ojson doc{{"schema_version", kReportSchemaVersion},
            {"kind", "kvsweep-compare"},
            {"run", comparison.current_name},
            {"baseline", comparison.baseline_name},
            {"alpha", comparison.alpha},
            {"fail_inconclusive", comparison.fail_inconclusive},
            {"allow_missing", comparison.allow_missing},
            {"checks_total", comparison.checks.size()},
            {"tested", comparison.tested},
            {"diagnostics_not_gated", comparison.diagnostics},
            {"counts", std::move(counts)},
            {"inconclusive_summary", inconclusive_summary(comparison)},
            {"changes", std::move(changes)},
            {"differences", comparison.differences},
            {"warnings", comparison.warnings},
            {"checks", std::move(checks)}};
  return doc.dump(2) + "\n";
}

std::string write_junit(const Comparison& comparison) {
  const std::size_t tests = comparison.checks.size();
  std::size_t failures = 0, skipped = 0;
  for (const auto& c : comparison.checks) {
    if (comparison.fails(c)) {
      ++failures;
    } else if (skipped_in_junit(c.verdict)) {
      ++skipped;
    }
  }
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
    const std::string what = c.cell + " " + c.probe + "/" + c.metric;
    if (comparison.fails(c)) {
      out += ">\n      <failure type=\"" + std::string(to_string(c.verdict)) + "\" message=\"" +
             xml_escape(what + failure_message(c)) + "\">" + xml_escape(c.reason) + "</failure>\n    </testcase>\n";
    } else if (skipped_in_junit(c.verdict)) {
      const std::string message =
          c.verdict == Verdict::inconclusive || c.verdict == Verdict::missing ? std::string(to_string(c.verdict)) + ": " + c.reason
                                                                              : c.reason;
      out += ">\n      <skipped message=\"" + xml_escape(message) + "\"/>\n    </testcase>\n";
    } else {
      out += ">\n      <system-out>" + xml_escape(std::string(to_string(c.verdict)) + ": " + c.reason) +
             "</system-out>\n    </testcase>\n";
    }
  }
  if (!comparison.changes.empty()) {
    std::string changed = "What changed since the baseline (baseline → this run):";
    for (const auto& c : comparison.changes) changed += "\n- " + explain(c);
    out += "    <system-out>" + xml_escape(changed) + "</system-out>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace kvsweep::report
