#pragma once
/// The statistics of a run: per cell and probe metric summaries with bootstrap CIs, paired tests
/// against the reference cell (Holm-adjusted across cells), the precision-gradient test and K-vs-V marginal effects.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/stats/gradient.hpp"
#include "kvsweep/stats/summary.hpp"

namespace kvsweep::report {

struct SummaryOptions {
  std::size_t bootstrap_iterations = 2000;
  double confidence = 0.95;
  std::uint64_t bootstrap_seed = 42;  // fixed: the same run always gives the same intervals
  double alpha = 0.05;
};

/// A cell against its model's reference cell on the items both answered.
struct ReferenceTest {
  std::string test;                    // "mcnemar" (both sides 0/1) or "wilcoxon"
  std::size_t n_pairs = 0;
  double delta = 0.0;                  // mean of cell − reference over the pairs
  stats::ConfidenceInterval delta_ci;  // percentile bootstrap of the paired differences
  double p = 1.0;
  double p_holm = 1.0;                 // Holm across the model's non-reference cells for this probe metric
  std::uint64_t b = 0;                 // McNemar: pairs only the reference scored 1
  std::uint64_t c = 0;                 // McNemar: pairs only the cell scored 1
  double w_plus = 0.0;                 // Wilcoxon: rank sums of positive / negative differences
  double w_minus = 0.0;
  bool significant = false;            // p_holm < alpha
};

struct MetricStats {
  std::string metric;
  bool higher_is_better = true;
  Values values;  // the ok items' values
  stats::Summary summary;
  stats::ConfidenceInterval ci;
  std::optional<ReferenceTest> vs_reference;  // absent for the reference itself or without pairs
};

struct CellProbeStats {
  std::size_t cell = 0;  // index into RunData::cells()
  std::string probe;
  std::size_t items_ok = 0;
  std::vector<std::string> failed_items;  // items with no ok record, not settled
  std::size_t items_settled = 0;          // adaptive: items not run because the verdicts were settled
  std::vector<MetricStats> metrics;       // in the probe's metric order
};

/// Mean of the cell means in one row (a K type) or column (a V type) of a grid — not of the pooled
/// items, so a cell with failed items weighs as much as its neighbours; n counts cells.
struct AxisMean {
  std::string type;
  stats::Summary summary;
  stats::ConfidenceInterval ci;
};

/// One model's grid for one probe metric: cell means across K × V and what they follow.
struct GridStats {
  std::string model;
  std::string probe;
  std::string metric;
  bool higher_is_better = true;
  bool quality = true;               // a declared quality metric; the gradients are left empty for diagnostics
  stats::GradientResult gradient;    // bits(K) + bits(V) vs the cell mean
  stats::GradientResult k_gradient;  // bits(K) alone
  stats::GradientResult v_gradient;  // bits(V) alone
  std::vector<AxisMean> rows;        // K types in grid order (those with data)
  std::vector<AxisMean> columns;     // V types in grid order (those with data)
  double k_spread = 0.0;             // max − min of the row means (NaN with no rows)
  double v_spread = 0.0;
};

/// The row of seed 001's summary table for one model and probe.
struct Headline {
  std::string model;
  std::string probe;
  std::size_t combos = 0;          // cells with at least one ok item
  std::size_t k = 0;               // items per cell (most seen in any cell, or the manifest's count)
  std::string pass_metric;         // empty when the probe has none
  stats::Summary pass_count;       // per cell: items with pass_metric = 1
  std::string main_metric;
  stats::Summary main;             // of the per-cell means of main_metric (min/max give the range)
  stats::Gradient gradient = stats::Gradient::no;
};

/// What each probe's metrics are for the tables.
struct MetricRoles {
  std::string probe;
  std::string pass_metric;               // "passed" or "match_reference", else the first 0/1 higher-is-better quality metric
  std::string main_metric;               // the first higher-is-better quality metric that is not 0/1
  std::vector<std::string> binary;       // metrics declared binary (inferred for older runs)
};

struct RunSummary {
  SummaryOptions options;
  std::vector<MetricRoles> roles;        // per probe, in probe order
  std::vector<CellProbeStats> results;   // cells in manifest order × probes in probe order (only pairs with items)
  std::vector<GridStats> grids;          // model × probe × metric
  std::vector<Headline> headlines;       // probe × model

  const CellProbeStats* find(std::size_t cell, const std::string& probe) const;
  const MetricStats* find(std::size_t cell, const std::string& probe, const std::string& metric) const;
  const GridStats* grid(const std::string& model, const std::string& probe, const std::string& metric) const;
  const MetricRoles* roles_of(const std::string& probe) const;
};

RunSummary summarize_run(const RunData& data, const SummaryOptions& options = {});

/// A paired test between two samples of the same items: McNemar for a metric declared binary (whose
/// values are all 0 or 1), else Wilcoxon signed-rank — chosen by the declaration, never by the values
/// (a continuous metric that happens to be 0 everywhere is still Wilcoxon). `x` is the sample under test,
/// `y` the one it is compared with. p_holm is left equal to p and `significant` false (the caller adjusts
/// across its family).
ReferenceTest paired_test(std::span<const double> x, std::span<const double> y, probe::MetricKind kind,
                          const SummaryOptions& options);

/// Values of `x` and `y` for the items both hold, in `x`'s order.
void pair_up(const Values& x, const Values& y, std::vector<double>& out_x, std::vector<double>& out_y);

}  // namespace kvsweep::report
