#pragma once
/// A probe as the manifest lists it (manifest.json's `probes[]`): what the run planned of it (items, the
/// most it could give), its metric declarations, its calibration range and the input files it read.
/// The runner writes it from the probe (`probe_entry`, then `to_json`); the report reads it back with
/// `ProbeEntry::from_json`; the identity check reads `inputs` (sweep/store/run_identity). One type, one
/// JSON mapping.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

struct ProbeEntry {
  std::string name;  // the probe's name in the run; its kind when a manifest lists none
  std::string kind;
  std::optional<std::size_t> items;      // items per cell as planned
  std::optional<bool> deterministic;     // greedy decoding (absent in older manifests)
  /// Whether every metric is declared (direction, kind, role): `metrics` holds them. A manifest written
  /// before declarations names its metrics only: then `named` holds each name with its higher_is_better
  /// (true unless it said otherwise), for the reader to infer the rest.
  bool declared = false;
  std::vector<MetricSpec> metrics;
  std::vector<std::pair<std::string, bool>> named;
  std::optional<Probe::Calibration> calibration;  // lo/hi NaN when the manifest gave none
  std::optional<std::size_t> items_max;           // the most items the probe could give as configured
  nlohmann::json inputs;                          // [InputFile] the probe read; null when it read none

  /// An entry read back, leniently as kvsweep reads its own manifest: a field of another type reads as
  /// absent. nullopt when `j` is not an object or names no probe (neither name nor kind); an error
  /// naming `where`.NAME.metrics[i] ("manifest.json: probes.kld.metrics[1]: …") when a metric of an
  /// entry that declares them all is not a declaration.
  static core::Expected<std::optional<ProbeEntry>> from_json(const nlohmann::json& j, const std::string& where);
};

/// The entry of `probe` as the run plans it.
ProbeEntry probe_entry(const Probe& probe);

/// name, kind, items, deterministic, metrics; items_max, calibration and inputs when present.
nlohmann::json to_json(const ProbeEntry& entry);

}  // namespace kvsweep::probe
