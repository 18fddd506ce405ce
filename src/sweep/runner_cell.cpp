/// Runner::run_cell: one cell's server started, its pending items run and recorded, the server stopped.

#include "kvsweep/sweep/runner.hpp"

#include <exception>
#include <thread>

#include "kvsweep/config/variants.hpp"
#include "kvsweep/core/clock.hpp"

namespace kvsweep::sweep {

namespace {

/// One probe item; a probe that throws fails that item (ErrorKind::internal), not the sweep.
core::Expected<probe::ItemResult> run_item(probe::Probe& p, const probe::Item& item, probe::Context& ctx) {
  try {
    return p.run(item, ctx);
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::internal, p.name() + "/" + item.key + " threw: " + e.what());
  }
}

}  // namespace

std::vector<Runner::PendingItems> Runner::pending_items(const Cell& cell, int& already_recorded) const {
  std::vector<PendingItems> todo;
  for (auto& p : m_probes) {
    if (!m_options.filter.matches_probe(p->name())) continue;
    PendingItems t{p.get(), {}, std::nullopt};
    for (auto& item : p->items()) {
      if (m_store.has_ok(triple_key(cell, p->name(), item.key))) ++already_recorded;
      else t.items.push_back(std::move(item));
    }
    if (!t.items.empty()) todo.push_back(std::move(t));
  }
  return todo;
}

probe::CellInfo Runner::cell_info(const Cell& cell, const server::CellSpec& spec) const {
  probe::CellInfo info;
  info.set_key(cell.key());
  info.model_path = cell.model_path;
  info.is_reference = cell.is_reference;
  info.n_ctx = spec.n_ctx;
  info.server_args = spec.extra_args;
  info.run_dir = m_store.dir();
  info.log_path = spec.log_path;
  // The build the cell's server came from, so that a probe's tool (llama-bench) is taken from beside it.
  if (m_config.server.backend == "llama-server")
    info.server_binary = spec.binary.empty() ? m_backend.describe().value("binary", "") : spec.binary;
  info.env = spec.env;  // cell_spec put the slot's entries last
  return info;
}

std::vector<nlohmann::json> Runner::reference_records(const Cell& cell, const probe::Probe& p) const {
  return m_store.select([&](const nlohmann::json& rec) {
    const core::CellKey key = core::CellKey::from_json(rec["cell"]);
    return rec.value("probe", "") == p.name() && rec.value("status", "") == "ok" && key.model == cell.model &&
           key.variant == cell.variant && key.pair() == m_config.grid.reference;
  });
}

