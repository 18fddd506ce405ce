#pragma once
/// What one cell of a run came to: its outcome, its counts and times, what its server reported. The
/// runner fills it as the cell runs; the manifest records it (run_journal), the CLI prints it.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/server/backend.hpp"
#include "kvsweep/server/lifecycle/lifecycle.hpp"
#include "kvsweep/sweep/plan/context_fit.hpp"
#include "kvsweep/sweep/plan/plan.hpp"

namespace kvsweep::sweep {

struct CellResult {
  Cell cell;
  server::CellOutcome outcome = server::CellOutcome::pending;
  std::string message;
  int items_ok = 0;
  int items_failed = 0;
  int items_skipped = 0;  // already recorded by an earlier (resumed) run
  int items_settled = 0;  // adaptive: not run, the cell's verdicts were settled (recorded `skipped`, reason `settled`)
  int restarts = 0;
  double ready_s = 0;
  double wall_s = 0;       // the whole cell: start, probes, stop
  double stop_s = 0;       // stopping the server
  double items_wall_s = 0; // sum of item wall times as seen by kvsweep
  double server_ms = 0;    // sum of server-reported prompt_ms + predicted_ms
  server::EffectiveKv effective;
  std::string started_at;   // wall clock, ms precision (cells of a parallel run overlap)
  std::string finished_at;
  double load_avg = -1;     // the host's 1-minute load average as the cell ended; -1 when unknown
  int slot = -1;            // the slot the server ran in; -1 when no slot was used (serial, no slot env)
  std::vector<std::pair<std::string, std::string>> slot_env;  // the slot's environment as the server got it
  std::optional<ContextShortfall> shortfall;  // a probe's prompt did not fit the cell's context
  /// What happened to the cell's server, in order, each {"event", "at", …}: server_ready,
  /// server_restarted, server_stopped, then tool_probes / tool_probes_done around the probes that
  /// run their own llama.cpp tool (with no server of the cell alive). The manifest's `lifecycle`.
  std::vector<nlohmann::json> lifecycle;
};

}  // namespace kvsweep::sweep
