#pragma once
/// Comparing a run with a baseline: for every (cell, probe, quality metric) in both, is the change a
/// regression — bad-direction, beyond tolerance, and significant (or any change of a deterministic
/// metric) — or inconclusive, because the paired test could never have found it significant?

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/report/analysis/manifest_changes.hpp"
#include "kvsweep/report/analysis/summary.hpp"
#include "kvsweep/report/input/context.hpp"
#include "kvsweep/sweep/store/run_identity.hpp"

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
  bool fail_inconclusive = false;               // an inconclusive check fails the gate (exit 1, JUnit failure)
  /// The runs' items may differ (an intentional change of the config): compare the common items. Without
  /// it, runs whose items differ are refused (ErrorKind::invalid) with what differs.
  bool allow_diff = false;
  /// The run may lack baseline cells or items (a smaller grid or a failed item on purpose): such checks
  /// are `missing` without failing the gate. Without it they fail it (exit 1, JUnit failures).
  bool allow_missing = false;
  /// The two runs computed on different hosts as llama.cpp reported them (compute_differs): a deterministic
  /// metric's change beyond the tolerance is then inconclusive (ReasonCode::host_changed), not a regression.
  bool host_changed = false;
};

/// `inconclusive`: a bad-direction change beyond the tolerance on a check whose paired test cannot
/// reach significance with the items at hand (see Check::powered) — neither a regression nor ok.
/// `not_comparable`: both runs hold values for the cell but on no common item (other items); never a
/// regression. `missing`: the baseline has values for a cell this run does not have, or for items of the
/// cell this run holds in other cells but not in it (failed, not run) beyond those an adaptive stop settled;
/// it fails the gate unless allowed (CompareOptions::allow_missing).
enum class Verdict { ok, regression, inconclusive, improved, no_data, not_comparable, missing };
std::string_view to_string(Verdict verdict);

/// Why a check has its verdict: the analysis decides it, explain() words it.
enum class ReasonCode {
  exact,            // a deterministic probe on the same items: compared without a test
  significant,      // the paired test, Holm-adjusted, is below alpha
  not_significant,  // it is not
  underpowered,     // inconclusive: the test could not call a change of this size significant (Check::powered)
  host_changed,     // inconclusive: a deterministic probe's change across hosts whose kernels round differently
  no_current,       // the baseline has values for the result, this run none (Check::outcome, items_failed)
  no_result,        // the baseline has values, this run has the cell but no result (Check::outcome)
  no_data,          // neither run has values
  no_common_items,  // both runs have values, on other items (not_comparable)
  no_cell,          // the baseline has values, this run has no such cell (missing)
};

struct Check {
  std::string cell;  // cell id
  std::string model;
  std::string variant;  // "" when the run has no variants
  std::string type_k;
  std::string type_v;
  std::string probe;
  std::string metric;
  bool higher_is_better = true;
  probe::MetricKind kind = probe::MetricKind::continuous;
  bool deterministic = false;
  bool identical_items = false;  // both runs have values for exactly the same items
  std::size_t n_common = 0;
  double baseline_mean = 0.0;    // over the common items
  double current_mean = 0.0;
  double delta = 0.0;            // current − baseline
  double tolerance = 0.0;        // absolute, after resolving a relative tolerance
  std::string test;              // mcnemar (declared binary), wilcoxon, or empty (deterministic or no data)
  double p = 1.0;
  double p_holm = 1.0;           // Holm across the comparison's tested (stochastic) checks
  /// Whether the test could ever call a change of this size significant here: its smallest
  /// attainable p is below alpha / (number of tested checks), Holm's first step. Wilcoxon: for
  /// n_common pairs all moving the same way. McNemar (binary): for the |Δ| · n_common items the
  /// observed change amounts to, all flipping the same way (the discordant pairs are all it sees).
  /// Always true for a deterministic check on the same items (no test needed).
  bool powered = true;
  double min_p = 1.0;            // that smallest attainable p (NaN when untested)
  std::size_t n_needed = 0;      // pairs (binary: discordant pairs one way) needed to be powered; 0 if unreachable
  Verdict verdict = Verdict::ok;
  ReasonCode why = ReasonCode::exact;
  std::size_t n_baseline = 0;    // values the baseline holds for the check
  std::size_t n_current = 0;     // values this run holds
  std::string outcome;           // the run's cell outcome when it holds no values (no_current, no_result)
  std::size_t items_failed = 0;  // the run's failed items when it holds no values (no_current)
  std::size_t items_settled = 0;  // the run's items an adaptive stop settled (not run, not missing)
  /// Items the baseline has values for and this run, in this cell, not, where the run holds them in another
  /// cell (a config difference is not a missing item); kept only when more than items_settled. Non-empty:
  /// `missing` (a regression stays one).
  std::vector<std::string> missing_items;
  std::string reason;            // explain(): the verdict's reason in English
};

