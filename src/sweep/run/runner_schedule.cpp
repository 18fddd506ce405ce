/// The runner's slot scheduler: cells on up to parallel_cells threads, each model's reference cell first.

#include "kvsweep/sweep/run/runner.hpp"

#include <cstdlib>

#include <condition_variable>
#include <exception>
#include <set>
#include <thread>

#include "kvsweep/core/clock.hpp"
#include "kvsweep/sweep/run/cell_schedule.hpp"

namespace kvsweep::sweep {

void Runner::run_parallel(const std::vector<Cell>& cells, std::vector<CellResult>& results) {
  // A model's reference cell must finish before the model's other cells start (CellSchedule). Until
  // then its slot-mates run other models' cells, or wait.
  CellSchedule schedule(cells);
  std::condition_variable wake;

  std::exception_ptr error;  // the first exception of a worker, rethrown once all have stopped
  auto work = [&](int slot) {
    std::unique_lock lock(m_mutex);
    for (;;) {
      if (stopping() || schedule.all_taken() || error) return;
      const std::optional<std::size_t> next = schedule.take();
      if (!next) {
        // The cancel flag is set from a signal handler, which cannot notify: poll it.
        wake.wait_for(lock, std::chrono::milliseconds(100));
        continue;
      }
      lock.unlock();
      CellResult r = run_timed(cells[*next], *next, cells.size(), slot);
      stop_if_unfit(r);
      lock.lock();
      results[*next] = std::move(r);
      schedule.finished(*next);
      m_progress.cell_done(results[*next]);
      update_manifest(results, "running");
      wake.notify_all();
    }
  };
  auto worker = [&](int slot) {
    try {
      work(slot);
    } catch (...) {
      std::lock_guard lock(m_mutex);
      if (!error) error = std::current_exception();
    }
  };
  const auto slots = std::min<std::size_t>(static_cast<std::size_t>(m_options.parallel_cells), cells.size());
  {
    std::vector<std::jthread> threads;
    for (std::size_t slot = 0; slot < slots; ++slot) threads.emplace_back(worker, static_cast<int>(slot));
  }
  if (error) std::rethrow_exception(error);
}

CellResult Runner::run_timed(const Cell& cell, std::size_t index, std::size_t count, int slot) {
  auto c0 = std::chrono::steady_clock::now();
  auto w0 = std::chrono::system_clock::now();
  CellResult r = run_cell(cell, index, count, slot);
  r.wall_s = core::seconds_between(c0, std::chrono::steady_clock::now());
  r.started_at = core::iso8601_ms(w0);
  r.finished_at = core::iso8601_ms(std::chrono::system_clock::now());
  // How busy the host was: a speed measured on a loaded host is a weak number (the report says so).
  if (double load[1]; ::getloadavg(load, 1) == 1) r.load_avg = load[0];
  if (slot >= 0) {
    r.slot = slot;
    r.slot_env = config::expand_slot_env(m_options.slot_env, slot);
  }
  return r;
}

}  // namespace kvsweep::sweep
