#include "kvsweep/sweep/runner.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <iterator>
#include <set>
#include <thread>

#include "kvsweep/core/clock.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/core/version.hpp"

namespace kvsweep::sweep {

namespace {

using Ms = std::chrono::milliseconds;

Ms seconds_to_ms(double s) { return Ms(static_cast<long long>(s * 1000.0)); }

nlohmann::json cell_result_json(const CellResult& r) {
  nlohmann::json j = r.cell.to_json();
  j["id"] = r.cell.id();
  j["is_reference"] = r.cell.is_reference;
  if (r.cell.support) j["support"] = true;
  j["outcome"] = server::to_string(r.outcome);
  j["message"] = r.message;
  j["items_ok"] = r.items_ok;
  j["items_failed"] = r.items_failed;
  j["items_skipped"] = r.items_skipped;
  j["restarts"] = r.restarts;
  j["ready_s"] = r.ready_s;
  j["wall_s"] = r.wall_s;
  j["stop_s"] = r.stop_s;
  j["items_wall_s"] = r.items_wall_s;
  j["server_ms"] = r.server_ms;
  j["effective"] = server::to_json(r.effective);
  if (!r.started_at.empty()) {
    j["started_at"] = r.started_at;
    j["finished_at"] = r.finished_at;
  }
  if (r.slot >= 0) {
    j["slot"] = r.slot;
    j["slot_env"] = config::env_for_record(r.slot_env);
  }
  return j;
}

std::string cell_key(const nlohmann::json& c) {
  return c.value("model", "") + "/" + c.value("type_k", "") + "/" + c.value("type_v", "");
}

/// One probe item; a probe that throws fails that item (ErrorKind::internal), not the sweep.
core::Expected<probe::ItemResult> run_item(probe::Probe& p, const probe::Item& item, probe::Context& ctx) {
  try {
    return p.run(item, ctx);
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::internal, p.name() + "/" + item.key + " threw: " + e.what());
  }
}

}  // namespace

bool Runner::append_or_stop(const nlohmann::json& record) {
  auto appended = m_store.append(record);
  if (appended) return true;
  std::lock_guard lock(m_mutex);
  if (m_store_error.empty()) {
    m_store_error = appended.error().message;
    spdlog::error("{}; stopping the run", m_store_error);
  }
  m_store_failed = true;
  return false;
}

ReferenceSupport reference_support(const std::vector<std::unique_ptr<probe::Probe>>& probes) {
  return std::ranges::any_of(probes, [](const auto& p) { return p->compares_with_reference(); }) ? ReferenceSupport::run
                                                                                                : ReferenceSupport::skip;
}

Runner::Runner(const config::Config& config, std::vector<std::unique_ptr<probe::Probe>>& probes,
               server::Backend& backend, RunStore& store, ProgressSink& progress, const std::atomic<bool>& cancel,
               RunOptions options)
    : m_config(config), m_probes(probes), m_backend(backend), m_store(store), m_progress(progress), m_cancel(cancel),
      m_options(std::move(options)) {}

void Runner::set_embedder(probe::Embedder* embedder, nlohmann::json description) {
  m_embedder = embedder;
  m_embedder_description = std::move(description);
}

int Runner::context_size() const {
  int ctx = m_config.server.ctx;
  if (ctx == 0) {
    ctx = 4096;
    for (const auto& p : m_probes) ctx = std::max(ctx, p->min_context());
  }
  return (ctx + 255) / 256 * 256;
}

server::CellSpec Runner::cell_spec(const Cell& cell, int slot) const {
  server::CellSpec spec;
  spec.model_name = cell.model;
  spec.model_path = cell.model_path;
  spec.type_k = cell.type_k;
  spec.type_v = cell.type_v;
  spec.n_ctx = context_size();
  spec.log_path = m_store.log_path(cell.id());
  spec.extra_args = m_config.server.args;
  spec.env = m_config.server.env;
  // The slot's entries come last: the child's environment takes the last value of a name.
  if (slot >= 0) std::ranges::copy(config::expand_slot_env(m_options.slot_env, slot), std::back_inserter(spec.env));
  spec.ready_timeout = seconds_to_ms(m_config.server.ready_timeout_s);
  spec.request_timeout = seconds_to_ms(m_config.server.request_timeout_s);
  spec.stop_grace = seconds_to_ms(m_config.server.stop_grace_s);
  return spec;
}

