#include "kvsweep/cli/progress.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "kvsweep/core/redact.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::cli {

StderrProgress::StderrProgress(bool terminal, bool quiet) : m_quiet(quiet), m_terminal(terminal && !quiet) {}

void StderrProgress::plan(std::size_t cells, std::size_t items_total) {
  std::lock_guard lock(m_mutex);
  m_cells = cells;
  m_items_total = items_total;
  m_start = std::chrono::steady_clock::now();
  if (!m_quiet) std::fprintf(stderr, "kvsweep: %zu cells, %zu items\n", cells, items_total);
}

void StderrProgress::cell_started(std::size_t index, std::size_t count, const sweep::Cell& cell, int slot) {
  std::lock_guard lock(m_mutex);
  m_cell_index = index;
  m_cell_label = cell.label();
  m_running.push_back({index, cell.label(), slot});
  if (m_quiet) return;
  if (m_terminal) redraw();
  else if (!m_attach_url.empty())
    std::fprintf(stderr, "[cell %zu/%zu] %s: attaching to %s\n", index + 1, count, cell.label().c_str(), m_attach_url.c_str());
  else if (slot < 0) std::fprintf(stderr, "[cell %zu/%zu] %s: starting server\n", index + 1, count, cell.label().c_str());
  else std::fprintf(stderr, "[cell %zu/%zu] %s: starting server in slot %d\n", index + 1, count, cell.label().c_str(), slot);
}

void StderrProgress::item_done(const sweep::Cell& cell, const std::string& probe, const std::string& item,
                               const std::string& status, double wall_s) {
  std::lock_guard lock(m_mutex);
  ++m_items_done;
  if (m_terminal) {
    if (status != "ok") {
      std::fprintf(stderr, "\r\033[K%s %s/%s: %s\n", cell.label().c_str(), probe.c_str(), item.c_str(), status.c_str());
    }
    redraw();
  } else if (!m_quiet || status != "ok") {
    std::fprintf(stderr, "  %s %s/%s %s (%.2f s)\n", cell.label().c_str(), probe.c_str(), item.c_str(), status.c_str(),
                 wall_s);
  }
}

void StderrProgress::cell_done(const sweep::CellResult& r) {
  std::lock_guard lock(m_mutex);
  ++m_cells_done;
  m_items_done += static_cast<std::size_t>(r.items_skipped + r.items_settled);
  if (r.outcome == server::CellOutcome::skipped) return;
  // Several cells run at once in a parallel run: name this one by its own index.
  std::size_t index = m_cell_index;
  auto it = std::find_if(m_running.begin(), m_running.end(), [&](const Running& x) { return x.label == r.cell.label(); });
  if (it != m_running.end()) {
    index = it->index;
    m_running.erase(it);
  }
  if (m_quiet && r.outcome == server::CellOutcome::ok) return;
  if (m_terminal) std::fprintf(stderr, "\r\033[K");
  const std::string settled = r.items_settled > 0 ? ", " + std::to_string(r.items_settled) + " settled" : "";
  // Without a status line (stderr not a terminal: CI, a log file), the time left goes on each cell's line.
  const std::string when = m_terminal ? std::string{} : " | " + times();
  std::fprintf(stderr, "[cell %zu/%zu] %s: %s (%d ok, %d failed%s)%s\n", index + 1, m_cells, r.cell.label().c_str(),
               std::string(server::to_string(r.outcome)).c_str(), r.items_ok, r.items_failed, settled.c_str(), when.c_str());
  if (r.outcome != server::CellOutcome::ok && !r.message.empty())
    std::fprintf(stderr, "%s\n", core::redact(r.message).c_str());
  if (m_terminal && !m_running.empty() && m_running.front().slot >= 0) redraw();
}

void StderrProgress::note(const std::string& message) {
  std::lock_guard lock(m_mutex);
  if (m_terminal) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "note: %s\n", core::redact(message).c_str());
}

std::string StderrProgress::eta() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  if (m_items_done == 0 || m_items_total <= m_items_done) return m_items_total <= m_items_done ? "0 s" : "?";
  return report::duration_text(elapsed / static_cast<double>(m_items_done) * static_cast<double>(m_items_total - m_items_done));
}

