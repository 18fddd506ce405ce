#pragma once
/// Comparing a run with a baseline: for every (cell, probe, metric) in both, is the change a
/// regression — bad-direction, beyond tolerance, and significant (or any change of a deterministic metric)?

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/report/context.hpp"

namespace kvsweep::report {

/// How far a mean may move in the bad direction before it counts: absolute, or a fraction of the baseline mean.
struct Tolerance {
  double value = 0.05;
  bool relative = true;
};

/// "metric=0.02" (absolute), "metric=5%" (relative to the baseline mean), "probe.metric=…" for one
/// probe only, "*=…" for the default. Fails with ErrorKind::invalid and a message naming the spec.
core::Expected<std::pair<std::string, Tolerance>> parse_tolerance(std::string_view spec);

struct CompareOptions {
  double alpha = 0.05;
  Tolerance default_tolerance{0.05, true};      // 5% of the baseline mean
  std::map<std::string, Tolerance> tolerances;  // keyed "probe.metric" (first) or "metric"
};

enum class Verdict { ok, regression, improved, no_data };
std::string_view to_string(Verdict verdict);

struct Check {
  std::string cell;  // cell id
  std::string model;
  std::string type_k;
  std::string type_v;
  std::string probe;
  std::string metric;
  bool higher_is_better = true;
  bool deterministic = false;
  bool identical_items = false;  // both runs have values for exactly the same items
  std::size_t n_common = 0;
  double baseline_mean = 0.0;    // over the common items
  double current_mean = 0.0;
  double delta = 0.0;            // current − baseline
  double tolerance = 0.0;        // absolute, after resolving a relative tolerance
  std::string test;              // mcnemar, wilcoxon, or empty
  double p = 1.0;
  double p_holm = 1.0;           // Holm across every check of the comparison
  Verdict verdict = Verdict::ok;
  std::string reason;
};

struct Comparison {
  std::string current_name;
  std::string baseline_name;
  std::vector<Check> checks;
  std::vector<std::string> warnings;  // context differences, cells only one side has
  std::size_t count(Verdict verdict) const;
};

/// Compares two summary documents (summary_document() of the run, and of the baseline run or a
/// summary.json it wrote). Pairs items by key within each (cell, probe, metric); the paired test is
/// McNemar for 0/1 values, else Wilcoxon signed-rank; Holm adjusts across all checks. A regression
/// is a bad-direction change of the common-item mean beyond the tolerance AND (p_holm < alpha OR the
/// probe is deterministic and both runs hold the same items). A cell with values in the baseline and
/// none now is a regression. Fails (ErrorKind::parse) on a document that is not a kvsweep summary,
/// and (ErrorKind::invalid) when the two share no (cell, probe, metric).
core::Expected<Comparison> compare_summaries(const nlohmann::json& current, const nlohmann::json& baseline,
                                             const CompareOptions& options);

/// The exit status `kvsweep compare` returns for a comparison: 1 with any regression, else 0.
int exit_status(const Comparison& comparison);

/// A baseline: a run directory (summarized now) or a summary.json file.
core::Expected<nlohmann::json> load_summary(const std::filesystem::path& path, const Generator& generator);

/// A Markdown table of every check and a closing line with the counts.
std::string write_compare_table(const Comparison& comparison);

/// JUnit XML: one <testcase> per check (classname kvsweep.<probe>, name "<cell> <metric>"), a
/// <failure> for a regression, <skipped> when neither run has values.
std::string write_junit(const Comparison& comparison);

}  // namespace kvsweep::report