nlohmann::json Runner::make_record(const Cell& cell, const probe::Probe& p, const probe::Item& item,
                                   const std::string& status, double wall_s, int attempt) const {
  return {{"schema_version", kSchemaVersion},
          {"cell", cell.to_json()},
          {"probe", p.name()},
          {"kind", p.kind()},
          {"item", item.key},
          {"status", status},
          {"spec", item.spec},
          {"wall_s", wall_s},
          {"attempt", attempt},
          {"time", core::iso8601(std::chrono::system_clock::now())}};
}

void Runner::update_manifest(const std::vector<CellResult>& results, const std::string& status) {
  // Keep outcomes of cells this invocation does not touch (resume, shards, --only).
  nlohmann::json cells = m_manifest.value("cells", nlohmann::json::array());
  for (const auto& r : results) {
    if (r.outcome == server::CellOutcome::pending) continue;
    nlohmann::json j = cell_result_json(r);
    bool replaced = false;
    for (auto& c : cells) {
      if (cell_key(c) == cell_key(j)) {
        // A resumed cell that only skipped items keeps its earlier outcome.
        if (r.outcome == server::CellOutcome::skipped) {
          replaced = true;
          break;
        }
        c = j;
        replaced = true;
      }
    }
    if (!replaced && r.outcome != server::CellOutcome::skipped) cells.push_back(j);
  }
  m_manifest["cells"] = cells;
  m_manifest["status"] = status;
  m_manifest["updated_at"] = core::iso8601(std::chrono::system_clock::now());
  if (status != "running") m_manifest["finished_at"] = m_manifest["updated_at"];
  if (auto w = m_store.write_manifest(m_manifest); !w) spdlog::error("{}", w.error().message);
}

RunResult Runner::run() {
  auto t0 = std::chrono::steady_clock::now();
  auto cells = plan_cells(m_config, m_options.shard, reference_support(m_probes));
  std::erase_if(cells, [&](const Cell& c) { return !m_options.filter.matches_cell(c); });

  // Manifest: provenance first, so even a run that dies at once says what it was.
  if (auto old = RunStore::read_manifest(m_store.dir())) m_manifest = *old;
  m_manifest["schema_version"] = kSchemaVersion;
  m_manifest["kind"] = "kvsweep-run";
  m_manifest["name"] = m_config.name;
  m_manifest["config"] = config::to_json(m_config);
  // Like the slot environments: values of secret-looking names (…KEY…, …TOKEN…) never reach the run directory.
  m_manifest["config"]["server"]["env"] = config::env_for_record(m_config.server.env);
  m_manifest["config_file"] = std::filesystem::absolute(m_config.file).string();
  m_manifest["config_hash"] = config::config_hash(m_config);
  m_manifest["kvsweep"] = {{"version", core::version()}, {"git_sha", core::git_sha()}};
  m_manifest["server"] = m_backend.describe();
  m_manifest["host"] = core::host_info();
  if (!m_manifest.contains("started_at")) m_manifest["started_at"] = core::iso8601(std::chrono::system_clock::now());
  m_manifest["n_ctx"] = context_size();
  if (m_options.shard) m_manifest["shard"] = {{"index", m_options.shard->index}, {"count", m_options.shard->count}};
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : m_config.models) {
    nlohmann::json mj = {{"name", m.name}, {"path", m.path}};
    std::error_code ec;
    if (m_config.server.backend == "llama-server" && std::filesystem::is_regular_file(m.path, ec)) {
      mj["size"] = std::filesystem::file_size(m.path, ec);
      // Reuse the hash of an earlier invocation when the file is unchanged.
      bool reused = false;
      for (const auto& old : m_manifest.value("models", nlohmann::json::array())) {
        if (old.value("path", "") == m.path && old.value("size", 0ULL) == mj["size"].get<std::uintmax_t>() &&
            old.contains("sha256")) {
          mj["sha256"] = old["sha256"];
          reused = true;
        }
      }
      if (!reused) {
        if (auto h = core::sha256_file(m.path)) mj["sha256"] = *h;
      }
    }
    models.push_back(mj);
  }
  m_manifest["models"] = models;
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : m_probes) probes.push_back(probe::manifest_entry(*p));
  m_manifest["probes"] = probes;
  if (m_embedder) m_manifest["embedder"] = m_embedder_description;

  std::size_t total_items = 0;
  for (const auto& p : m_probes)
    if (m_options.filter.matches_probe(p->name())) total_items += p->items().size() * cells.size();
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
      m_progress.cell_done(results[i]);
      update_manifest(results, "running");
    }
  }
  result.interrupted = m_cancel.load();
  {
    std::lock_guard lock(m_mutex);
    result.store_error = m_store_error;
  }
  result.cells = results;
  result.wall_s = core::seconds_between(t0, std::chrono::steady_clock::now());
  bool all_done = !stopping();
  update_manifest(results, all_done ? "complete" : "interrupted");
  return result;
}