CellResult Runner::run_cell(const Cell& cell, std::size_t index, std::size_t count, int slot) {
  CellResult r;
  r.cell = cell;
  std::vector<PendingItems> todo = pending_items(cell, r.items_skipped);
  adapt(cell, todo, r);
  if (todo.empty()) {
    r.outcome = server::CellOutcome::skipped;
    r.message = r.items_settled > 0 ? "every item already recorded or settled (adaptive)" : "every item already recorded";
    return r;
  }
  m_progress.cell_started(index, count, cell, m_options.parallel_cells > 1 ? slot : -1);

  server::CellSpec spec = cell_spec(cell, slot);
  auto start = [&]() -> std::unique_ptr<server::Instance> {
    auto inst = m_backend.start(spec, m_cancel);
    if (!inst) {
      r.outcome = inst.error().outcome == server::CellOutcome::cancelled ? server::CellOutcome::pending : inst.error().outcome;
      r.effective = inst.error().effective;
      r.message = inst.error().message;
      if (!inst.error().log_tail.empty()) r.message += "\n" + inst.error().log_tail;
      return nullptr;
    }
    return std::move(*inst);
  };
  auto instance = start();
  if (!instance) return r;
  r.ready_s = instance->ready_seconds();
  r.effective = instance->effective();

  // The lifecycle refused a mismatch; a log without the KV line leaves the types unchecked.
  const bool unverified = server::check_kv(r.effective, cell.type_k, cell.type_v) == server::KvCheck::unverified;
  if (unverified)
    m_progress.note(cell.label() + ": the server log shows no KV cache line; cannot verify the K/V types (kv_unverified)");

  if (r.effective.path.path == server::AttentionPath::converted)
    m_progress.note(cell.label() + ": attention path converted: " + r.effective.path.reason);

  const probe::CellInfo info = cell_info(cell, spec);
  r.outcome = server::CellOutcome::ok;
  lifecycle_event(r, "server_ready", {{"ready_s", r.ready_s}});
  // Probes that talk to the server first; tool probes (llama-perplexity, llama-bench load the model
  // themselves) after the server has stopped, so the model is never in memory twice.
  const auto runs_tool = [](const PendingItems& t) { return t.probe->runs_tool(); };
  for (auto& t : todo) {
    if (runs_tool(t)) continue;
    std::vector<nlohmann::json> reference = reference_records(cell, *t.probe);
    bool exceeded = false;  // an item of this probe did not fit the context
    // The probe's items that did not fit; when none of its items ran ok, the grid cannot fit it.
    std::optional<ContextShortfall> unfit;
    const int ok_before = r.items_ok;
    for (std::size_t k = 0; k < t.items.size(); ++k) {
      const auto& item = t.items[k];
      if (stopping()) break;
      if (t.gate && t.gate->settled()) {
        settle(cell, t, k, r);
        break;
      }
      probe::Context ctx{instance->api(), info, m_embedder, &reference};
      auto t0 = std::chrono::steady_clock::now();
      auto res = run_item(*t.probe, item, ctx);
      double wall = core::seconds_between(t0, std::chrono::steady_clock::now());
      // An interrupted item is not recorded: resume runs it again.
      if (stopping()) break;
      if (res) {
        if (!record_ok(cell, t, item, *res, wall, r)) break;
        continue;
      }
      const core::Error& err = res.error();
      // Did the server die? A killed server shows up as a connect or read error; give
      // the kernel a moment to let us reap it before deciding.
      bool alive = instance->alive();
      for (int w = 0; alive && w < 10 && (err.kind == core::ErrorKind::connect || err.kind == core::ErrorKind::timeout); ++w) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        alive = instance->alive();
      }
      if (!alive) {
        std::string how = instance->exit_description();
        if (r.restarts == 0) {
          m_progress.note(cell.label() + ": server " + how + " during " + t.probe->name() + "/" + item.key +
                          "; restarting it once");
          ++r.restarts;
          instance->stop();
          lifecycle_event(r, "server_restarted", {{"after", how}});
          instance = start();
          if (!instance) {
            r.outcome = server::CellOutcome::crashed;
            r.message = "server " + how + "; restart failed: " + r.message;
            return r;
          }
          --k;  // run the same item again
          continue;
        }
        auto rec = make_record(cell, *t.probe, item, "crashed", wall, r.restarts + 1);
        rec["error"] = err.message;
        rec["log_tail"] = instance->error_lines();
        if (!append_or_stop(rec)) break;
        ++r.items_failed;
        m_progress.item_done(cell, t.probe->name(), item.key, "crashed", wall);
        r.outcome = server::CellOutcome::crashed;
        r.message = "server " + how + " again after a restart\n" + instance->error_lines();
        return r;
      }
      if (err.kind == core::ErrorKind::timeout) {
        auto rec = make_record(cell, *t.probe, item, "timeout", wall, r.restarts + 1);
        rec["error"] = err.message;
        if (!append_or_stop(rec)) break;
        ++r.items_failed;
        m_progress.item_done(cell, t.probe->name(), item.key, "timeout", wall);
        r.outcome = server::CellOutcome::wedged;
        r.message = t.probe->name() + "/" + item.key + ": " + err.message + "; the server was stopped (wedged)";
        instance->stop();
        return r;
      }
      if (!record_failure(cell, t, item, err, wall, r)) break;
      if (err.kind == core::ErrorKind::exceeds_context) {
        const config::VariantConfig* variant = config::find_variant(m_config, cell.variant);
        note_shortfall(unfit, ContextShortfall{t.probe->name(), t.probe->kind(), tokens_needed(err), spec.n_ctx,
                                               variant != nullptr && variant->ctx > 0});
      }
      if (err.kind == core::ErrorKind::exceeds_context && !exceeded) {
        // Said once per probe and cell: the next items will most likely not fit either.
        exceeded = true;
        const std::string what = t.probe->name() + ": " + err.message;
        m_progress.note(cell.label() + ": " + what);
        r.message += (r.message.empty() ? "" : "\n") + what;
      }
    }
    if (stopping()) break;
    if (unfit && r.items_ok == ok_before) note_shortfall(r.shortfall, *unfit);
  }
  auto s0 = std::chrono::steady_clock::now();
  instance->stop();
  r.stop_s = core::seconds_between(s0, std::chrono::steady_clock::now());
  lifecycle_event(r, "server_stopped", {{"stop_s", r.stop_s}});

  // The tool probes, with no server of this cell alive: a failure is the item's, never the server's.
  std::vector<std::string> tools;
  for (const auto& t : todo)
    if (runs_tool(t)) tools.push_back(t.probe->name());
  if (!tools.empty() && !stopping()) lifecycle_event(r, "tool_probes", {{"probes", tools}});
  for (auto& t : todo) {
    if (!runs_tool(t) || stopping()) continue;
    std::vector<nlohmann::json> reference = reference_records(cell, *t.probe);
    for (std::size_t k = 0; k < t.items.size() && !stopping(); ++k) {
      if (t.gate && t.gate->settled()) {
        settle(cell, t, k, r);
        break;
      }
      probe::Context ctx{instance->api(), info, m_embedder, &reference};
      auto t0 = std::chrono::steady_clock::now();
      auto res = run_item(*t.probe, t.items[k], ctx);
      double wall = core::seconds_between(t0, std::chrono::steady_clock::now());
      if (stopping()) break;
      const bool recorded = res ? record_ok(cell, t, t.items[k], *res, wall, r)
                                : record_failure(cell, t, t.items[k], res.error(), wall, r);
      if (!recorded) break;
    }
  }
  if (!tools.empty() && !stopping()) lifecycle_event(r, "tool_probes_done", {{"probes", tools}});
  // Interrupted, or the store could not write: the cell's missing items run again on resume.
  if (stopping()) r.outcome = server::CellOutcome::pending;
  else if (unverified && r.outcome == server::CellOutcome::ok) r.outcome = server::CellOutcome::kv_unverified;
  // A cell is ok for what ran in it; one whose every item failed says so (the records say why).
  if (server::ran(r.outcome) && r.items_ok + r.items_skipped == 0 && r.items_failed > 0)
    r.outcome = server::CellOutcome::items_failed;
  return r;
}

