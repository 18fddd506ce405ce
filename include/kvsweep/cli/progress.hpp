#pragma once
/// Progress on stderr: a redrawn status line with ETA on a terminal, plain lines otherwise.

#include <chrono>
#include <cstdio>

#include "kvsweep/sweep/runner.hpp"

namespace kvsweep::cli {

class StderrProgress final : public sweep::ProgressSink {
 public:
  explicit StderrProgress(bool terminal);
  void plan(std::size_t cells, std::size_t items_total) override;
  void cell_started(std::size_t index, std::size_t count, const sweep::Cell& cell) override;
  void item_done(const sweep::Cell& cell, const std::string& probe, const std::string& item, const std::string& status,
                 double wall_s) override;
  void cell_done(const sweep::CellResult& result) override;
  void note(const std::string& message) override;

 private:
  void redraw();
  bool m_terminal;
  std::size_t m_cells = 0, m_items_total = 0, m_items_done = 0, m_cell_index = 0;
  std::string m_cell_label;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

/// The one-screen summary table printed at the end of a run (cell, outcome, items, KV MiB).
std::string summary_table(const sweep::RunResult& result);

}  // namespace kvsweep::cli
