#include "kvsweep/sweep/run/runner.hpp"

#include <algorithm>
#include <iterator>

#include "kvsweep/config/variants.hpp"
#include "kvsweep/core/clock.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/sweep/run/run_folders.hpp"

namespace kvsweep::sweep {

namespace {

using Ms = std::chrono::milliseconds;

Ms seconds_to_ms(double s) { return Ms(static_cast<long long>(s * 1000.0)); }

}  // namespace

ReferenceSupport reference_support(const std::vector<std::unique_ptr<probe::Probe>>& probes,
                                   const config::Config& config) {
  const bool compares = std::ranges::any_of(probes, [](const auto& p) { return p->compares_with_reference(); });
  return compares || config.sweep.adaptive.enabled ? ReferenceSupport::run : ReferenceSupport::skip;
}

Runner::Runner(const config::Config& config, std::vector<std::unique_ptr<probe::Probe>>& probes,
               server::Backend& backend, RunStore& store, ProgressSink& progress, const std::atomic<bool>& cancel,
               RunOptions options)
    : m_config(config), m_probes(probes), m_backend(backend), m_store(store), m_progress(progress), m_cancel(cancel),
      m_options(std::move(options)), m_journal(store) {}

void Runner::set_embedder(probe::Embedder* embedder, nlohmann::json description) {
  m_embedder = embedder;
  m_embedder_description = std::move(description);
}

int planned_context_size(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes) {
  int ctx = config.server.ctx;
  if (ctx == 0) {
    ctx = 4096;
    for (const auto& p : probes) ctx = std::max(ctx, p->min_context());
  }
  return (ctx + 255) / 256 * 256;
}

int Runner::context_size() const { return planned_context_size(m_config, m_probes); }

int Runner::context_size(const Cell& cell) const {
  const config::VariantConfig* variant = config::find_variant(m_config, cell.variant);
  if (!variant || variant->ctx == 0) return context_size();
  return (variant->ctx + 255) / 256 * 256;
}

server::CellSpec Runner::cell_spec(const Cell& cell, int slot) const {
  server::CellSpec spec;
  spec.set_key(cell.key());
  spec.model_path = cell.model_path;
  spec.n_ctx = context_size(cell);
  spec.log_path = m_store.log_path(cell.id());
  spec.extra_args = m_config.server.args;
  spec.env = m_config.server.env;
  // The variant's settings come after the server's: its args are later on the command line, its
  // environment later in the child's (the last value of a name wins).
  if (const config::VariantConfig* variant = config::find_variant(m_config, cell.variant)) {
    std::ranges::copy(variant->args, std::back_inserter(spec.extra_args));
    std::ranges::copy(variant->env, std::back_inserter(spec.env));
    if (!variant->binary.empty()) {
      auto resolved = m_options.variant_binaries.find(variant->name);
      spec.binary = resolved != m_options.variant_binaries.end() ? resolved->second : variant->binary;
    }
  }
  // The slot's entries come last: the child's environment takes the last value of a name.
  if (slot >= 0) std::ranges::copy(config::expand_slot_env(m_options.slot_env, slot), std::back_inserter(spec.env));
  spec.ready_timeout = seconds_to_ms(m_config.server.ready_timeout_s);
  spec.request_timeout = seconds_to_ms(m_config.server.request_timeout_s);
  spec.stop_grace = seconds_to_ms(m_config.server.stop_grace_s);
  return spec;
}

RunResult Runner::run() {
  // A link planted for logs/, kld/, speed/ or report/ would be written through: refused before anything runs.
  if (const std::string link = linked_run_folder(m_store.dir()); !link.empty()) throw core::FatalError(link);
  auto t0 = std::chrono::steady_clock::now();
  auto cells = plan_cells(m_config, m_options.shard, reference_support(m_probes, m_config));
  select_cells(cells, m_options.filter);

  open_manifest();

  std::size_t total_items = 0;
  for (const auto& c : cells)
    for (const auto& p : m_probes)
      if (m_options.filter.matches(c, p->name())) total_items += p->items().size();
  m_progress.plan(cells.size(), total_items);

  RunResult result;
  std::vector<CellResult> results;
  for (const auto& c : cells) {
    CellResult r;
    r.cell = c;
    results.push_back(r);
  }
  update_manifest(results, "running");
  if (m_options.parallel_cells > 1) {
    run_parallel(cells, results);
  } else {
    // One cell at a time; a slot environment, when given, is slot 0's.
    const int slot = m_options.slot_env.empty() ? -1 : 0;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (stopping()) break;
      results[i] = run_timed(cells[i], i, cells.size(), slot);
      stop_if_unfit(results[i]);
      m_progress.cell_done(results[i]);
      update_manifest(results, "running");
    }
  }
  result.interrupted = m_cancel.load();
  bool all_done = !stopping();
  update_manifest(results, all_done ? "complete" : m_unfit.load() ? "stopped" : "interrupted");
  {
    std::lock_guard lock(m_mutex);
    result.store_error = !m_store_error.empty() ? m_store_error : m_manifest_error;
    result.context_error = m_context_error;
  }
  result.cells = results;
  result.wall_s = core::seconds_between(t0, std::chrono::steady_clock::now());
  // The paths the manifest decided across cells (fallback? needs the reference cell's graph splits).
  for (auto& r : result.cells)
    if (const auto path = m_journal.paths().find(r.cell.key()); path != m_journal.paths().end())
      r.effective.path = path->second;
  return result;
}

}  // namespace kvsweep::sweep
