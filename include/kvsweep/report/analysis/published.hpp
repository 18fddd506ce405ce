#pragma once
/// Numbers a seed document published (published/*.json: run summaries, ctk\ctv grids, per-model
/// KV deltas) and a run's summary set beside them, cell by cell, with its bootstrap CIs.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/input/summary_document.hpp"

namespace kvsweep::report {

inline constexpr int kPublishedSchemaVersion = 1;

/// The document the numbers were copied from.
struct PublishedSource {
  std::string title;
  std::string file;
  std::string seed;
};

/// Seed 001's summary table, one row per published run. A number the document does not give is NaN.
struct PublishedSummaryRow {
  int run = 0;
  std::string id;
  std::string label;
  double combos = 0.0;
  double pass_mean = 0.0;  // items passing per cell, of items_per_cell
  double pass_sd = 0.0;
  double mean = 0.0;       // of the per-cell means of the metric
  double sd = 0.0;
  double min = 0.0;
  double max = 0.0;
  std::string gradient;
};

struct PublishedCell {
  std::string type_k;
  std::string type_v;
  double value = 0.0;
};

/// A published ctk\ctv matrix of per-cell means; cells are row-major (k_types × v_types).
struct PublishedGrid {
  std::string id;
  std::string title;
  std::vector<std::string> k_types;
  std::vector<std::string> v_types;
  std::vector<PublishedCell> cells;
};

/// One model of a published KV comparison (reference setting minus the other). NaN where not given.
struct PublishedModelDelta {
  std::string label;
  std::vector<std::string> match;  // words a run's model name or path must all hold (see compare_published)
  double delta = 0.0;
  double reference_value = 0.0;
  double other_value = 0.0;
  double range_lo = 0.0;  // "flat ~lo–hi" when the document gives a range instead of values
  double range_hi = 0.0;
  std::string note;
};

struct PublishedAggregate {
  double models = 0.0;
  double improved = 0.0;  // models with delta > 0
  double mean_delta = 0.0;
};

/// Seed 000's shape: per model, the final metric under a reference KV setting minus another.
struct PublishedDeltas {
  std::string title;
  std::string definition;
  std::string reference_label;
  std::string type_k_reference;
  std::string type_v_reference;
  std::string other_label;
  std::string type_k_other;
  std::string type_v_other;
  std::vector<PublishedModelDelta> models;
  std::optional<PublishedAggregate> aggregate;
};

struct Published {
  std::string name;
  PublishedSource source;
  std::string probe;        // a probe name, or the kind of the run's probes to compare with
  std::string metric;
  std::string pass_metric;  // empty when none
  int decimals = 2;         // the document's rounding; "inside the CI" allows half a unit of it
  std::size_t items_per_cell = 0;
  /// From the document's "setup", when it says: the answer's lines (recall's `lines`) and the context
  /// window in tokens ("262K" reads as 262000); 0 when not given.
  int lines = 0;
  double context_tokens = 0;
  std::vector<PublishedSummaryRow> summaries;
  std::vector<PublishedGrid> grids;
  std::optional<PublishedDeltas> deltas;
};

/// Reads a published document. Fails with ErrorKind::parse and "<where>: what is wrong" on a wrong
/// kind or schema_version, a missing source title or file, a grid row whose length is not the number
/// of V types, an unknown cache type, a non-finite value or one outside the grid's "range".
core::Expected<Published> parse_published(const nlohmann::json& doc);

/// The same from a file (ErrorKind::io when it cannot be read); messages start with the path.
core::Expected<Published> load_published(const std::filesystem::path& path);

struct PublishedCompareOptions {
  std::string metric;  // the run's metric to set beside the published one (default: the file's)
  std::string grid;    // only this published grid (by id); empty = every grid
};

/// One published grid cell beside the run's cell with the same K and V types.
struct CellCheck {
  std::string type_k;
  std::string type_v;
  double published = 0.0;
  bool run = false;        // false: the run has no values for this cell ("not run")
  std::size_t n = 0;
  double run_mean = 0.0;
  double ci_lower = 0.0;
  double ci_upper = 0.0;
  double diff = 0.0;       // run − published
  bool inside = false;     // the published value lies in the run's 95% CI (± half a rounding unit)
};

struct GridCheck {
  std::string grid_id;
  std::string title;
  std::string model;  // the run's model ("" when the run has none for the probe)
  std::string variant;  // the run model's variant ("" without variants)
  std::string probe;  // the run's probe ("" when it has none)
  std::vector<CellCheck> cells;
  std::size_t count_inside() const;
  std::size_t count_not_run() const;
};

/// The run's row of seed 001's summary table, computed over its cells for the compared metric.
struct RunHeadline {
  std::string model;
  std::string variant;  // "" without variants
  std::string probe;
  std::size_t combos = 0;
  std::size_t k = 0;       // items per cell
  double pass_mean = 0.0;  // NaN without a pass metric
  double pass_sd = 0.0;
  double mean = 0.0;
  double sd = 0.0;
  double min = 0.0;
  double max = 0.0;
  std::string gradient;    // the run's gradient verdict for this metric, "" when not computed
};

struct ModelDeltaCheck {
  PublishedModelDelta published;
  std::string model;  // the run's model; empty = "not run"
  std::string variant;  // the run model's variant ("" without variants)
  std::string probe;
  bool has_reference = false;
  bool has_other = false;
  double reference_mean = 0.0;
  double reference_lower = 0.0;
  double reference_upper = 0.0;
  double other_mean = 0.0;
  double other_lower = 0.0;
  double other_upper = 0.0;
  std::size_t n_pairs = 0;
  double delta = 0.0;  // reference − other: paired over common items, else the difference of means
  double delta_lower = 0.0;
  double delta_upper = 0.0;
};

struct RunAggregate {
  std::size_t models = 0;  // run models with both settings
  std::size_t improved = 0;
  double mean_delta = 0.0;
};

struct PublishedComparison {
  Published published;
  std::string run_name;
  std::string metric;  // the run metric compared
  std::vector<std::string> run_probes;
  std::vector<RunHeadline> headlines;
  std::vector<GridCheck> grids;
  std::vector<ModelDeltaCheck> deltas;
  RunAggregate aggregate;
  std::vector<std::string> warnings;  // no matching probe or metric, unmatched models
};

/// Sets a run's summary document (summary_document(), or a summary.json) beside `published`.
/// The run's probe is the one named `published.probe`, else every probe of that kind. Grid cells
/// match by type_k/type_v, per run model; the CI is the summary's ci95. A published model matches
/// every run model whose name or path, split at ':', '/', '-' and spaces and lowercased, holds all
/// of its `match` words; the delta's CI is a percentile bootstrap (2000 resamples, seed 42) of the
/// paired differences. Fails (ErrorKind::parse) only when `run` is not a kvsweep summary, and
/// (ErrorKind::invalid) when options.grid names no published grid.
core::Expected<PublishedComparison> compare_published(const nlohmann::json& run, const Published& published,
                                                      const PublishedCompareOptions& options = {});
/// The same over a document already read (read_summary_document()); a run model with variants is
/// set beside the published numbers once per variant.
core::Expected<PublishedComparison> compare_published(const SummaryDocument& run, const Published& published,
                                                      const PublishedCompareOptions& options = {});

/// Whether `value` lies in [lo − slack, hi + slack]; false when any of them is NaN.
bool inside_interval(double value, double lo, double hi, double slack);

/// The source, the summary rows (published and the run's), per grid a cell table with "not run" rows
/// and a count line, the model deltas and the aggregate.
Document published_document(const PublishedComparison& comparison);
/// published_document() as Markdown.
std::string write_published_comparison(const PublishedComparison& comparison);

}  // namespace kvsweep::report
