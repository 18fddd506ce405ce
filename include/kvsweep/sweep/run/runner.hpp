#pragma once
/// The runner: for each planned cell, start the server, verify its effective KV types,
/// run every probe item not yet recorded, record each result, stop the server; a bad
/// cell is recorded with its outcome and the sweep goes on.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/server/backend.hpp"
#include "kvsweep/server/lifecycle/lifecycle.hpp"
#include "kvsweep/sweep/plan/context_fit.hpp"
#include "kvsweep/sweep/plan/plan.hpp"
#include "kvsweep/sweep/run/adaptive.hpp"
#include "kvsweep/sweep/run/attention_paths.hpp"
#include "kvsweep/sweep/run/cell_result.hpp"
#include "kvsweep/sweep/run/run_journal.hpp"
#include "kvsweep/sweep/store/manifest.hpp"
#include "kvsweep/sweep/store/model_hashes.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::sweep {

struct RunResult {
  std::vector<CellResult> cells;
  bool interrupted = false;
  std::string store_error;  // the run stopped because a record could not be written (e.g. a full disk)
  /// The run stopped before starting further cells: a probe's prompt did not fit a cell's context
  /// (shortfall_message); the CLI exits 2 with it.
  std::string context_error;
  double wall_s = 0;
};

/// Receives progress; the CLI draws it on stderr.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void plan(std::size_t cells, std::size_t items_total) = 0;
  /// `slot` is the slot the cell runs in when several run at once, else -1. Called from the
  /// cells' threads when they run in parallel: implementations must be thread-safe.
  virtual void cell_started(std::size_t index, std::size_t count, const Cell& cell, int slot) = 0;
  virtual void item_done(const Cell& cell, const std::string& probe, const std::string& item, const std::string& status,
                         double wall_s) = 0;
  virtual void cell_done(const CellResult& result) = 0;
  virtual void note(const std::string& message) = 0;
};

/// ReferenceSupport::run when any of `probes` compares with the reference cell while it runs, or the
/// sweep is adaptive (a cell's stop pairs its items with the reference's).
ReferenceSupport reference_support(const std::vector<std::unique_ptr<probe::Probe>>& probes,
                                   const config::Config& config);

/// The context size (-c) every cell gets: server.ctx, or the probes' needs (at least 4096), rounded up
/// to 256. Runner::context_size() and the dry run's plan both say this number.
int planned_context_size(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes);

struct RunOptions {
  std::optional<Shard> shard;
  Filter filter;
  int parallel_cells = 1;                 // cells run at once (each model's reference cell first)
  std::vector<config::SlotEnv> slot_env;  // each cell server's environment, by slot
  /// Variant name → its llama-server binary, resolved (KVSWEEP_LLAMA_BIN, PATH) before the run starts.
  std::map<std::string, std::string> variant_binaries;
  /// Model name → facts the caller read from its file, added to the manifest's models[] entry
  /// (e.g. "copy_model": {"match_length": 6} for kvsweep's copy model).
  std::map<std::string, nlohmann::json> model_facts;
  /// The models with their hashes, when the caller hashed them (a resume checks them first); else the runner does.
  std::vector<ModelHash> models;
  /// A resume allowed to continue with another server build (--allow-build-change): the build the run
  /// started with, kept in the manifest as "build_changed_from" beside the new "server".
  std::string build_changed_from;
  /// A resume whose config added to the run's (cli's check_growth): {from_config_hash, to_config_hash,
  /// added, at}, appended to the manifest's "grown"; null otherwise.
  nlohmann::json grown;
  /// 0: every item; N: only the first N items of each probe (the dry run's --measure times one).
  std::size_t items_per_probe = 0;
};

class Runner {
 public:
  Runner(const config::Config& config, std::vector<std::unique_ptr<probe::Probe>>& probes, server::Backend& backend,
         RunStore& store, ProgressSink& progress, const std::atomic<bool>& cancel, RunOptions options);

  /// Sets the embedding instrument (started once per run by the caller) and its provenance.
  void set_embedder(probe::Embedder* embedder, nlohmann::json description);

  RunResult run();

  /// The context size every cell gets: server.ctx, or the probes' needs (at least 4096), rounded up to 256.
  int context_size() const;
  /// The context size of `cell`: its variant's ctx (rounded up to 256) when it sets one, else context_size().
  int context_size(const Cell& cell) const;

