/// Runner::run_cell: one cell's server started, its pending items run and recorded, the server stopped.

#include "kvsweep/sweep/run/runner.hpp"

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
    if (!m_options.filter.matches(cell, p->name())) continue;
    PendingItems t{p.get(), {}, std::nullopt};
    std::size_t taken = 0;
    for (auto& item : p->items()) {
      if (m_options.items_per_probe > 0 && taken++ == m_options.items_per_probe) break;
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

std::vector<probe::Record> Runner::reference_records(const Cell& cell, const probe::Probe& p) const {
  return m_store.select([&](const probe::Record& rec) {
    return rec.probe == p.name() && rec.ok() && rec.cell.model == cell.model && rec.cell.variant == cell.variant &&
           rec.cell.pair() == m_config.grid.reference;
  });
}

/// One cell while it runs: its server (restarted once after a crash), the probes' items run against it
/// and recorded, the server stopped, the tool probes after it; run_cell's phases, each a method.
class Runner::CellRun {
 public:
  CellRun(Runner& runner, const Cell& cell, server::CellSpec spec, CellResult result)
      : m_runner(runner), m_cell(cell), m_spec(std::move(spec)), m_result(std::move(result)) {}

  CellResult run(std::vector<PendingItems>& todo) {
    if (!start()) return std::move(m_result);
    if (!run_server_probes(todo)) return std::move(m_result);
    stop_server();
    run_tool_probes(todo);
    close_outcome();
    return std::move(m_result);
  }

 private:
  /// What the cell does after one of a server probe's items.
  enum class Step { next, again, end_probe, end_cell };

  /// The cell's server started from its spec, or null with the reason in the result.
  std::unique_ptr<server::Instance> start_server() {
    auto inst = m_runner.m_backend.start(m_spec, m_runner.m_cancel);
    if (!inst) {
      CellResult& r = m_result;
      r.outcome = inst.error().outcome == server::CellOutcome::cancelled ? server::CellOutcome::pending : inst.error().outcome;
      r.effective = inst.error().effective;
      r.message = inst.error().message;
      if (!inst.error().log_tail.empty()) r.message += "\n" + inst.error().log_tail;
      return nullptr;
    }
    return std::move(*inst);
  }

  /// Starts the server and notes what its log says of the cell; false when it did not start.
  bool start() {
    m_instance = start_server();
    if (!m_instance) return false;
    CellResult& r = m_result;
    r.ready_s = m_instance->ready_seconds();
    r.effective = m_instance->effective();
    // The lifecycle refused a mismatch; a log without the KV line leaves the types unchecked.
    // An attached server's types the user only declared are no better: recorded kv_unverified too.
    const server::KvCheck check = m_instance->kv_check();
    m_unverified = check == server::KvCheck::unverified || check == server::KvCheck::declared;
    if (m_unverified) {
      // A launch template's confirmation endpoint says what it lacked (server::TemplateFlavour).
      const std::string why = m_instance->info().value("kv_unconfirmed", "");
      const std::string fallback = check == server::KvCheck::declared
                                       ? "declared by the config, unverified: the attached server does not report them"
                                       : "the server's log holds no KV cache line";
      r.message = "K/V types unconfirmed: " + (why.empty() ? fallback : why);
      m_runner.m_progress.note(m_cell.label() + ": " + r.message + "; the types are unchecked (kv_unverified)");
    }
    if (r.effective.path.path == server::AttentionPath::converted)
      m_runner.m_progress.note(m_cell.label() + ": attention path converted: " + r.effective.path.reason);
    m_info = m_runner.cell_info(m_cell, m_spec);
    r.outcome = server::CellOutcome::ok;
    nlohmann::json ready = {{"ready_s", r.ready_s}};
    // The model an OpenAI API server is asked for (server::TemplateFlavour chose it from /v1/models).
    if (const nlohmann::json info = m_instance->info(); info.contains("openai_model")) ready["openai_model"] = info["openai_model"];
    m_runner.lifecycle_event(r, "server_ready", std::move(ready));
    return true;
  }

  /// Probes that talk to the server first; tool probes (llama-perplexity, llama-bench load the model
  /// themselves) after the server has stopped, so the model is never in memory twice. False when the
  /// cell ended here (its server failed to restart, died twice or wedged).
  bool run_server_probes(std::vector<PendingItems>& todo) {
    for (auto& t : todo) {
      if (t.probe->runs_tool()) continue;
      m_exceeded = false;
      m_probe_unfit.reset();
      const int ok_before = m_result.items_ok;
      if (!run_server_probe(t)) return false;
      if (m_runner.stopping()) break;
      // When none of the probe's items ran ok, the grid cannot fit it.
      if (m_probe_unfit && m_result.items_ok == ok_before) note_shortfall(m_result.shortfall, *m_probe_unfit);
    }
    return true;
  }

  /// A server probe's items, in order; false when the cell ended.
  bool run_server_probe(PendingItems& t) {
    const std::vector<probe::Record> reference = m_runner.reference_records(m_cell, *t.probe);
    for (std::size_t k = 0; k < t.items.size(); ++k) {
      if (m_runner.stopping()) break;
      if (t.gate && t.gate->settled()) {
        m_runner.settle(m_cell, t, k, m_result);
        break;
      }
      const Step step = run_server_item(t, t.items[k], reference);
      if (step == Step::again) --k;  // the same item, on the restarted server
      else if (step == Step::end_probe) break;
      else if (step == Step::end_cell) return false;
    }
    return true;
  }

  Step run_server_item(PendingItems& t, const probe::Item& item, const std::vector<probe::Record>& reference) {
    probe::Context ctx{m_instance->api(), m_info, m_runner.m_embedder, &reference};
    auto t0 = std::chrono::steady_clock::now();
    auto res = run_item(*t.probe, item, ctx);
    double wall = core::seconds_between(t0, std::chrono::steady_clock::now());
    // An interrupted item is not recorded: resume runs it again.
    if (m_runner.stopping()) return Step::end_probe;
    if (res) return m_runner.record_ok(m_cell, t, item, *res, wall, m_result) ? Step::next : Step::end_probe;
    return item_failed(t, item, res.error(), wall);
  }

  /// Did the server die? A killed server shows up as a connect error, a timeout or a cut answer
  /// (parse); give the kernel a moment to let us reap it before deciding.
  bool server_alive(const core::Error& err) {
    bool alive = m_instance->alive();
    const bool may_be_death = err.kind == core::ErrorKind::connect || err.kind == core::ErrorKind::timeout ||
                              err.kind == core::ErrorKind::parse;
    for (int w = 0; alive && w < 10 && may_be_death; ++w) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      alive = m_instance->alive();
    }
    return alive;
  }

  Step item_failed(const PendingItems& t, const probe::Item& item, const core::Error& err, double wall) {
    if (!server_alive(err)) return server_lost(t, item, err, wall);
    if (err.kind == core::ErrorKind::timeout) return server_wedged(t, item, err, wall);
    if (!m_runner.record_failure(m_cell, t, item, err, wall, m_result)) return Step::end_probe;
    if (err.kind == core::ErrorKind::exceeds_context) note_unfit(t, err);
    return Step::next;
  }

  /// The server died during an item: restarted once, and the item runs again; a second death is
  /// recorded against the item and ends the cell (crashed).
  Step server_lost(const PendingItems& t, const probe::Item& item, const core::Error& err, double wall) {
    CellResult& r = m_result;
    const std::string how = m_instance->exit_description();
    if (r.restarts == 0) {
      m_runner.m_progress.note(m_cell.label() + ": server " + how + " during " + t.probe->name() + "/" + item.key +
                               "; restarting it once");
      ++r.restarts;
      m_instance->stop();
      m_runner.lifecycle_event(r, "server_restarted", {{"after", how}});
      m_instance = start_server();
      if (m_instance) return Step::again;
      r.outcome = server::CellOutcome::crashed;
      r.message = "server " + how + "; restart failed: " + r.message;
      return Step::end_cell;
    }
    auto rec = m_runner.make_record(m_cell, *t.probe, item, probe::ItemStatus::failed, "crashed", wall, r.restarts + 1);
    rec.error = err.message;
    rec.log_tail = m_instance->error_lines();
    if (!m_runner.append_or_stop(rec)) return Step::end_probe;
    ++r.items_failed;
    m_runner.m_progress.item_done(m_cell, t.probe->name(), item.key, "crashed", wall);
    r.outcome = server::CellOutcome::crashed;
    r.message = "server " + how + " again after a restart\n" + m_instance->error_lines();
    return Step::end_cell;
  }

  /// An item timed out on a live server: recorded, the server stopped, the cell ends (wedged).
  Step server_wedged(const PendingItems& t, const probe::Item& item, const core::Error& err, double wall) {
    CellResult& r = m_result;
    auto rec = m_runner.make_record(m_cell, *t.probe, item, probe::ItemStatus::failed, "timeout", wall, r.restarts + 1);
    rec.error = err.message;
    if (!m_runner.append_or_stop(rec)) return Step::end_probe;
    ++r.items_failed;
    m_runner.m_progress.item_done(m_cell, t.probe->name(), item.key, "timeout", wall);
    r.outcome = server::CellOutcome::wedged;
    r.message = t.probe->name() + "/" + item.key + ": " + err.message + "; the server was stopped (wedged)";
    m_instance->stop();
    return Step::end_cell;
  }

  /// An item did not fit the context: kept for the probe's shortfall, and said once per probe and
  /// cell (the next items will most likely not fit either).
  void note_unfit(const PendingItems& t, const core::Error& err) {
    const config::VariantConfig* variant = config::find_variant(m_runner.m_config, m_cell.variant);
    note_shortfall(m_probe_unfit, ContextShortfall{t.probe->name(), t.probe->kind(), tokens_needed(err), m_spec.n_ctx,
                                                   variant != nullptr && variant->ctx > 0});
    if (m_exceeded) return;
    m_exceeded = true;
    const std::string what = t.probe->name() + ": " + err.message;
    m_runner.m_progress.note(m_cell.label() + ": " + what);
    m_result.message += (m_result.message.empty() ? "" : "\n") + what;
  }

  void stop_server() {
    auto s0 = std::chrono::steady_clock::now();
    m_instance->stop();
    m_result.stop_s = core::seconds_between(s0, std::chrono::steady_clock::now());
    m_runner.lifecycle_event(m_result, "server_stopped", {{"stop_s", m_result.stop_s}});
  }

  /// The tool probes, with no server of this cell alive: a failure is the item's, never the server's.
  void run_tool_probes(std::vector<PendingItems>& todo) {
    std::vector<std::string> tools;
    for (const auto& t : todo)
      if (t.probe->runs_tool()) tools.push_back(t.probe->name());
    if (!tools.empty() && !m_runner.stopping()) m_runner.lifecycle_event(m_result, "tool_probes", {{"probes", tools}});
    for (auto& t : todo) {
      if (!t.probe->runs_tool() || m_runner.stopping()) continue;
      run_tool_probe(t);
    }
    if (!tools.empty() && !m_runner.stopping()) m_runner.lifecycle_event(m_result, "tool_probes_done", {{"probes", tools}});
  }

  void run_tool_probe(PendingItems& t) {
    const std::vector<probe::Record> reference = m_runner.reference_records(m_cell, *t.probe);
    for (std::size_t k = 0; k < t.items.size() && !m_runner.stopping(); ++k) {
      if (t.gate && t.gate->settled()) {
        m_runner.settle(m_cell, t, k, m_result);
        break;
      }
      probe::Context ctx{m_instance->api(), m_info, m_runner.m_embedder, &reference};
      auto t0 = std::chrono::steady_clock::now();
      auto res = run_item(*t.probe, t.items[k], ctx);
      double wall = core::seconds_between(t0, std::chrono::steady_clock::now());
      if (m_runner.stopping()) break;
      const bool recorded = res ? m_runner.record_ok(m_cell, t, t.items[k], *res, wall, m_result)
                                : m_runner.record_failure(m_cell, t, t.items[k], res.error(), wall, m_result);
      if (!recorded) break;
    }
  }

  /// The cell's outcome once everything ran.
  void close_outcome() {
    CellResult& r = m_result;
    // Interrupted, or the store could not write: the cell's missing items run again on resume.
    if (m_runner.stopping()) r.outcome = server::CellOutcome::pending;
    else if (m_unverified && r.outcome == server::CellOutcome::ok) r.outcome = server::CellOutcome::kv_unverified;
    // A cell is ok for what ran in it; one whose every item failed says so (the records say why).
    if (server::ran(r.outcome) && r.items_ok + r.items_skipped == 0 && r.items_failed > 0)
      r.outcome = server::CellOutcome::items_failed;
  }

  Runner& m_runner;
  const Cell& m_cell;
  const server::CellSpec m_spec;
  CellResult m_result;
  std::unique_ptr<server::Instance> m_instance;
  probe::CellInfo m_info;
  bool m_unverified = false;  // the server's log showed no KV line
  // The server probe now running: whether its context overflow was said, and its items that did not fit.
  bool m_exceeded = false;
  std::optional<ContextShortfall> m_probe_unfit;
};

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
  CellRun run(*this, cell, cell_spec(cell, slot), std::move(r));
  return run.run(todo);
}

bool Runner::record_ok(const Cell& cell, PendingItems& t, const probe::Item& item, const probe::ItemResult& res,
                       double wall, CellResult& r) {
  auto rec = make_record(cell, *t.probe, item, probe::ItemStatus::ok, "", wall, r.restarts + 1);
  rec.response = res.response;
  rec.metrics = res.metrics;
  rec.timings = server::to_json(res.timings);
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
  auto rec = make_record(cell, *t.probe, item, probe::ItemStatus::failed, std::string(core::to_string(err.kind)), wall, r.restarts + 1);
  rec.error = err.message;
  rec.http_status = err.http_status;
  if (!append_or_stop(rec)) return false;
  ++r.items_failed;
  m_progress.item_done(cell, t.probe->name(), item.key, rec.status_text(), wall);
  return true;
}

void Runner::lifecycle_event(CellResult& r, const std::string& event, nlohmann::json details) const {
  details["event"] = event;
  details["at"] = core::iso8601_ms(std::chrono::system_clock::now());
  r.lifecycle.push_back(std::move(details));
}

}  // namespace kvsweep::sweep