struct Comparison {
  std::string current_name;
  std::string baseline_name;
  std::vector<Check> checks;
  std::vector<std::string> warnings;  // context differences, cells only one side has, inferred declarations
  std::vector<std::string> differences;  // config hash and items that differ (run_differences), said first
  std::vector<ManifestChange> changes;    // what the manifests say changed (manifest_changes), said before them
  double alpha = 0.05;
  std::size_t tested = 0;             // stochastic checks in the Holm family
  std::size_t diagnostics = 0;        // (cell, probe, diagnostic metric) pairs both runs hold; reported, never gated
  bool fail_inconclusive = false;
  bool allow_missing = false;
  bool host_changed = false;          // CompareOptions::host_changed
  std::size_t count(Verdict verdict) const;
  /// Whether a check's verdict fails the gate: a regression, an inconclusive one with fail_inconclusive,
  /// a missing one without allow_missing.
  bool fails(const Check& check) const;
};

/// Compares two summaries (make_summary() of the run, and of the baseline run or a summary.json it
/// wrote: load_summary()). Only quality metrics are checked, as the probes declared them (the run's
/// declaration first, then the baseline's; a summary without declarations is read with the older
/// inference — every metric quality, 0/1 values binary — and a warning says so). Cells pair by
/// (model, variant, type_k, type_v); items pair by key within each (cell, probe, metric). A deterministic probe on the same items: any change beyond the
/// tolerance counts. Otherwise the paired test is McNemar for a binary metric, Wilcoxon signed-rank
/// for the others; Holm adjusts across these tested checks; a bad-direction change of the common-item
/// mean beyond the tolerance is a regression when p_holm < alpha, `inconclusive` when the check is not
/// powered, else ok. A cell with values in the baseline and none now is a regression; a cell or items
/// the run lacks altogether are `missing` (checked on the items it has when it has some). Fails
/// (ErrorKind::invalid) when the two share no (cell, probe, metric).
core::Expected<Comparison> compare_summaries(const Summary& current, const Summary& baseline, const CompareOptions& options);
/// The same over two documents, read by Summary::from_json ("the run's summary", "the baseline"): fails
/// (ErrorKind::parse) on a document that is not a kvsweep summary.
core::Expected<Comparison> compare_summaries(const nlohmann::json& current, const nlohmann::json& baseline,
                                             const CompareOptions& options);

/// A check's reason (Check::reason) in English: the change of the mean and its ReasonCode worded.
std::string explain(const Check& check, const Comparison& comparison);

/// The exit status `kvsweep compare` returns for a comparison: 1 when any check fails(), else 0.
int exit_status(const Comparison& comparison);

/// The parts of its run's manifest a summary keeps, from its typed fields: context.server, kvsweep, models,
/// n_ctx, server_env, compute and the config hash, and each cell's reported settings (`effective`). What
/// compare explains a change by, and the published comparison reads the setup from, for a summary kept
/// apart from its run (no config, host or probes: what only those say is not compared).
sweep::Manifest manifest_parts(const Summary& summary);
/// The manifest of a run directory, or of the run whose report/summary.json `path` is (the store's read:
/// the journal folded in); for a summary.json kept apart from its run (a committed baseline),
/// manifest_parts(`summary`, what was loaded from `path`). nullopt when the run's cannot be read, or the
/// summary has no context.
std::optional<sweep::Manifest> load_manifest(const std::filesystem::path& path, const Summary& summary);
/// The identity (sweep::read_identity: model files, embedder, input files, server build and environment)
/// of a run directory, or of the run whose report/summary.json `path` is, read as strictly as a resume
/// or a merge reads it: a field of another type is an invalid error naming the manifest and the field.
/// A missing config_hash reads as "" (compare does not check the config by it). nullopt when `path` has
/// no manifest to read: a summary.json kept apart from its run records no identity.
core::Expected<std::optional<sweep::RunIdentity>> load_identity(const std::filesystem::path& path);
/// A run or a baseline, read once: a run directory summarized now (make_summary(), as its summary.json
/// would hold it), or a summary.json read by Summary::from_json (errors name the path).
core::Expected<Summary> load_summary(const std::filesystem::path& path, const Generator& generator);

}  // namespace kvsweep::report