void Runner::run_parallel(const std::vector<Cell>& cells, std::vector<CellResult>& results) {
  // A model's reference cell must finish before the model's other cells start: probes compare
  // with its records (divergence in reference mode, kld's base logits). Until then its slot-mates
  // run other models' cells, or wait.
  std::set<std::string> reference_pending;
  for (const auto& c : cells)
    if (c.is_reference) reference_pending.insert(c.model);
  std::vector<bool> taken(cells.size(), false);
  std::condition_variable wake;

  std::exception_ptr error;  // the first exception of a worker, rethrown once all have stopped
  auto work = [&](int slot) {
    std::unique_lock lock(m_mutex);
    for (;;) {
      std::optional<std::size_t> next;
      bool all_taken = true;
      for (std::size_t i = 0; i < cells.size() && !next; ++i) {
        if (taken[i]) continue;
        all_taken = false;
        if (cells[i].is_reference || !reference_pending.contains(cells[i].model)) next = i;
      }
      if (stopping() || all_taken || error) return;
      if (!next) {
        // The cancel flag is set from a signal handler, which cannot notify: poll it.
        wake.wait_for(lock, Ms(100));
        continue;
      }
      taken[*next] = true;
      lock.unlock();
      CellResult r = run_timed(cells[*next], *next, cells.size(), slot);
      lock.lock();
      results[*next] = std::move(r);
      if (cells[*next].is_reference) reference_pending.erase(cells[*next].model);
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
  if (slot >= 0) {
    r.slot = slot;
    r.slot_env = config::expand_slot_env(m_options.slot_env, slot);
  }
  return r;
}

CellResult Runner::run_cell(const Cell& cell, std::size_t index, std::size_t count, int slot) {
  CellResult r;
  r.cell = cell;
  // What is left to do in this cell.
  struct Todo {
    probe::Probe* probe;
    std::vector<probe::Item> items;
  };
  std::vector<Todo> todo;
  for (auto& p : m_probes) {
    if (!m_options.filter.matches_probe(p->name())) continue;
    Todo t{p.get(), {}};
    for (auto& item : p->items()) {
      if (m_store.has_ok(triple_key(cell.to_json(), p->name(), item.key))) ++r.items_skipped;
      else t.items.push_back(std::move(item));
    }
    if (!t.items.empty()) todo.push_back(std::move(t));
  }
  if (todo.empty()) {
    r.outcome = server::CellOutcome::skipped;
    r.message = "every item already recorded";
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

  probe::CellInfo info;
  info.model = cell.model;
  info.model_path = cell.model_path;
  info.type_k = cell.type_k;
  info.type_v = cell.type_v;
  info.is_reference = cell.is_reference;
  info.n_ctx = spec.n_ctx;
  info.server_args = m_config.server.args;
  info.run_dir = m_store.dir();
  info.log_path = spec.log_path;
  if (slot >= 0) info.env = config::expand_slot_env(m_options.slot_env, slot);
  r.outcome = server::CellOutcome::ok;
  for (auto& t : todo) {
    // The reference cell's ok records for this probe (for probes comparing against it).
    std::vector<nlohmann::json> reference = m_store.select([&](const nlohmann::json& rec) {
      const auto& c = rec["cell"];
      return rec.value("probe", "") == t.probe->name() && rec.value("status", "") == "ok" &&
             c.value("model", "") == cell.model &&
             c.value("type_k", "") + "/" + c.value("type_v", "") == m_config.grid.reference;
    });
    bool exceeded = false;  // an item of this probe did not fit the context
    for (std::size_t k = 0; k < t.items.size(); ++k) {
      const auto& item = t.items[k];
      if (stopping()) break;
      probe::Context ctx{instance->api(), info, m_embedder, &reference};
      auto t0 = std::chrono::steady_clock::now();
      auto res = run_item(*t.probe, item, ctx);
      double wall = core::seconds_between(t0, std::chrono::steady_clock::now());
      // An interrupted item is not recorded: resume runs it again.
      if (stopping()) break;
      if (res) {
        auto rec = make_record(cell, *t.probe, item, "ok", wall, r.restarts + 1);
        rec["response"] = res->response;
        rec["metrics"] = res->metrics;
        rec["timings"] = server::to_json(res->timings);
        r.items_wall_s += wall;
        r.server_ms += res->timings.prompt_ms + res->timings.predicted_ms;
        if (!append_or_stop(rec)) break;
        ++r.items_ok;
        m_progress.item_done(cell, t.probe->name(), item.key, "ok", wall);
        continue;
      }
      const core::Error& err = res.error();
      // Did the server die? A killed server shows up as a connect or read error; give
      // the kernel a moment to let us reap it before deciding.
      bool alive = instance->alive();
      for (int w = 0; alive && w < 10 && (err.kind == core::ErrorKind::connect || err.kind == core::ErrorKind::timeout); ++w) {
        std::this_thread::sleep_for(Ms(20));
        alive = instance->alive();
      }
      if (!alive) {
        std::string how = instance->exit_description();
        if (r.restarts == 0) {
          m_progress.note(cell.label() + ": server " + how + " during " + t.probe->name() + "/" + item.key +
                          "; restarting it once");
          ++r.restarts;
          instance->stop();
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
        r.message = "no answer within " + std::to_string(m_config.server.request_timeout_s) + " s (" + err.message +
                    "); server killed";
        instance->stop();
        return r;
      }
      auto rec = make_record(cell, *t.probe, item, std::string(core::to_string(err.kind)), wall, r.restarts + 1);
      rec["error"] = err.message;
      if (err.http_status) rec["http_status"] = err.http_status;
      if (!append_or_stop(rec)) break;
      ++r.items_failed;
      if (err.kind == core::ErrorKind::exceeds_context && !exceeded) {
        // Said once per probe and cell: the next items will most likely not fit either.
        exceeded = true;
        const std::string what = t.probe->name() + ": " + err.message;
        m_progress.note(cell.label() + ": " + what);
        r.message += (r.message.empty() ? "" : "\n") + what;
      }
      m_progress.item_done(cell, t.probe->name(), item.key, rec["status"], wall);
    }
    if (stopping()) break;
  }
  auto s0 = std::chrono::steady_clock::now();
  instance->stop();
  r.stop_s = core::seconds_between(s0, std::chrono::steady_clock::now());
  // Interrupted, or the store could not write: the cell's missing items run again on resume.
  if (stopping()) r.outcome = server::CellOutcome::pending;
  else if (unverified && r.outcome == server::CellOutcome::ok) r.outcome = server::CellOutcome::kv_unverified;
  return r;
}

}  // namespace kvsweep::sweep
