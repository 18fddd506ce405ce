#include "kvsweep/sweep/run/cell_schedule.hpp"

namespace kvsweep::sweep {

CellSchedule::CellSchedule(const std::vector<Cell>& cells)
    : m_cells(cells), m_taken(cells.size(), false), m_left(cells.size()) {
  for (const auto& c : cells)
    if (c.is_reference) m_reference_pending.insert(c.group());
}

std::optional<std::size_t> CellSchedule::take() {
  for (std::size_t i = 0; i < m_cells.size(); ++i) {
    if (m_taken[i]) continue;
    if (!m_cells[i].is_reference && m_reference_pending.contains(m_cells[i].group())) continue;
    m_taken[i] = true;
    --m_left;
    return i;
  }
  return std::nullopt;
}

void CellSchedule::finished(std::size_t index) {
  if (m_cells[index].is_reference) m_reference_pending.erase(m_cells[index].group());
}

}  // namespace kvsweep::sweep
