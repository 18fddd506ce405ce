#pragma once
/// The order in which a parallel run's slots take cells: any cell not yet taken, except that a
/// model's (and variant's) other cells wait until its reference cell has finished — probes compare
/// with the reference's records (divergence in reference mode, kld's base logits). The runner's
/// scheduler, in a unit of its own; the threads and their lock stay in the runner.

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kvsweep/sweep/plan/plan.hpp"

namespace kvsweep::sweep {

/// Not thread-safe: the runner calls it under its lock.
class CellSchedule {
 public:
  /// `cells` must outlive the schedule (it is read, not copied).
  explicit CellSchedule(const std::vector<Cell>& cells);

  /// The next cell a slot may start (its index, marked taken); nullopt when none may start now:
  /// every cell is taken (all_taken()), or those left wait for their reference cell.
  std::optional<std::size_t> take();
  bool all_taken() const { return m_left == 0; }
  /// Cell `index` has ended: a reference cell lets its group's other cells start.
  void finished(std::size_t index);

 private:
  const std::vector<Cell>& m_cells;
  std::vector<bool> m_taken;
  std::size_t m_left;
  std::set<std::string> m_reference_pending;  // groups whose reference cell has not ended
};

}  // namespace kvsweep::sweep