bool Runner::record_ok(const Cell& cell, PendingItems& t, const probe::Item& item, const probe::ItemResult& res,
                       double wall, CellResult& r) {
  auto rec = make_record(cell, *t.probe, item, "ok", wall, r.restarts + 1);
  rec["response"] = res.response;
  rec["metrics"] = res.metrics;
  rec["timings"] = server::to_json(res.timings);
  r.items_wall_s += wall;
  r.server_ms += res.timings.prompt_ms + res.timings.predicted_ms;
  if (!append_or_stop(rec)) return false;
  ++r.items_ok;
  if (t.gate) t.gate->add(item.key, res.metrics);
  m_progress.item_done(cell, t.probe->name(), item.key, "ok", wall);
  return true;
}

bool Runner::record_failure(const Cell& cell, const PendingItems& t, const probe::Item& item, const core::Error& err,
                            double wall, CellResult& r) {
  auto rec = make_record(cell, *t.probe, item, std::string(core::to_string(err.kind)), wall, r.restarts + 1);
  rec["error"] = err.message;
  if (err.http_status) rec["http_status"] = err.http_status;
  if (!append_or_stop(rec)) return false;
  ++r.items_failed;
  m_progress.item_done(cell, t.probe->name(), item.key, rec["status"], wall);
  return true;
}

void Runner::lifecycle_event(CellResult& r, const std::string& event, nlohmann::json details) const {
  details["event"] = event;
  details["at"] = core::iso8601_ms(std::chrono::system_clock::now());
  r.lifecycle.push_back(std::move(details));
}

}  // namespace kvsweep::sweep
