/// Runner::stop_if_unfit: a prompt that cannot fit a cell's context stops the sweep before the next cell.

#include "kvsweep/sweep/run/runner.hpp"

namespace kvsweep::sweep {

void Runner::stop_if_unfit(const CellResult& result) {
  // Every cell of the grid gets the same prompts, and a cell's context is the config's: the other
  // cells would start a server only to fail each item the same way. (A model's first cell is its
  // reference; in a parallel run the cells already started stop at their next item and stay pending.)
  if (!result.shortfall) return;
  std::lock_guard lock(m_mutex);
  if (!m_context_error.empty()) return;
  m_context_error = result.cell.label() + ": " + shortfall_message(*result.shortfall);
  m_unfit.store(true);
}

}  // namespace kvsweep::sweep
