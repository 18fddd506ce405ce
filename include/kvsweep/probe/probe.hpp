#pragma once
/// A probe: a kind of task run against every cell, split into items; each item run
/// produces one record's worth of result.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/input_file.hpp"
#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/probe/record.hpp"
#include "kvsweep/server/api.hpp"

namespace kvsweep::probe {

/// One unit of a probe inside a cell. `key` is stable across runs (it is the resume key).
struct Item {
  std::string key;
  nlohmann::json spec;  // whatever the probe needs to run it; stored in the record
};

/// The cell as a probe sees it: its key (model, variant, K, V) and what probes need to run.
struct CellInfo : core::CellKey {
  std::string model_path;  // file (llama-server) or tag (ollama)
  bool is_reference = false;
  int n_ctx = 0;
  std::vector<std::string> server_args;  // the cell's extra server args (server's, then its variant's, e.g. -fa on), for probes that run tools
  std::filesystem::path run_dir;         // where probes may keep per-run artifacts (e.g. KLD base logits)
  std::filesystem::path log_path;        // the cell's log file
  std::string server_binary;             // the cell's llama-server as resolved (empty when not known), for tools beside it
  /// The environment the cell's server got (server.env, the variant's, the slot's), for tools a probe launches.
  std::vector<std::pair<std::string, std::string>> env;
};

/// What one item produced. A failed request is an error (recorded with its class), never a zero metric.
struct ItemResult {
  nlohmann::json response = nullptr;   // raw text(s) the server produced
  nlohmann::json metrics = nlohmann::json::object();
  server::Timings timings;             // summed over the item's requests
};

/// Instruments a probe may need that are not part of the cell (the embedder).
class Embedder {
 public:
  virtual ~Embedder() = default;
  virtual core::Expected<std::vector<std::vector<float>>> embed(const std::vector<std::string>& texts) = 0;
  virtual nlohmann::json describe() const = 0;
};

struct Context {
  /// The cell's server; for a probe that runs_tool() the server is stopped and every request fails.
  server::Api& api;
  const CellInfo& cell;
  Embedder* embedder = nullptr;  // set when needs_embedder()
  /// The reference cell's ok records of the same probe (for probes that compare against it, e.g.
  /// divergence in reference mode). Empty if not yet run.
  const std::vector<Record>* reference_records = nullptr;
};

class Probe {
 public:
  virtual ~Probe() = default;
  virtual std::string kind() const = 0;
  /// The probe's own name in the run (defaults to kind; two probes of one kind need distinct names).
  virtual std::string name() const { return kind(); }
  /// The items of this probe for one cell (same list for every cell).
  virtual std::vector<Item> items() const = 0;
  virtual bool needs_embedder() const { return false; }
  /// Whether items read the reference cell's records while they run (Context::reference_records).
  /// A shard that does not own the reference cell then runs it too, as a support cell.
  virtual bool compares_with_reference() const { return false; }
  /// Whether the probe runs a llama.cpp tool of its own (llama-perplexity, llama-bench) that loads
  /// the model itself instead of talking to the cell's server. The runner runs such probes after the
  /// cell's server has stopped, so a model that fits the device once is enough.
  virtual bool runs_tool() const { return false; }
  /// Minimum context the probe needs (the runner uses it for -c when the config leaves it open).
  virtual int min_context() const { return 0; }
  /// What the probe needs of the cells' server beyond a text completion, each with what it does
  /// without it (server::Need::fallback; empty: it cannot run). A grid whose server lacks a need that
  /// has no fallback is refused before its first cell, naming the probe and the capability.
  virtual std::vector<server::Need> needs() const { return {}; }
  /// Runs one item. An Error means the item failed (timeout and connect errors also tell the
  /// runner about the server's state).
  virtual core::Expected<ItemResult> run(const Item& item, Context& ctx) = 0;
  /// Every numeric metric an item of this probe emits, declared: direction, kind and role (quality
  /// metrics are gated and recommended on, diagnostic ones only reported). Nothing else is emitted.
  virtual std::vector<MetricSpec> metrics() const = 0;
  /// Whether a rerun on the same build gives the same items' values (greedy decoding, no sampling):
  /// compare then treats any change beyond the tolerance as a regression, without a paired test.
  virtual bool deterministic() const = 0;
  /// The metric that says whether the probe can tell cells apart on this model, with its range:
  /// the report checks it on the reference cell and warns when it sits at the floor (nothing to
  /// lose) or at the ceiling. None for probes that score cells against the reference itself.
  struct Calibration {
    std::string metric;
    double lo = 0;
    double hi = 1;
  };
  virtual std::optional<Calibration> calibration() const { return std::nullopt; }
  /// The files the probe's config names and it read (prompts, texts, corpus files), each with the
  /// sha256 of what was read: part of the run's identity (the manifest's `probes[].inputs`).
  virtual std::vector<InputFile> inputs() const { return {}; }
  /// The most items the probe can give as configured, when its inputs bound it (recall: the corpus's
  /// functions); nullopt when a config can always list more (prompts, seeds, lengths). Advice to run
  /// more items is only given up to it (the manifest's `probes[].items_max`).
  virtual std::optional<std::size_t> items_max() const { return std::nullopt; }
};

/// Where a probe's config came from: its site for error messages ("<file>: probes[2].<key>") and the
/// folder its relative files resolve against.
struct ConfigSource {
  config::Site site;  // e.g. ("sweep.json", "probes[2]")
  std::filesystem::path base_dir;  // relative files in the probe config resolve against this
};

/// The probe's entry in the run manifest: name, kind, items per cell, deterministic, the metric declarations
/// and, when it read any, its input files with their sha256 (`inputs`).
nlohmann::json manifest_entry(const Probe& probe);

/// Builds a probe from its config object; throws core::FatalError naming file and key.
std::unique_ptr<Probe> make_probe(const nlohmann::json& config, const ConfigSource& site);

/// All probe kinds known to this build.
std::vector<std::string> probe_kinds();

}  // namespace kvsweep::probe
