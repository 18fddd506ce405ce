#pragma once
/// Numbers a document published (published/*.json, docs/published-format.md: run summaries, ctk\ctv
/// grids per variant, per-model KV deltas) and a run's summary set beside them, like with like: each
/// figure reproduced or not within its stated precision.

#include <cstddef>
#include <filesystem>
#include <map>
#include <string_view>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/report/analysis/published_setup.hpp"
#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/analysis/summary.hpp"

namespace kvsweep::report {

inline constexpr int kPublishedSchemaVersion = 2;

/// How close a run's figure must come to a published one, as the file states it: an absolute
/// `tolerance`, else the `decimals` it was rounded to (half a unit of the last one). Never defaulted.
struct Precision {
  int decimals = -1;        // -1: not stated
  double tolerance = -1.0;  // < 0: not stated
  bool stated() const { return decimals >= 0 || tolerance >= 0; }
  /// The largest |run − published| that still reproduces the figure.
  double allowed() const;
  /// Decimals to print figures with: the stated ones, else enough for the tolerance.
  int shown_decimals() const;
  /// allowed() in plain decimals ("0.0005", not "5e-04").
  std::string allowed_text() const;
};

/// The document the numbers were copied from.
struct PublishedSource {
  std::string title;
  std::string file;
  std::string seed;
  std::string url;  // where the document is, when it is not shipped in the repository
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

/// One published figure: a cell's mean, or one item's value when the grid lists `items`.
struct PublishedCell {
  std::string type_k;
  std::string type_v;
  std::string item;  // "" for the cell's mean
  double value = 0.0;
};

/// A published ctk\ctv matrix of one probe's metric under one variant; cells are row-major
/// (k_types × v_types, and within a cell its items in order).
struct PublishedGrid {
  std::string id;
  std::string title;
  std::string variant;   // the run variant it was measured under ("" for a run without variants)
  nlohmann::json settings;  // the variant's {env, args} as published; null when not stated
  std::string model;     // the run model it is of ("" when the file's setup says)
  std::string probe;     // a probe name (or kind) of the run
  std::string metric;
  Precision precision;
  std::vector<std::string> items;  // item keys when the figures are per item
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
  PublishedSetup setup;
  std::string probe;        // a probe name, or the kind of the run's probes to compare with ("" when each grid says)
  std::string metric;       // "" when each grid says
  std::string pass_metric;  // empty when none
  Precision precision;      // the file's; a grid may state its own
  std::size_t items_per_cell = 0;
  std::vector<PublishedSummaryRow> summaries;
  std::vector<PublishedGrid> grids;
  std::optional<PublishedDeltas> deltas;
};

/// Reads a published document (docs/published-format.md). Fails with ErrorKind::parse and "<where>:
/// what is wrong" on a wrong kind or schema_version, an unknown key or metric (with a did-you-mean),
/// a figure whose precision is not stated, a missing source title or file/url, a grid row whose length
/// is not the number of V types (× items), an unknown cache type, a non-finite value or one outside
/// the grid's "range".
core::Expected<Published> parse_published(const nlohmann::json& doc);

/// The same from a file (ErrorKind::io when it cannot be read); messages start with the path.
core::Expected<Published> load_published(const std::filesystem::path& path);

/// The metric names a probe kind declares (empty for an unknown kind).
std::vector<std::string> kind_metric_names(const std::string& kind);

struct PublishedCompareOptions {
  std::string metric;  // only the grids of this metric (default: every grid's own)
  std::string grid;    // only this published grid (by id); empty = every grid
  /// The run's setup and variants' settings (from its manifest): compared field by field before any
  /// number; a grid whose variant's settings differ from the run's is not paired. Absent: the
  /// summary's models and build only.
  const PublishedSetup* run_setup = nullptr;
  std::map<std::string, nlohmann::json> run_variant_settings;
};

/// What a figure came to. not_run: the run has no such cell, item, probe, metric or variant.
enum class Reproduced { yes, no, not_run };
/// How it was decided: the published figure inside the run's 95% CI widened by the tolerance; or,
/// where the CI says nothing (one item, no spread between items, a per-item figure), |run − published|
/// against the stated tolerance.
enum class ReproTest { none, interval, one_item, no_spread, item };
std::string_view to_string(Reproduced r);
std::string_view to_string(ReproTest t);

/// One published figure beside the run's cell (or item) with the same K and V types.
struct CellCheck {
  std::string type_k;
  std::string type_v;
  std::string item;        // "" for a cell mean
  double published = 0.0;
  bool run = false;        // false: the run has no values for this cell ("not run")
  std::size_t n = 0;
  double run_mean = 0.0;
  double ci_lower = 0.0;
  double ci_upper = 0.0;
  double diff = 0.0;       // run − published
  bool inside = false;     // reproduced within the stated precision (see test)
  ReproTest test = ReproTest::none;
  Reproduced outcome() const { return !run ? Reproduced::not_run : inside ? Reproduced::yes : Reproduced::no; }
};

struct GridCheck {
  std::string grid_id;
  std::string title;
  std::string model;  // the run's model ("" when the run has none for the probe)
  std::string variant;  // the grid's variant, which the run's cells were paired by
  std::string probe;  // the run's probe ("" when it has none)
  std::string metric;
  Precision precision;
  bool deterministic = true;  // the run's probe is (a sampled one may not reproduce figure for figure)
  std::string unpaired;  // why no run cell was set beside the grid ("" when paired)
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
  Reproduced outcome = Reproduced::not_run;  // the published delta within the run's (CI ± tolerance)
  ReproTest test = ReproTest::none;
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
  std::vector<SetupDifference> setup;  // the published setup against the run's, before any number
  std::vector<std::string> caveats;    // how the model was matched, unpaired variants
  std::vector<std::string> warnings;  // no matching probe or metric, unmatched models
};

/// The figures compared (grid cells or items, model deltas with a published delta): how many
/// reproduced, did not, were not run; and which did not ("grid id variant: k/v item").
struct ReproCounts {
  std::size_t reproduced = 0;
  std::size_t not_reproduced = 0;
  std::size_t not_run = 0;
  std::vector<std::string> failed;
};
ReproCounts repro_counts(const PublishedComparison& comparison);
/// 0 when every compared figure reproduced (figures not run do not count), 1 otherwise.
int published_exit_status(const PublishedComparison& comparison);

/// Sets a run's summary (make_summary(), or a summary.json) beside `published`.
/// The run's probe is the one named `published.probe`, else every probe of that kind. Grid cells
/// match by type_k/type_v, per run model; the CI is the summary's ci95. A published model matches
/// every run model whose name or path, split at ':', '/', '-' and spaces and lowercased, holds all
/// of its `match` words; the delta's CI is a percentile bootstrap (2000 resamples, seed 42) of the
/// paired differences. Fails (ErrorKind::parse) only when `run` is not a kvsweep summary, and
/// (ErrorKind::invalid) when options.grid names no published grid.
core::Expected<PublishedComparison> compare_published(const nlohmann::json& run, const Published& published,
                                                      const PublishedCompareOptions& options = {});
/// The same over a summary already read (load_summary()); a run model with variants is
/// set beside the published numbers once per variant.
core::Expected<PublishedComparison> compare_published(const Summary& run, const Published& published,
                                                      const PublishedCompareOptions& options = {});

/// What makes the run's numbers unlike the published ones before any cell is set beside them: the
/// grids' reference type missing from the run, other item counts per cell (of `run_probes`).
std::vector<std::string> unlike_published(const Summary& run, const Published& published,
                                          const std::vector<std::string>& run_probes);
/// How the run's model is matched with the published one: nothing when by its sha256; else a caveat
/// (by name only, or of other weights) in `comparison.caveats`.
void model_caveat(const Summary& run, const Published& published, PublishedComparison& comparison);

/// Decides a figure the run has (run_mean, n, CI set): reproduced when the published value lies inside the
/// run's 95% CI widened by the stated tolerance; where that CI says nothing — one item, no spread between
/// items (a zero-width CI), a per-item figure — when |run − published| is within the tolerance itself.
void decide_figure(CellCheck& check, const Precision& precision);
/// The same for a model's Δ (n_pairs, CI); nothing when the file gives no Δ.
void decide_delta(ModelDeltaCheck& check, const Precision& precision);

/// Whether `value` lies in [lo − slack, hi + slack]; false when any of them is NaN.
bool inside_interval(double value, double lo, double hi, double slack);

/// The source, the summary rows (published and the run's), per grid a cell table with "not run" rows
/// and a count line, the model deltas and the aggregate.
Document published_document(const PublishedComparison& comparison);
/// published_document() as Markdown.
std::string write_published_comparison(const PublishedComparison& comparison);
/// The comparison for tools: the setup differences, every figure with its outcome, the counts.
std::string write_published_json(const PublishedComparison& comparison);

/// What `kvsweep published export` writes of a run.
struct PublishedExportOptions {
  std::string name;                  // the file's name (default: the run's)
  std::vector<std::string> probes;   // only these probes (names or kinds); empty = every probe
  std::vector<std::string> metrics;  // only these metrics; empty = each probe's gated ones
  std::vector<std::string> variants; // only these variants; empty = every one
  int decimals = -1;                 // the figures' stated rounding; -1: 3 significant digits of the grid's smallest figure
};
/// A run's summary as a published file (schema_version 2): per (model, variant, probe, metric) a grid of
/// its cells (a deterministic probe's figures per item when it has 2–8 items, else the cell means), each
/// grid with its variant's settings and its stated decimals; the setup from the manifest. Fails
/// (ErrorKind::invalid) when a selection matches nothing.
core::Expected<nlohmann::ordered_json> export_published(const Summary& run, const sweep::Manifest& manifest,
                                                const PublishedExportOptions& options);

}  // namespace kvsweep::report