std::string StderrProgress::times() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  return "items " + std::to_string(m_items_done) + "/" + std::to_string(m_items_total) + " | " +
         report::duration_text(elapsed) + " elapsed | ETA " + eta();
}

void StderrProgress::redraw() {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  const std::string eta = this->eta();
  if (!m_running.empty() && m_running.front().slot >= 0) {
    // Parallel cells: every running cell with its slot on the one status line.
    std::string running;
    for (const auto& c : m_running) running += (running.empty() ? "" : ", ") + c.label + "@" + std::to_string(c.slot);
    std::fprintf(stderr, "\r\033[Kcells %zu/%zu done, running %s | items %zu/%zu | %s elapsed | ETA %s", m_cells_done,
                 m_cells, running.c_str(), m_items_done, m_items_total, report::duration_text(elapsed).c_str(), eta.c_str());
  } else {
    std::fprintf(stderr, "\r\033[Kcell %zu/%zu %s | items %zu/%zu | %s elapsed | ETA %s", m_cell_index + 1, m_cells,
                 m_cell_label.c_str(), m_items_done, m_items_total, report::duration_text(elapsed).c_str(), eta.c_str());
  }
  std::fflush(stderr);
}

std::string summary_table(const sweep::RunResult& result) {
  std::ostringstream out;
  // The slot column only when cells ran in slots (--parallel-cells, slot_env).
  const bool slots = std::any_of(result.cells.begin(), result.cells.end(), [](const auto& r) { return r.slot >= 0; });
  // The settled column only when an adaptive sweep skipped items.
  const bool settled = std::any_of(result.cells.begin(), result.cells.end(), [](const auto& r) { return r.items_settled > 0; });
  out << std::left << std::setw(32) << "cell" << std::setw(17) << "outcome" << std::right << std::setw(6) << "ok"
      << std::setw(8) << "failed" << std::setw(10) << "recorded";
  if (settled) out << std::setw(9) << "settled";
  out << std::setw(9) << "KV MiB" << std::setw(9) << "rot K/V" << std::setw(11) << "path" << std::setw(9) << "ready s";
  if (slots) out << std::setw(6) << "slot";
  out << "\n";
  for (const auto& r : result.cells) {
    std::string label = r.cell.label() + (r.cell.support ? " + " : r.cell.is_reference ? " *" : "");
    out << std::left << std::setw(32) << label << std::setw(17) << server::to_string(r.outcome) << std::right << std::setw(6) << r.items_ok
        << std::setw(8) << r.items_failed << std::setw(10) << r.items_skipped;
    if (settled) out << std::setw(9) << r.items_settled;
    out << std::setw(9) << std::fixed << std::setprecision(2);
    if (r.effective.found) out << r.effective.total_mib;
    else out << "-";
    out << std::setw(9) << report::rotation_label(r.effective.attn_rot_k, r.effective.attn_rot_v);
    out << std::setw(11) << (r.effective.found || r.effective.attention.any() ? server::to_string(r.effective.path.path) : "-");
    out << std::setw(9) << std::setprecision(2) << r.ready_s;
    if (slots) out << std::setw(6) << (r.slot >= 0 ? std::to_string(r.slot) : "-");
    out << "\n";
  }
  const bool support = std::any_of(result.cells.begin(), result.cells.end(), [](const auto& r) { return r.cell.support; });
  // "recorded": ok before this run (a resume); "settled": not run, an adaptive verdict made them moot.
  out << (support ? "(* reference cell; + the reference cell, run here only for comparisons: another shard owns it; "
                    "recorded: ok in an earlier run) wall "
                  : "(* reference cell; recorded: ok in an earlier run) wall ")
      << std::fixed << std::setprecision(1) << result.wall_s << " s"
      << (result.interrupted ? ", interrupted" : "") << "\n";
  // A pair whose attention is converted to f16 (or may run on the CPU) costs speed the table does not show.
  for (const auto& r : result.cells) {
    const auto path = r.effective.path.path;
    if (path == server::AttentionPath::converted || path == server::AttentionPath::fallback)
      out << r.cell.label() << ": path " << server::to_string(path) << ": " << r.effective.path.reason << "\n";
  }
  return out.str();
}

}  // namespace kvsweep::cli