 private:
  /// run_cell with its wall-clock span, slot and slot environment filled in.
  CellResult run_timed(const Cell& cell, std::size_t index, std::size_t count, int slot);
  CellResult run_cell(const Cell& cell, std::size_t index, std::size_t count, int slot);
  /// One cell while it runs: its server (restarted once after a crash), the items run against it, the
  /// server stopped, the tool probes; run_cell's phases, each a method (runner_cell.cpp).
  class CellRun;
  /// A probe's items a cell has still to run.
  struct PendingItems {
    probe::Probe* probe;
    std::vector<probe::Item> items;
    std::optional<AdaptiveGate> gate;  // adaptive sweeps, cells other than the reference
  };
  /// Appends an ok item's record and counts it (false: the store failed, the run stops).
  bool record_ok(const Cell& cell, PendingItems& t, const probe::Item& item, const probe::ItemResult& res, double wall,
                 CellResult& r);
  /// Appends a failed item's record (status: the error's kind) and counts it.
  bool record_failure(const Cell& cell, const PendingItems& t, const probe::Item& item, const core::Error& err,
                      double wall, CellResult& r);
  /// Adds {"event", "at", …details} to the cell's lifecycle.
  void lifecycle_event(CellResult& r, const std::string& event, nlohmann::json details) const;
  /// What is left to do in `cell`; items already recorded ok are counted in `already_recorded`.
  std::vector<PendingItems> pending_items(const Cell& cell, int& already_recorded) const;
  /// Adaptive sweeps: orders each probe's pending items, builds its gate from the reference's records
  /// and the cell's own ok records (a resumed run continues the same decision), and settles the probes
  /// already decided, so that they are left out of `todo`. Does nothing for a reference cell.
  void adapt(const Cell& cell, std::vector<PendingItems>& todo, CellResult& result);
  /// Records items [from, end) of `t` as skipped (reason settled), except those already recorded so.
  bool settle(const Cell& cell, const PendingItems& t, std::size_t from, CellResult& result);
  /// What a probe learns about the cell it runs in.
  probe::CellInfo cell_info(const Cell& cell, const server::CellSpec& spec) const;
  /// The reference cell's ok records of probe `p` for the model of `cell` (for probes comparing with it).
  std::vector<probe::Record> reference_records(const Cell& cell, const probe::Probe& p) const;
  /// Runs `cells` on up to parallel_cells threads, one slot each; a model's other cells wait for
  /// its reference cell, whose records they are compared with.
  void run_parallel(const std::vector<Cell>& cells, std::vector<CellResult>& results);
  /// A record of `item` in `cell`: `failure` is the class of a failed one ("" for ok and skipped).
  probe::Record make_record(const Cell& cell, const probe::Probe& p, const probe::Item& item, probe::ItemStatus status,
                            std::string failure, double wall_s, int attempt) const;
  /// The manifest's provenance (config, versions, server, host, models and their hashes, probes),
  /// kept from an earlier invocation where unchanged; written with the first update_manifest.
  void open_manifest();
  void update_manifest(const std::vector<CellResult>& results, const std::string& status);
  /// The manifest or its journal could not be written: remembers why and stops the run (called
  /// where update_manifest is: the serial loop, or under m_mutex).
  void stop_for_store(const std::string& message);
  /// Appends a record; when the store cannot write it (disk full), remembers why and stops the run.
  bool append_or_stop(const probe::Record& record);
  /// A cell found that a probe's prompt cannot fit the context: no further cell starts (the grid
  /// would fail the same way in every cell). Called as each cell ends (runner_fit.cpp).
  void stop_if_unfit(const CellResult& result);
  /// Interrupted, the store failed, or a prompt cannot fit: no further item starts.
  bool stopping() const { return m_cancel.load() || m_store_failed.load() || m_unfit.load(); }
  server::CellSpec cell_spec(const Cell& cell, int slot) const;

  const config::Config& m_config;
  std::vector<std::unique_ptr<probe::Probe>>& m_probes;
  server::Backend& m_backend;
  RunStore& m_store;
  ProgressSink& m_progress;
  const std::atomic<bool>& m_cancel;
  RunOptions m_options;
  probe::Embedder* m_embedder = nullptr;
  nlohmann::json m_embedder_description;
  RunJournal m_journal;       // the manifest and its journal; in a parallel run, touched only under m_mutex
  std::mutex m_mutex;          // parallel runs: the schedule, the results and the manifest; m_store_error
  std::atomic<bool> m_store_failed{false};
  std::string m_store_error;
  std::atomic<bool> m_unfit{false};
  std::string m_context_error;  // under m_mutex
  std::string m_manifest_error;        // set by stop_for_store, under update_manifest's serialisation
};

}  // namespace kvsweep::sweep
