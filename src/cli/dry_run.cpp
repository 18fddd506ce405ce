#include "kvsweep/cli/dry_run.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <unistd.h>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/cli/template_options.hpp"
#include "kvsweep/cli/twins_operating_point.hpp"
#include "kvsweep/config/keys.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/core/redact.hpp"
#include "kvsweep/model/kv_shape.hpp"
#include "kvsweep/probe/margin.hpp"
#include "kvsweep/probe/recall/recall.hpp"
#include "kvsweep/process/known_crash.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/analysis/plan_power.hpp"
#include "kvsweep/report/analysis/plan_time.hpp"
#include "kvsweep/server/context_override.hpp"
#include "kvsweep/sweep/estimate/previous_run.hpp"
#include "kvsweep/sweep/store/run_store.hpp"
#include "kvsweep/sweep/run/runner.hpp"

namespace kvsweep::cli {

namespace {

/// printf to stdout through core::redact: everything the dry run prints (a launch template's
/// --api-key, a slot's secret variable, a message quoting either) passes the one redaction.
[[gnu::format(printf, 1, 2)]] void say(const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::va_list measure;
  va_copy(measure, args);
  const int n = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  std::string text(static_cast<std::size_t>(std::max(n, 0)), '\0');
  std::vsnprintf(text.data(), text.size() + 1, format, args);
  va_end(args);
  std::fputs(core::redact(text).c_str(), stdout);
}

/// Tokens of `text` by the model's own tokenizer (llama-server's /tokenize, no special tokens);
/// nullopt with a reason printed when it cannot be counted.
std::optional<std::size_t> count_tokens(const config::Config& cfg, server::Backend& backend, const std::string& text) {
  if (config::uses_ollama(cfg.server)) {
    say("    tokens: not counted (Ollama has no /tokenize); random bodies run ~1.5 bytes a token, code ~3\n");
    return std::nullopt;
  }
  if (cfg.server.api == "openai" && cfg.server.command.openai.tokenizer == "none") {
    say("    tokens: not counted (%s has no tokenizer endpoint); random bodies run ~1.5 bytes a token, code ~3\n",
                cfg.server.command.server.c_str());
    return std::nullopt;
  }
  server::CellSpec spec;
  spec.model = cfg.models.front().name;
  spec.model_path = cfg.models.front().path;
  spec.n_ctx = 512;  // /tokenize needs no context: the smallest cache loads fastest
  spec.extra_args = cfg.server.args;
  spec.env = cfg.server.env;
  spec.log_path = std::filesystem::temp_directory_path() / ("kvsweep-plan-" + std::to_string(::getpid()) + ".log");
  spec.ready_timeout = std::chrono::milliseconds(static_cast<long long>(cfg.server.ready_timeout_s * 1000));
  spec.request_timeout = std::chrono::milliseconds(static_cast<long long>(cfg.server.request_timeout_s * 1000));
  auto instance = backend.start(spec, cancel_flag());
  std::error_code ec;
  if (!instance) {
    std::filesystem::remove(spec.log_path, ec);
    say("    tokens: not counted: the server did not start for the count (%s)\n", instance.error().message.c_str());
    return std::nullopt;
  }
  auto tokens = (*instance)->api().tokenize(text, false);
  (*instance)->stop();
  std::filesystem::remove(spec.log_path, ec);
  if (!tokens) {
    say("    tokens: not counted: /tokenize failed (%s)\n", tokens.error().message.c_str());
    return std::nullopt;
  }
  return tokens->size();
}

/// What a recall probe adds to the plan: the corpus's size in tokens and the sample it can take.
void print_corpus(const probe::RecallProbe& recall, const config::Config& cfg, server::Backend& backend, int n_ctx) {
  const auto& corpus = recall.corpus();
  const std::size_t targets = corpus.targets.size();
  const int wanted = recall.config().sample_size;
  if (static_cast<std::size_t>(wanted) > targets)
    say("    warning: k (sample_size) is %d but the corpus has %zu functions to recall: %zu items are used\n",
                wanted, targets, targets);
  const double bytes = static_cast<double>(corpus.text.size());
  say("    corpus: %zu functions, %s bytes\n", targets, report::shortest(bytes).c_str());
  const auto count = count_tokens(cfg, backend, corpus.text);
  if (!count) return;
  const double tokens = static_cast<double>(*count);
  say("    tokens: %zu (counted by the model's tokenizer: llama-server /tokenize on %s, started once for "
              "the count); %.2f bytes a token\n",
              *count, cfg.models.front().name.c_str(), tokens > 0 ? bytes / tokens : 0.0);
  if (*count + 256 > static_cast<std::size_t>(n_ctx))
    say("    warning: -c %d is smaller than the corpus (%zu tokens) with its question: set server.ctx to at "
                "least %zu plus the longest answer\n",
                n_ctx, *count, *count + 256);
  else
    say("    -c %d leaves %zu tokens for the question and the answer\n", n_ctx,
                static_cast<std::size_t>(n_ctx) - *count);
}

/// longkl's cost from its items' specs: the tokens each cell evaluates (the document up to the deepest
/// position, once, plus one per position after a window's first), the requests, and the KV cache its
/// context needs per K/V pair (from the first model's GGUF header). After a run, the report's "KL by
/// depth" table gives each cell's evaluated tokens as the server counted them.
void print_longkl_cost(const std::vector<probe::Item>& items, const config::Config& cfg,
                       const std::vector<sweep::Cell>& cells, int n_ctx) {
  long long positions = 0;
  int deepest = 0;
  for (const auto& item : items) {
    const int start = item.spec.value("start", 0), n = item.spec.value("positions", 0);
    positions += n;
    deepest = std::max(deepest, start + n - 1);
  }
  say("    cost per cell: %d tokens evaluated (the document up to its deepest position %d, once) in %lld "
      "one-token answers at %zu depths; each cell's count is checked against the server's (timings.prompt_n)\n",
      deepest, deepest, positions, items.size());
  if (cfg.models.empty()) return;
  auto file = model::read_gguf(cfg.models.front().path);
  // llama-server gives a slot at most the training context; past it every window fails (HTTP 400),
  // and the cell is a config_mismatch once the server logs the cap.
  const auto trained = file ? model::training_context(*file) : std::nullopt;
  const std::string override_key = trained ? server::context_length_key(trained->architecture) : "";
  const auto names_override = [&](const std::vector<std::string>& args) {
    return std::ranges::any_of(args, [&](const std::string& a) {
      return !override_key.empty() && a.find(override_key + "=") != std::string::npos;
    });
  };
  bool overridden = names_override(cfg.server.args);
  for (const auto& v : cfg.variants) overridden = overridden || names_override(v.args);
  if (trained && static_cast<std::uint64_t>(deepest) + 1 > trained->tokens && !overridden)
    say("    note: position %d is past %s's training context (%llu tokens): llama-server gives a slot at most "
        "that and the cell fails as config_mismatch; add %s to server.args to run the model past its training\n",
        deepest, cfg.models.front().name.c_str(), static_cast<unsigned long long>(trained->tokens),
        server::context_override_args(trained->architecture, n_ctx).c_str());
  const auto shape = file ? model::kv_shape(*file) : std::nullopt;
  if (!shape) {
    say("    memory: the KV cache at -c %d (not known: %s has no readable KV shape)\n", n_ctx,
        cfg.models.front().path.c_str());
    return;
  }
  std::set<std::string> seen;
  std::string line;
  for (const auto& cell : cells) {
    if (!seen.insert(cell.types()).second) continue;
    const auto bytes = model::kv_bytes_per_token(*shape, cell.type_k, cell.type_v);
    if (!bytes) continue;
    line += (line.empty() ? "" : ", ") + cell.types() + " " +
            report::fixed(*bytes * static_cast<double>(n_ctx) / (1024.0 * 1024.0), 0) + " MiB";
  }
  say("    memory: KV cache at -c %d: %s (%s); answers carry top-n lists only, no context × vocabulary "
      "logits\n", n_ctx, line.c_str(), cfg.models.front().name.c_str());
}

/// Per gated metric: can the items settle its verdict at its default margin?
/// `gate`: the probe's config "gate" (null: the metrics its role gates by default, MetricSpec::gated_by_default).
/// One line per verdict class (report::settle_lines), not one per metric.
void print_power(const probe::Probe& p, std::size_t items, const nlohmann::json& gate) {
  std::vector<report::SettleOutlook> outlooks;
  for (const auto& m : p.metrics()) {
    if (!m.is_judged()) continue;
    if (gate.is_array() ? std::find(gate.begin(), gate.end(), m.name) == gate.end() : !m.gated_by_default()) continue;
    const probe::Margin margin = probe::default_margin(m, p.calibration(), {});
    outlooks.push_back(report::settle_outlook(m, margin.value, items));
    outlooks.back().items_max = p.items_max();
  }
  if (outlooks.empty()) return;
  say("    verdicts with %zu items per cell (non-inferiority at the default margin, alpha 0.05):\n", items);
  for (const std::string& line : report::settle_lines(outlooks)) say("      %s\n", line.c_str());
}

/// The time line of `cells` cells of one model at `rates` ("time: ~4m10s (from run …)").
std::string time_line_of(const config::Config& cfg, const sweep::RunRates& rates, std::size_t cells,
                         const std::vector<sweep::PlannedProbe>& planned, const sweep::RunOptions& ropts) {
  const auto estimate = sweep::estimate_time(rates, cells, planned, ropts.parallel_cells);
  const report::PlanTimeFacts facts{rates.config_hash == config::config_hash(cfg), cfg.sweep.adaptive.enabled,
                                    ropts.parallel_cells};
  return report::time_line(estimate, rates, planned, facts);
}

/// --measure: the first item of each probe on `model`'s reference cell, run as a sweep of its own in a
/// temporary directory (removed after), and its rates; nullopt with the reason printed when it gave none.
/// Probes that need the embedding server are left out (their items are not counted).
std::optional<sweep::RunRates> measure_rates(const config::Config& cfg, std::vector<std::unique_ptr<probe::Probe>>& probes,
                                             server::Backend& backend, const config::ModelConfig& model) {
  std::string names;
  for (const auto& p : probes)
    if (!p->needs_embedder()) names += (names.empty() ? "" : "|") + p->name();
  if (names.empty()) return std::nullopt;
  const std::filesystem::path runs = measure_directory();
  sweep::RunOptions options;
  options.items_per_probe = 1;
  options.filter = sweep::parse_filter({"model=" + model.name + ",k=" + cfg.grid.reference.type_k +
                                        ",v=" + cfg.grid.reference.type_v + ",probe=" + names});
  std::optional<sweep::RunRates> rates;
  {
    auto store = sweep::RunStore::create((runs / "run").string());
    if (!store) {
      say("time: not measured: %s\n", store.error().message.c_str());
      return std::nullopt;
    }
    Quiet quiet;
    sweep::Runner runner(cfg, probes, backend, *store, quiet, cancel_flag(), options);
    const sweep::RunResult result = runner.run();
    for (const auto& c : result.cells)
      if (c.outcome != server::CellOutcome::ok && !result.interrupted)
        say("time: the measurement's cell %s ended %s: %s\n", c.cell.label().c_str(),
                    std::string(server::to_string(c.outcome)).c_str(), c.message.c_str());
    rates = sweep::previous_rates(runs, model.path);
  }
  std::error_code ec;
  std::filesystem::remove_all(runs, ec);
  if (rates) rates->run = "measured now: one item of each probe on the reference cell";
  return rates;
}

/// Per model, the time its cells take at the rates of the last complete run of the same model file,
/// or (`measure`) of one item per probe timed now on its reference cell.
void print_time(const config::Config& cfg, std::vector<std::unique_ptr<probe::Probe>>& probes,
                const std::vector<sweep::Cell>& cells, const std::vector<sweep::PlannedProbe>& planned,
                const sweep::RunOptions& ropts, server::Backend& backend, bool measure) {
  const std::filesystem::path runs = runs_directory(cfg);
  for (const auto& m : cfg.models) {
    const auto n = static_cast<std::size_t>(std::ranges::count(cells, m.name, &sweep::Cell::model));
    if (n == 0) continue;
    const std::string prefix = cfg.models.size() > 1 ? "  " + m.name + ": " : "";
    if (cfg.models.size() > 1 && &m == &cfg.models.front()) say("time, per model:\n");
    auto rates = sweep::previous_rates(runs, m.path);
    if (!rates && measure) rates = measure_rates(cfg, probes, backend, m);
    if (!rates) {
      say("%stime: no previous run of this model to estimate from (complete runs under %s)%s\n", prefix.c_str(),
                  runs.string().c_str(),
                  measure ? "" : "; --dry-run --measure times one item of each probe on the reference cell now "
                                 "(one server start) and estimates from it");
      continue;
    }
    say("%s%s\n", prefix.c_str(), time_line_of(cfg, *rates, n, planned, ropts).c_str());
  }
}

/// A launch template's command line for `cell`, as each cell's is made (the port is chosen per cell).
void print_launch(const config::Config& cfg, const sweep::Cell& cell, int n_ctx) {
  server::TemplateOptions options = template_options(cfg.server);
  server::CellSpec spec;
  spec.set_key(cell.key());
  spec.model_path = cell.model_path;
  spec.n_ctx = n_ctx;
  spec.extra_args = cfg.server.args;
  std::string line;
  for (const auto& a : server::template_argv(options, spec, 0)) line += (line.empty() ? "" : " ") + a;
  say("launch (%s, cell %s): %s\n", cfg.server.command.server.c_str(), cell.label().c_str(), line.c_str());
}

/// A resume's plan: the items of the planned cells the run has recorded ok (kept, not run again) and
/// those left to run; what a grown config adds.
void print_resume(const std::string& run_dir, const std::vector<sweep::Cell>& cells,
                  const std::vector<std::unique_ptr<probe::Probe>>& probes, const sweep::RunOptions& ropts) {
  std::error_code ec;
  if (!std::filesystem::is_directory(run_dir, ec)) {
    say("resume %s: no such run directory (the run would fail to open it)\n", run_dir.c_str());
    return;
  }
  auto records = sweep::RunStore::read_records(run_dir);
  std::set<std::string> ok;
  if (records)
    for (const auto& r : *records)
      if (r.ok()) ok.insert(sweep::triple_key_of(r));
  std::size_t planned = 0, kept = 0;
  for (const auto& cell : cells)
    for (const auto& p : probes) {
      if (!ropts.filter.matches_probe(p->name())) continue;
      for (const auto& item : p->items()) {
        ++planned;
        if (ok.contains(sweep::triple_key(cell.key(), p->name(), item.key))) ++kept;
      }
    }
  say("resume %s: %zu of these %zu items are recorded ok and kept; %zu to run\n", run_dir.c_str(), kept,
              planned, planned - kept);
  if (!ropts.grown.is_object()) return;
  say("the config grows the run (config hash %s → %s):\n", ropts.grown.value("from_config_hash", "").c_str(),
              ropts.grown.value("to_config_hash", "").c_str());
  for (const auto& a : ropts.grown.value("added", nlohmann::json::array()))
    say("  + %s\n", a.get<std::string>().c_str());
}

/// On a host with AMX: whether the llama.cpp server the run would launch can take llama.cpp's AMX path
/// (process/known_crash), with the remedies when it can; nothing on other hosts or other servers.
void print_host(server::Backend& backend) {
  if (!process::host_has_amx()) return;
  const nlohmann::json d = backend.describe();
  const std::string kind = d.value("backend", "");
  std::filesystem::path binary = d.value("binary", "");
  if (binary.empty()) return;
  // Ollama ≥ 0.30 launches the llama-server it finds in <bin>/../lib/ollama/.
  if (kind == "ollama") binary = binary.parent_path().parent_path() / "lib" / "ollama" / "llama-server";
  else if (kind != "llama-server") return;
  say("%s\n", process::amx_host_note(true, binary, process::binary_has_amx(binary)).c_str());
}

}  // namespace

std::vector<std::string> time_lines(const config::Config& cfg,
                                    const std::vector<std::unique_ptr<probe::Probe>>& probes,
                                    const sweep::RunOptions& ropts) {
  auto cells = sweep::plan_cells(cfg, ropts.shard, sweep::reference_support(probes, cfg));
  sweep::select_cells(cells, ropts.filter);
  std::vector<sweep::PlannedProbe> planned;
  for (const auto& p : probes)
    if (ropts.filter.matches_probe(p->name())) planned.push_back({p->name(), p->items().size()});
  std::vector<std::string> out;
  for (const auto& m : cfg.models) {
    const auto n = static_cast<std::size_t>(std::ranges::count(cells, m.name, &sweep::Cell::model));
    if (n == 0) continue;
    const auto rates = sweep::previous_rates(runs_directory(cfg), m.path);
    if (!rates) continue;
    out.push_back((cfg.models.size() > 1 ? m.name + ": " : std::string()) + time_line_of(cfg, *rates, n, planned, ropts));
  }
  return out;
}

std::filesystem::path measure_directory() {
  std::string name = (std::filesystem::temp_directory_path() / "kvsweep-measure-XXXXXX").string();
  if (::mkdtemp(name.data()) == nullptr)
    throw core::FatalError("--measure: cannot create a directory " + name + ": " + std::strerror(errno));
  return name;
}

std::filesystem::path runs_directory(const config::Config& cfg) {
  std::filesystem::path base(cfg.output_dir);
  return base.is_relative() ? std::filesystem::current_path() / base : base;
}

int print_dry_run(const config::Config& cfg, std::vector<std::unique_ptr<probe::Probe>>& probes,
                  const sweep::RunOptions& ropts, server::Backend& backend, const std::string& resumed_dir,
                  bool measure) {
  auto cells = sweep::plan_cells(cfg, ropts.shard, sweep::reference_support(probes, cfg));
  sweep::select_cells(cells, ropts.filter);
  say("plan for %s (config hash %s)", cfg.name.c_str(), config::config_hash(cfg).c_str());
  if (ropts.shard) say(", shard %d/%d", ropts.shard->index, ropts.shard->count);
  say("\ncells (%zu, in run order):\n", cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i)
    say("  %2zu. %s%s\n", i + 1, cells[i].label().c_str(),
                cells[i].support        ? "  (reference, support: owned by another shard, run for comparisons)"
                : cells[i].is_reference ? "  (reference)"
                                        : "");
  const int n_ctx = sweep::planned_context_size(cfg, probes);
  say("context: %s %d for every cell (%s)\n", cfg.server.backend == "command" ? "{ctx} =" : "-c", n_ctx,
              cfg.server.ctx > 0 ? "server.ctx" : "the probes' estimate of their prompts, at least 4096; server.ctx sets it");
  if (cfg.server.backend == "command" && !cells.empty()) print_launch(cfg, cells.front(), n_ctx);
  say("probes:\n");
  std::size_t per_cell = 0;
  std::vector<sweep::PlannedProbe> planned;
  for (std::size_t index = 0; index < probes.size(); ++index) {
    const auto& p = probes[index];
    if (!ropts.filter.matches_probe(p->name())) continue;
    auto items = p->items();
    per_cell += items.size();
    planned.push_back({p->name(), items.size()});
    say("  %s (%s): %zu items per cell:", p->name().c_str(), p->kind().c_str(), items.size());
    for (std::size_t i = 0; i < items.size() && i < 8; ++i) say(" %s", items[i].key.c_str());
    say("%s\n", items.size() > 8 ? " …" : "");
    if (const auto* recall = dynamic_cast<const probe::RecallProbe*>(p.get())) print_corpus(*recall, cfg, backend, n_ctx);
    if (p->kind() == "longkl") print_longkl_cost(items, cfg, cells, n_ctx);
    const nlohmann::json& pc = index < cfg.probes.size() ? cfg.probes[index] : nlohmann::json();
    print_power(*p, items.size(), pc.is_object() ? pc.value("gate", nlohmann::json()) : nlohmann::json());
  }
  say("total: %zu items\n", per_cell * cells.size());
  if (cfg.sweep.adaptive.enabled) {
    const auto& a = cfg.sweep.adaptive;
    say("adaptive: at most that many; each cell but the reference stops once its verdicts are settled "
                "(from %d items, alpha %g, futility %g, item order seed %llu)\n",
                a.min_items, a.alpha, a.futility, static_cast<unsigned long long>(a.seed));
  }
  print_time(cfg, probes, cells, planned, ropts, backend, measure);
  if (measure) print_twins_operating_points(cfg, probes, backend);
  print_host(backend);
  if (ropts.parallel_cells > 1 || !ropts.slot_env.empty()) {
    say("slots: %d cell(s) at once (each model's reference cell first)\n", ropts.parallel_cells);
    for (int slot = 0; slot < ropts.parallel_cells; ++slot) {
      say("  slot %d:", slot);
      for (const auto& [k, v] : config::expand_slot_env(ropts.slot_env, slot))
        say(" %s=%s", k.c_str(), config::is_secret_env_name(k) ? "<redacted>" : v.c_str());
      say("\n");
    }
  }
  if (!resumed_dir.empty()) print_resume(resumed_dir, cells, probes, ropts);
  // Ctrl-C during --measure (or the token count's server) stops what it ran: the plan printed is not
  // whole, and a script must not read it as one.
  if (cancel_flag().load()) {
    std::fprintf(stderr, "kvsweep: interrupted: the dry run's plan above is incomplete\n");
    return interrupted_exit_code();
  }
  return core::exit_code::ok;
}

}  // namespace kvsweep::cli
