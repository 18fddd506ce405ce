#pragma once
/// Progress on stderr: a redrawn status line with ETA on a terminal, plain lines otherwise;
/// safe to call from the threads of cells run in parallel (one line at a time).

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "kvsweep/sweep/run/runner.hpp"

namespace kvsweep::cli {

class StderrProgress final : public sweep::ProgressSink {
 public:
  /// terminal: one redrawn status line; quiet (-q): only failed items, cells that did not end ok and notes.
  explicit StderrProgress(bool terminal, bool quiet = false);
  void plan(std::size_t cells, std::size_t items_total) override;
  void cell_started(std::size_t index, std::size_t count, const sweep::Cell& cell, int slot) override;
  void item_done(const sweep::Cell& cell, const std::string& probe, const std::string& item, const std::string& status,
                 double wall_s) override;
  void cell_done(const sweep::CellResult& result) override;
  void note(const std::string& message) override;
  /// The cells attach to a server at `url` (backend external): say so instead of "starting server".
  void attach_to(std::string url) { m_attach_url = std::move(url); }

 private:
  bool m_quiet = false;
  struct Running {
    std::size_t index;
    std::string label;
    int slot;  // -1 when cells run one at a time
  };
  void redraw();
  /// The time left from the items done so far ("?" before the first); the caller holds m_mutex.
  std::string eta() const;
  /// "items 12/40 | 1 m 3 s elapsed | ETA 2 m 5 s"; the caller holds m_mutex.
  std::string times() const;
  std::mutex m_mutex;  // one writer of stderr and of the counters at a time
  bool m_terminal;
  std::size_t m_cells = 0, m_items_total = 0, m_items_done = 0, m_cell_index = 0, m_cells_done = 0;
  std::string m_cell_label;
  std::string m_attach_url;  // empty: a server is started per cell
  std::vector<Running> m_running;  // cells started and not yet done, in start order
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

/// The one-screen summary table printed at the end of a run (cell, outcome, items, KV MiB).
std::string summary_table(const sweep::RunResult& result);

}  // namespace kvsweep::cli
