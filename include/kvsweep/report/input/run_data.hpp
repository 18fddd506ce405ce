#pragma once
/// A run directory read for reporting: the manifest's probes and cells, and for every (cell, probe,
/// item) the record that counts — the last `ok` one, or the last failure when none succeeded.

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/probe/record.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::report {

/// A metric as the run's manifest declares it (or, for a run written before declarations, as inferred).
using MetricDef = probe::MetricSpec;

struct ProbeDef {
  std::string name;
  std::string kind;
  std::size_t items = 0;       // items per cell the manifest planned (0 when unknown)
  bool deterministic = false;  // greedy decoding: a rerun on the same build gives the same answers
  /// Whether the manifest declared the metrics (direction, kind, role). When not (a run written by an
  /// older kvsweep): every metric is a higher-is-better quality metric unless the manifest said otherwise,
  /// binary when every value in the run is 0 or 1, and `deterministic` is inferred from the kind.
  bool declared = false;
  std::vector<MetricDef> metrics;
  nlohmann::json config;       // the probe's entry of the resolved config (null when absent)
  // The metric the reference cell must not be floored or saturated on, and its range (the
  // manifest's probes[].calibration; empty metric when the probe declares none).
  std::string calibration_metric;
  double calibration_lo = 0;
  double calibration_hi = 1;
  /// The most items the probe could give as configured (recall: its corpus's functions); nullopt when
  /// a config can list more (the manifest's probes[].items_max).
  std::optional<std::size_t> items_max;
  /// The config's "gate": the quality metrics that decide verdicts; empty: every quality metric.
  std::vector<std::string> gate;
};

/// One device's buffers as the cell's server logged them, in MiB at the cell's -c (the manifest's
/// `effective.memory`).
struct DeviceBuffers {
  std::string device;  // "CUDA0", "CPU_Mapped", "CUDA_Host", "CPU"
  bool gpu = false;    // GPU memory (not the CPU's, not pinned host memory)
  double model_mib = 0.0;
  double kv_mib = 0.0;
  double compute_mib = 0.0;
};

/// A cell of the run as the manifest and the records have it: its key (model, variant, K, V) and
/// what the run recorded of it.
struct CellDef : core::CellKey {
  std::string id;  // the manifest's id (core::CellKey::id() for a cell it does not list)
  bool is_reference = false;
  std::string outcome;  // ok, unsupported, load_failed, crashed, wedged, config_mismatch; "unknown" if not in the manifest
  std::string message;
  double kv_mib = 0.0;  // NaN when the manifest does not say
  double ready_s = 0.0; // NaN when the manifest does not say
  std::string rotation = "-";  // attention rotation K/V from the server log ("on/off"), "-" when unknown
  // The attention path of the pair (vec, converted, cpu, fallback?, unknown) and why; "" when the
  // manifest does not say (a run written before paths were recorded, a cell that never started).
  std::string path;
  std::string path_reason;
  std::vector<DeviceBuffers> memory;  // empty when the manifest does not say
};

/// What one item of one cell and probe came to: the record that counts for it, read for the report
/// (probe::ItemResult is what the probe returned; probe::Record the line it was written as).
struct ItemOutcome {
  std::string item;
  bool ok = false;
  std::string status;   // "ok" or the class of the last failure
  std::string error;    // the last failure's message when !ok
  std::size_t attempts = 0;
  /// Not run: an adaptive sweep settled the cell's verdicts first (status "skipped", reason "settled").
  bool settled = false;
  std::size_t record = 0;  // index into RunData::records() of the record that counts (the run order of ok items)
  std::map<std::string, double> metrics;  // numeric (and boolean as 0/1) metrics; empty unless ok
  nlohmann::json response;                // of the ok record (null otherwise)
};

/// Metric values of the ok items of one cell and probe, in item order.
struct Values {
  std::vector<std::string> items;
  std::vector<double> values;
};

/// A cell only records name, outside the config's grid, and how many records name it.
struct OutsideCell {
  core::CellKey cell;
  std::size_t records = 0;
};

class RunData {
 public:
  /// Reads RUN_DIR/manifest.json (sweep::RunStore::read_manifest: its journal folded in) and
  /// RUN_DIR/records.jsonl (a torn last line is tolerated).
  static core::Expected<RunData> load(const std::filesystem::path& dir);
  /// The same from parsed parts (tests, merged runs). Fails on a manifest that is not an object.
  static core::Expected<RunData> from(sweep::Manifest manifest, std::vector<probe::Record> records);
  /// The same from a manifest's JSON (fails when it is not an object).
  static core::Expected<RunData> from(nlohmann::json manifest, std::vector<probe::Record> records);
  /// The same from records as JSON lines (read with probe::Record::from_json).
  static core::Expected<RunData> from(nlohmann::json manifest, const std::vector<nlohmann::json>& records);

  const sweep::Manifest& manifest() const { return m_manifest; }
  const std::vector<probe::Record>& records() const { return m_records; }
  /// Whether records()[i] is the record that counts for its (cell, probe, item).
  bool counts(std::size_t record_index) const { return m_counts.at(record_index); }
  /// Cells the records name that are outside the config's grid (a record appended by hand or by
  /// another run): not reported as cells, their records never count; the caller warns.
  const std::vector<OutsideCell>& outside_grid() const { return m_outside; }

  std::string name() const;
  const std::vector<ProbeDef>& probes() const { return m_probes; }
  const ProbeDef* probe(const std::string& name) const;
  const std::vector<CellDef>& cells() const { return m_cells; }
  /// Models in manifest order.
  const std::vector<std::string>& models() const { return m_models; }
  /// Variant names in the config's order (empty in a run without variants).
  const std::vector<std::string>& variants() const { return m_variants; }
  /// The report's grids: CellDef::group() of every cell, by model (manifest order), then variant.
  /// Without variants these are the models.
  const std::vector<std::string>& groups() const { return m_groups; }
  /// The model and variant of a group label ("" variant without variants; the label itself when unknown).
  std::pair<std::string, std::string> group_parts(const std::string& group) const;
  /// K and V types in the config's grid order (cells' types not listed there are appended).
  const std::vector<std::string>& k_types() const { return m_k_types; }
  const std::vector<std::string>& v_types() const { return m_v_types; }

  /// Indices into cells() by group, then K type, then V type in grid order (tables read this way).
  std::vector<std::size_t> grid_order() const;

  /// Index into cells() of a group's reference cell (a group is a model, or model/variant).
  std::optional<std::size_t> reference(const std::string& group) const;
  std::optional<std::size_t> find_cell(const std::string& group, const std::string& type_k,
                                       const std::string& type_v) const;

  /// Every item seen for (cell, probe), naturally ordered ("p2" before "p10"); empty when none.
  const std::vector<ItemOutcome>& items(std::size_t cell, const std::string& probe) const;
  Values values(std::size_t cell, const std::string& probe, const std::string& metric) const;

 private:
  sweep::Manifest m_manifest;
  std::vector<probe::Record> m_records;
  std::vector<bool> m_counts;
  std::vector<OutsideCell> m_outside;
  std::vector<ProbeDef> m_probes;
  std::vector<CellDef> m_cells;
  std::vector<std::string> m_models;
  std::vector<std::string> m_variants;
  std::vector<std::string> m_groups;
  std::vector<std::string> m_k_types;
  std::vector<std::string> m_v_types;
  std::map<std::pair<std::size_t, std::string>, std::vector<ItemOutcome>> m_items;
};

}  // namespace kvsweep::report
