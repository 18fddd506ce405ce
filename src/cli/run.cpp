#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <filesystem>
#include <optional>

#include <spdlog/spdlog.h>

#include "kvsweep/cli/attach_check.hpp"
#include "kvsweep/cli/capability_check.hpp"
#include "kvsweep/cli/commands.hpp"
#include "kvsweep/cli/dry_run.hpp"
#include "kvsweep/cli/ollama_check.hpp"
#include "kvsweep/cli/progress.hpp"
#include "kvsweep/cli/run_backends.hpp"
#include "kvsweep/cli/write_report.hpp"
#include "kvsweep/cli/run_checks.hpp"
#include "kvsweep/config/config.hpp"
#include "kvsweep/config/keys.hpp"
#include "kvsweep/core/clock.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/model/copy_model_info.hpp"
#include "kvsweep/core/redact.hpp"
#include "kvsweep/model/model_file.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/sweep/plan/filter_check.hpp"
#include "kvsweep/sweep/run/runner.hpp"

namespace kvsweep::cli {

namespace {

struct RunOpts {
  std::string config;
  std::string out;
  std::string resume;
  bool resume_flag = false;
  bool dry_run = false;
  bool measure = false;                // --measure: the dry run times one item per probe on the reference
  bool strict = false;
  std::vector<std::string> only;      // --only, each one clause (any matches)
  std::string shard;
  int parallel_cells = 0;              // 0: from the config (sweep.parallel_cells, default 1)
  std::vector<std::string> slot_env;   // NAME=TEMPLATE; replaces the config's sweep.slot_env
  bool adaptive = false;               // --adaptive: on, whatever sweep.adaptive says
  bool no_adaptive = false;            // --no-adaptive: off (a resume then completes the settled items)
  bool allow_build_change = false;     // --allow-build-change: resume with another server build
};

std::string default_run_dir(const config::Config& c) {
  std::string stamp = core::iso8601(std::chrono::system_clock::now());
  std::erase(stamp, ':');
  return (runs_directory(c) / (c.name + "-" + stamp)).string();
}

/// --adaptive / --no-adaptive over sweep.adaptive. A resumed adaptive run keeps the settings the run
/// started with (its manifest's), so that it continues the same decision.
void apply_adaptive_flags(const RunOpts& o, const std::optional<sweep::Manifest>& previous, config::Config& cfg) {
  if (o.adaptive && o.no_adaptive) throw core::FatalError("--adaptive and --no-adaptive: give one");
  if (o.adaptive) cfg.sweep.adaptive.enabled = true;
  if (o.no_adaptive) cfg.sweep.adaptive.enabled = false;
  if (!previous || !cfg.sweep.adaptive.enabled) return;
  const nlohmann::json& config = previous->config;
  const nlohmann::json was = config.is_object() ? config.value("sweep", nlohmann::json::object()).value("adaptive", nlohmann::json())
                                                : nlohmann::json();
  if (!was.is_object()) return;
  cfg.sweep.adaptive.min_items = was.value("min_items", cfg.sweep.adaptive.min_items);
  cfg.sweep.adaptive.alpha = was.value("alpha", cfg.sweep.adaptive.alpha);
  cfg.sweep.adaptive.futility = was.value("futility", cfg.sweep.adaptive.futility);
  cfg.sweep.adaptive.seed = was.value("seed", cfg.sweep.adaptive.seed);
}

/// What `run` works on: the run directory, the config file and, for a resume, what the run says of itself.
struct RunTarget {
  std::string run_dir;
  std::string config_path;
  bool resume = false;
  std::optional<sweep::Manifest> previous;  // the manifest of the run being resumed
};

/// The run directory and config from -o / --resume / CONFIG; a resume without CONFIG takes the manifest's.
RunTarget resolve_target(const RunOpts& o) {
  RunTarget t{o.out, o.config, o.resume_flag || !o.resume.empty(), std::nullopt};
  if (!o.resume.empty()) {
    if (!t.run_dir.empty() && t.run_dir != o.resume) throw core::FatalError("--resume DIR and -o DIR disagree; give one");
    t.run_dir = o.resume;
  }
  if (t.resume && t.run_dir.empty()) throw core::FatalError("--resume needs the run directory (--resume DIR or -o DIR)");
  // What the run being resumed says of itself: its config file, hash and shard.
  if (t.resume) t.previous = manifest_to_resume(t.run_dir, !t.config_path.empty());
  if (t.previous && t.config_path.empty()) {
    t.config_path = t.previous->config_file.value_or("");
    if (t.config_path.empty()) throw core::FatalError(t.run_dir + "/manifest.json names no config_file; pass CONFIG");
  }
  if (t.config_path.empty()) throw core::FatalError("run: CONFIG is required (e.g. kvsweep run configs/demo.json)");
  return t;
}

/// The config's probes, in order; two probes of one name are a setup error.
std::vector<std::unique_ptr<probe::Probe>> make_probes(const config::Config& cfg) {
  std::vector<std::unique_ptr<probe::Probe>> probes;
  for (std::size_t i = 0; i < cfg.probes.size(); ++i) {
    probe::ConfigSource site{{cfg.file.string(), "probes[" + std::to_string(i) + "]"}, cfg.base_dir};
    auto made = probe::make_probe(cfg.probes[i], site);
    for (const auto& p : probes)
      if (p->name() == made->name())
        throw core::FatalError(cfg.file.string() + ": probes[" + std::to_string(i) + "].name: duplicate probe name '" +
                               p->name() + "'; give each probe of one kind a distinct \"name\"");
    probes.push_back(std::move(made));
  }
  return probes;
}

/// --shard, checked against the shard a resumed run is (a shard resumes as the shard it is).
std::optional<sweep::Shard> resolve_shard(const RunOpts& o, const RunTarget& target) {
  std::optional<sweep::Shard> shard;
  if (!o.shard.empty()) {
    shard = sweep::parse_shard(o.shard);
    if (!shard) throw core::FatalError("--shard '" + o.shard + "': expected I/N with 0 <= I < N (e.g. 0/3)");
  }
  if (!target.previous) return shard;
  if (!target.previous->shard) {
    if (shard) throw core::FatalError("--resume " + target.run_dir + ": the run is not a shard; resume it without --shard");
    return shard;
  }
  const sweep::Shard was = *target.previous->shard;
  if (shard && (shard->index != was.index || shard->count != was.count))
    throw core::FatalError("--resume " + target.run_dir + ": the run is shard " + std::to_string(was.index) + "/" +
                           std::to_string(was.count) + ", not " + o.shard);
  return was;
}

/// The slots' environments: --slot-env when given (replacing the config's), else sweep.slot_env.
std::vector<config::SlotEnv> resolve_slot_env(const RunOpts& o, const config::Config& cfg) {
  if (o.slot_env.empty()) return cfg.sweep.slot_env;
  std::vector<config::SlotEnv> env;
  for (const auto& text : o.slot_env) {
    auto e = config::parse_slot_env(text);
    if (!e) throw core::FatalError("--slot-env " + e.error().message);
    env.push_back(*e);
  }
  return env;
}

/// The runner's options from the command line over the config (shard, --only, adaptive, slots).
sweep::RunOptions run_options(const RunOpts& o, const RunTarget& target, const std::vector<std::string>& probe_names,
                              config::Config& cfg) {
  sweep::RunOptions ropts;
  ropts.shard = resolve_shard(o, target);
  if (!o.only.empty()) {
    ropts.filter = sweep::parse_filter(o.only);
    // A term naming nothing, or terms that select nothing, would run nothing and exit 0.
    sweep::check_filter(ropts.filter, cfg, probe_names);
  }
  apply_adaptive_flags(o, target.previous, cfg);
  ropts.parallel_cells = o.parallel_cells > 0 ? o.parallel_cells : cfg.sweep.parallel_cells;
  if (ropts.parallel_cells > 1 && cfg.server.backend != "llama-server")
    throw core::FatalError("--parallel-cells needs backend \"llama-server\": an Ollama or external server is one "
                           "server, not one per cell (backend is \"" + cfg.server.backend + "\")");
  ropts.slot_env = resolve_slot_env(o, cfg);
  return ropts;
}

bool needs_embedder(const std::vector<std::unique_ptr<probe::Probe>>& probes) {
  return std::ranges::any_of(probes, [](const auto& p) { return p->needs_embedder(); });
}

/// Bad input before anything starts: a model llama-server cannot load would fail every cell. Notes
/// what the runner should know of each model's file (kvsweep's copy model) in `ropts`.
void check_model_files(const config::Config& cfg, bool embedder_needed, sweep::RunOptions& ropts) {
  if (embedder_needed && !cfg.embedder)
    throw core::FatalError(cfg.file.string() + ": embedder: missing; a probe (telephone) needs an embedding model");
  if (cfg.server.backend == "llama-server" || cfg.server.backend == "ollama") {
    for (std::size_t i = 0; i < cfg.models.size(); ++i) {
      if (cfg.server.backend == "ollama" && !config::is_gguf_path(cfg.models[i].path)) continue;  // a tag
      if (auto ok = model::check_model_file(cfg.models[i].path); !ok)
        throw core::FatalError(cfg.file.string() + ": models[" + std::to_string(i) + "].path: '" + cfg.models[i].path +
                               "': " + ok.error().message);
      if (const auto copy = model::read_copy_model_info(cfg.models[i].path))
        ropts.model_facts[cfg.models[i].name]["copy_model"] = {{"match_length", copy->match_length}};
    }
  }
  if (cfg.embedder && (cfg.embedder->backend == "llama-server" ||
                       (cfg.embedder->backend == "ollama" && config::is_gguf_path(cfg.embedder->model)))) {
    if (auto ok = model::check_model_file(cfg.embedder->model); !ok)
      throw core::FatalError(cfg.file.string() + ": embedder.model: '" + cfg.embedder->model + "': " + ok.error().message);
  }
}

/// A resume's checks, before the dry run (which shows their outcome) and the run: the config is the
/// run's or only grows it (else refused, naming the change), and the run is the one it started as: its
/// identity (models, embedder, input files, server build and environment; the models' hashes into
/// `ropts`, and the build it started with when `allow_build_change` lets another continue it).
void check_resume(const RunTarget& target, const config::Config& cfg,
                  const std::vector<std::unique_ptr<probe::Probe>>& probes, const nlohmann::json& server,
                  bool allow_build_change, sweep::RunOptions& ropts, bool announce) {
  if (!target.resume) return;
  std::error_code ec;
  if (!std::filesystem::is_directory(target.run_dir, ec)) return;  // opening the store says so
  if (!target.previous) return;  // nothing recorded yet (manifest_to_resume refuses records without one)
  ropts.grown = check_growth(cfg, probes, *target.previous, target.run_dir);
  if (announce && ropts.grown.is_object())
    std::fprintf(stderr, "kvsweep: the run grows (config hash %s → %s): its records are kept, only what is new runs\n",
                 ropts.grown.value("from_config_hash", "").c_str(), ropts.grown.value("to_config_hash", "").c_str());
  auto identity = check_resume_identity(cfg, probes, *target.previous, server, allow_build_change, target.run_dir);
  ropts.models = std::move(identity.models);
  ropts.build_changed_from = identity.build_changed_from;
}

/// The run's store: a new run directory, or the resumed one (checked before by check_resume); a torn
/// last record is cut off with a warning.
sweep::RunStore open_store(const RunTarget& target) {
  auto store = target.resume ? sweep::RunStore::open(target.run_dir) : sweep::RunStore::create(target.run_dir);
  if (!store) throw core::FatalError(store.error().message);
  if (target.resume && store->repaired_bytes() > 0)
    spdlog::warn("records.jsonl ended in a torn line ({} bytes); cut it off, the item will run again",
                 store->repaired_bytes());
  return std::move(*store);
}

/// The exit code of a run that ended, saying on stderr why it stopped early; a run that ended writes its
/// report first.
int finish_run(const sweep::RunResult& result, const std::string& run_dir, bool strict) {
  if (!result.store_error.empty()) {
    std::fprintf(stderr,
                 "kvsweep: stopped: %s\nkvsweep: every record written before is intact; free space, then finish with: "
                 "kvsweep run --resume %s\n",
                 result.store_error.c_str(), run_dir.c_str());
    return core::exit_code::error;
  }
  if (!result.context_error.empty()) {
    std::fprintf(stderr, "kvsweep: stopped before the grid's other cells: %s\n", result.context_error.c_str());
    return core::exit_code::error;
  }
  if (result.interrupted) {
    std::fprintf(stderr, "kvsweep: interrupted; finish with: kvsweep run --resume %s\n", run_dir.c_str());
    return interrupted_exit_code();
  }
  const std::optional<std::string> status = report_after_run(run_dir);
  if (!status) return core::exit_code::error;
  // Items already recorded (a resumed cell that only skipped) count as ok records.
  const bool any_ok = std::ranges::any_of(result.cells, [](const auto& c) { return c.items_ok + c.items_skipped > 0; });
  if (!result.cells.empty() && !any_ok) {
    std::fprintf(stderr, "kvsweep: no cell produced an ok record (%zu cell(s) run); see the cell messages above\n",
                 result.cells.size());
    return core::exit_code::regression;
  }
  const auto not_ok = [](const sweep::CellResult& c) {
    return c.outcome != server::CellOutcome::ok && c.outcome != server::CellOutcome::skipped;
  };
  // A reference cell with no ok record (it may have run in an earlier invocation) measured nothing.
  if (strict && *status == "failed") {
    std::fprintf(stderr,
                 "kvsweep: run status failed: nothing measured (a reference cell has no ok record; see the summary above)\n");
    return core::exit_code::regression;
  }
  if (strict && std::ranges::any_of(result.cells, not_ok)) return core::exit_code::regression;
  return core::exit_code::ok;
}

int run_command(const RunOpts& o) {
  RunTarget target = resolve_target(o);
  config::Config cfg = config::load(target.config_path);
  std::vector<std::unique_ptr<probe::Probe>> probes = make_probes(cfg);
  // A probe the server cannot serve refuses the grid now, before any binary, model or cell.
  for (const auto& note : check_capabilities(cfg, probes)) std::fprintf(stderr, "kvsweep: note: %s\n", note.c_str());
  std::vector<std::string> names;
  for (const auto& p : probes) names.push_back(p->name());
  sweep::RunOptions ropts = run_options(o, target, names, cfg);
  const bool embedder_needed = needs_embedder(probes);
  check_model_files(cfg, embedder_needed, ropts);
  std::unique_ptr<server::Backend> backend = make_cell_backend(cfg);
  // A dead URL fails once here, not once per cell after each ready timeout.
  check_attached_servers(cfg);
  resolve_variant_binaries(cfg, ropts);

  if (cfg.server.backend == "ollama") check_ollama_grid(cfg, backend->describe().value("version", ""));
  // The dry run shows a growth in its plan; the run says it once (not under -q).
  check_resume(target, cfg, probes, backend->describe(), o.allow_build_change, ropts,
               !o.dry_run && spdlog::get_level() < spdlog::level::warn);

  // The dry run after the checks: a missing model, binary or server fails it as it would fail the run.
  // Tags missing from Ollama's store are named with the `ollama pull` that fetches each (the run
  // would record their cells load_failed); the plan itself still prints.
  if (o.dry_run) {
    print_ollama_models(cfg, *backend);
    return print_dry_run(cfg, probes, ropts, *backend, target.resume ? target.run_dir : "", o.measure);
  }

  if (target.run_dir.empty()) target.run_dir = default_run_dir(cfg);
  sweep::RunStore store = open_store(target);
  const std::string& run_dir = target.run_dir;
  if (spdlog::get_level() < spdlog::level::warn) std::fprintf(stderr, "kvsweep: run directory %s\n", run_dir.c_str());
  // The time before the run, from the last complete run of each model (a resume runs only what is left).
  if (!target.resume && spdlog::get_level() < spdlog::level::warn)
    for (const auto& line : time_lines(cfg, probes, ropts)) std::fprintf(stderr, "kvsweep: %s\n", line.c_str());

  StderrProgress progress(::isatty(2) == 1, spdlog::get_level() >= spdlog::level::warn);
  if (cfg.server.backend == "external") progress.attach_to(cfg.server.url);
  sweep::Runner runner(cfg, probes, *backend, store, progress, cancel_flag(), ropts);
  RunningEmbedder embedder;
  if (embedder_needed) {
    embedder = start_embedder(cfg, store);
    runner.set_embedder(embedder.embedder.get(), embedder.embedder->describe());
  }

  auto result = runner.run();
  if (embedder.instance) embedder.instance->stop();
  std::printf("%s", core::redact(summary_table(result)).c_str());
  std::printf("run directory: %s\n", run_dir.c_str());
  return finish_run(result, run_dir, o.strict);
}

}  // namespace

void register_run(CLI::App& app, Commands& commands) {
  auto* sub = app.add_subcommand("run", "Run a sweep: one server per cell, every probe item recorded");
  std::string kinds;
  for (const auto& k : probe::probe_kinds()) kinds += (kinds.empty() ? "" : ", ") + k;
  sub->footer("Probe kinds (probes[].kind): " + kinds + "; their keys are in docs/probes-and-metrics.md and configs/example.jsonc.");
  auto o = std::make_shared<RunOpts>();
  sub->add_option("config", o->config, "Config file (JSON, comments allowed); see configs/example.jsonc");
  sub->add_option("-o,--output", o->out, "Run directory (default: <output_dir>/<name>-<timestamp>)");
  auto* resume = sub->add_option("--resume", o->resume,
                                 "Continue a run, running only the missing (cell, probe, item) triples: "
                                 "--resume DIR, or --resume with -o DIR (the config is read from the manifest "
                                 "when CONFIG is not given)")
                     ->expected(0, 1);
  sub->add_flag("--dry-run", o->dry_run, "Print the plan (cells in order, items) and exit");
  sub->add_flag("--measure", o->measure,
                "With --dry-run, for a model no earlier run of which is under output_dir: time one item of each probe "
                "on its reference cell now (one server start; probes that need the embedder are not counted) and "
                "estimate the plan's time from it");
  sub->add_option("--only", o->only,
                  "Only matching cells/probes: key=value[,key=value] (keys model,variant,k,v,cell,probe), every term "
                  "holding at once (e.g. variant=rot-off,k=q4_0); a value may list alternatives (k=q4_0|q8_0) and "
                  "--only may be repeated (a cell matching any one is run). The reference cell of each selected cell's "
                  "model and variant always runs too: it is what they are compared with")
      ->allow_extra_args(false);
  sub->add_option("--shard", o->shard, "Run shard I of N (0-based): every N-th cell of the grid, plus a support copy of the reference "
                  "cell where a probe compares with it; join the shards with `kvsweep merge`");
  sub->add_flag("--strict", o->strict,
                "Exit 1 when any cell did not end ok, or the run's status is failed (a reference cell without an ok "
                "record: nothing measured)");
  sub->add_flag("--adaptive", o->adaptive,
                "Stop each cell once every quality metric's verdict against the reference is settled (an anytime-valid "
                "sequential test after each item, in a seeded item order, from sweep.adaptive.min_items on; for pass/fail "
                "metrics also the full run's own verdict once no outcome of the items left can change it, and "
                "'unknown' once the full run would decide with predictive probability below sweep.adaptive.futility); "
                "the items not run are recorded skipped/settled. The reference cell runs every item. Default: "
                "sweep.adaptive");
  sub->add_flag("--allow-build-change", o->allow_build_change,
                "With --resume: continue a run although the server build differs from the one it started with "
                "(llama-server --version); the manifest then records both");
  sub->add_flag("--no-adaptive", o->no_adaptive,
                "Run every item even if sweep.adaptive is on; with --resume, runs the items an adaptive run settled");
  sub->add_option("--parallel-cells", o->parallel_cells,
                  "Run up to N cells at once, each server in its slot 0..N-1 (each model's reference cell first; "
                  "default: sweep.parallel_cells, else 1)")
      ->check(CLI::Range(1, 256));
  sub->add_option("--slot-env", o->slot_env,
                  "Environment of a slot's server, NAME=TEMPLATE with {slot} replaced by the slot number, e.g. "
                  "'CUDA_VISIBLE_DEVICES={slot}' (repeatable; replaces sweep.slot_env)")
      ->allow_extra_args(false);
  sub->callback([&commands, o, resume] {
    o->resume_flag = resume->count() > 0;
    commands.action = [o] { return run_command(*o); };
  });
}

}  // namespace kvsweep::cli
