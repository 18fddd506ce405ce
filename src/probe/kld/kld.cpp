#include "kvsweep/probe/kld/kld.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "kvsweep/core/host.hpp"
#include "kvsweep/core/no_follow.hpp"
#include "kvsweep/corpus/english.hpp"
#include "kvsweep/config/keys.hpp"
#include "kvsweep/corpus/random_bodies.hpp"
#include "kvsweep/probe/corpus_config.hpp"
#include "kvsweep/probe/input_file.hpp"
#include "kvsweep/process/known_crash.hpp"
#include "kvsweep/probe/tool_args.hpp"
#include "kvsweep/probe/tool_text.hpp"

namespace kvsweep::probe {

namespace {

using nlohmann::json;

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string join(const std::vector<std::string>& argv) { return command_line(argv); }

/// Where the probe's corpus comes from: a file, the random-bodies generator, or (neither given)
/// the built-in English text.
using CorpusSpec = CorpusConfig;

/// The noise floor's micro-batch: 8× smaller than the scoring run's (which is the whole chunk, ctx),
/// at least 8 — the same logits computed in other batch shapes, so other rounding.
int noise_ubatch(int ctx) { return std::max(8, ctx / 8); }

class KldProbe final : public Probe {
 public:
  KldProbe(std::string name, CorpusSpec corpus, int ctx, int chunks, int documents, std::string binary,
           std::vector<std::string> args, int timeout_s, std::shared_ptr<ToolRunner> runner)
      : m_name(std::move(name)), m_corpus(std::move(corpus)), m_ctx(ctx), m_chunks(chunks), m_documents(documents),
        m_binary(std::move(binary)), m_args(std::move(args)), m_timeout_s(timeout_s), m_runner(std::move(runner)) {}

  std::string kind() const override { return "kld"; }
  std::string name() const override { return m_name; }
  bool compares_with_reference() const override { return true; }  // scored against the reference's logits
  bool runs_tool() const override { return true; }
  /// llama.cpp's own tool on the model file, beside the cell's llama-server.
  std::vector<server::Need> needs() const override { return {{server::Capability::llama_cpp_tools, ""}}; }
  std::vector<InputFile> inputs() const override {
    return m_corpus.input ? std::vector<InputFile>{*m_corpus.input} : std::vector<InputFile>{};
  }

  std::vector<Item> items() const override {
    json spec = {{"ctx", m_ctx}, {"chunks", m_chunks}, {"corpus", m_corpus.spec()}};
    if (m_documents == 1) return {{"kld", spec}};
    // The corpus cut into documents, each scored on its own: items whose spread the verdicts can use.
    std::vector<Item> out;
    for (int i = 0; i < m_documents; ++i) {
      json s = spec;
      s["document"] = i;
      s["documents"] = m_documents;
      out.push_back({"d" + std::to_string(i), std::move(s)});
    }
    return out;
  }

  std::vector<MetricSpec> metrics() const override {
    // Distances from the reference's distribution; the two the field ranks K/V pairs by (mean KLD and its
    // 99.9th percentile) gate on their thresholds (metric_spec.hpp: kMeanKlThreshold, kKldP999Threshold).
    std::vector<MetricSpec> out = {distance("mean_kld", Direction::lower_better, MetricKind::continuous,
                                            kMeanKlThreshold, kMeanKlWhy),
                                   diagnostic("mean_kld_se", MetricKind::continuous),
                                   distance("same_top_p", Direction::higher_better, MetricKind::continuous),
                                   diagnostic("same_top_p_se", MetricKind::continuous),
                                   distance("ppl_ratio", Direction::lower_better, MetricKind::continuous),
                                   diagnostic("ppl_ratio_se", MetricKind::continuous),
                                   distance("rms_dp", Direction::lower_better, MetricKind::continuous),
                                   diagnostic("rms_dp_se", MetricKind::continuous),
                                   diagnostic("ppl_q", MetricKind::continuous),
                                   diagnostic("ppl_base", MetricKind::continuous),
                                   // The noise floor, on the reference cell only (null elsewhere): the
                                   // reference against its own logits with another micro-batch.
                                   diagnostic("noise_mean_kld", MetricKind::continuous),
                                   diagnostic("noise_kld_p999", MetricKind::continuous)};
    // The tail (KldSummary::tail): the 99.9th percentile of the per-token KLD is how the field now
    // ranks K/V pairs, so it gates on its threshold; the rest is recorded for the report and for reading.
    for (const auto& name : kld_tail_names())
      out.push_back(name == "kld_p999" ? distance(name, Direction::lower_better, MetricKind::continuous,
                                                  kKldP999Threshold, kKldP999Why)
                                       : diagnostic(name, MetricKind::continuous));
    return out;
  }
  bool deterministic() const override { return true; }  // llama-perplexity over a fixed text

  // llama-perplexity loads the model itself; the runner has stopped the cell's llama-server by now
  // (runs_tool), so the model is in memory once.
  core::Expected<ItemResult> run(const Item& item, Context& ctx) override {
    const CellInfo& cell = ctx.cell;
    auto binary = resolve_binary();
    if (!binary) return std::unexpected(binary.error());
    const std::filesystem::path dir = cell.run_dir / "kld";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return core::fail(core::ErrorKind::io, "cannot create " + dir.string() + ": " + ec.message());
    const std::optional<int> document =
        item.spec.contains("document") ? std::optional<int>(item.spec["document"].get<int>()) : std::nullopt;
    const std::string suffix = (m_name == "kld" ? "" : "-" + safe_name(m_name)) +
                               (document ? "-d" + std::to_string(*document) : std::string());
    // One base per model and variant: each variant's reference cell writes its own.
    const std::string group = safe_name(cell.model) + (cell.variant.empty() ? "" : "-" + safe_name(cell.variant));
    const std::filesystem::path base = dir / (group + suffix + "-base.kld");
    const std::filesystem::path log = dir / (cell.id() + suffix + ".log");
    const std::vector<std::string> common = [&] {
      auto a = perplexity_args(cell.server_args);
      a.insert(a.end(), m_args.begin(), m_args.end());
      return a;
    }();

    ItemResult out;
    out.response = json::object();
    if (cell.is_reference) {
      auto corpus = corpus_path(dir, document);
      if (!corpus) return std::unexpected(corpus.error());
      std::vector<std::string> argv = {*binary, "-m", cell.model_path, "-f", corpus->string(), "-c",
                                       std::to_string(m_ctx), "--chunks", std::to_string(m_chunks),
                                       "--kl-divergence-base", base.string(), "-ctk", cell.type_k, "-ctv", cell.type_v};
      argv.insert(argv.end(), common.begin(), common.end());
      core::Expected<BasePerplexity> ppl = run_parsed(argv, cell.env, log, parse_base_output);
      if (!ppl) {
        // A truncated logits file must not be mistaken for a good one by the other cells.
        std::filesystem::remove(base, ec);
        return std::unexpected(ppl.error());
      }
      out.response["base"] = {{"command", join(argv)}, {"file", base.string()},
                              {"bytes", std::filesystem::file_size(base, ec)}, {"ppl", ppl->ppl},
                              {"ppl_se", finite_or_null(ppl->ppl_se)}};
      // The reference is then scored against its own logits like every other cell: this gives
      // the floor of the method (KLD ≈ 0, same top p 100 %; the PPL ratio need not be 1, as the
      // base file stores log-probabilities in 16 bits).
    } else if (!std::filesystem::exists(base)) {
      return core::fail(core::ErrorKind::invalid, "no base logits at " + base.string() +
                                                      ": the reference cell's kld item did not produce them (did it fail?)");
    }
    std::vector<std::string> argv = {*binary, "-m", cell.model_path, "-c", std::to_string(m_ctx),
                                     "--kl-divergence-base", base.string(), "--kl-divergence",
                                     "-ctk", cell.type_k, "-ctv", cell.type_v};
    argv.insert(argv.end(), common.begin(), common.end());
    auto summary = run_parsed(argv, cell.env, log, parse_kld_output);
    if (!summary) return std::unexpected(summary.error());
    out.response["command"] = join(argv);
    out.response["log"] = log.string();
    out.response["source"] = summary->source;
    out.response["output"] = summary->text;
    out.metrics = {{"mean_kld", summary->mean_kld},
                   {"mean_kld_se", finite_or_null(summary->mean_kld_se)},
                   {"same_top_p", summary->same_top_p},
                   {"same_top_p_se", finite_or_null(summary->same_top_p_se)},
                   {"ppl_ratio", summary->ppl_ratio},
                   {"ppl_ratio_se", finite_or_null(summary->ppl_ratio_se)},
                   {"rms_dp", summary->rms_dp},
                   {"rms_dp_se", finite_or_null(summary->rms_dp_se)},
                   {"ppl_q", summary->ppl_q},
                   {"ppl_base", finite_or_null(summary->ppl_base)}};
    // Without the summary block (fewer than 100 tokens scored) the tool prints no distribution.
    for (const auto& name : kld_tail_names())
      out.metrics[name] = summary->tail.contains(name) ? json(summary->tail.at(name)) : json(nullptr);
    out.metrics["noise_mean_kld"] = out.metrics["noise_kld_p999"] = nullptr;
    if (cell.is_reference) {
      // The noise floor: what a change of batch shape alone does to the reference's own distribution
      // (llama.cpp's kernels round differently by batch size: a CPU build too, measured in README
      // Metrics). A cell whose distance sits at this floor is indistinguishable from it.
      std::vector<std::string> noise = argv;
      noise.insert(noise.end(), {"-ub", std::to_string(noise_ubatch(m_ctx))});
      const std::filesystem::path noise_log = dir / (cell.id() + suffix + "-noise.log");
      auto floor = run_parsed(noise, cell.env, noise_log, parse_kld_output);
      if (!floor) return std::unexpected(floor.error());
      out.response["noise"] = {{"command", join(noise)}, {"log", noise_log.string()}, {"output", floor->text}};
      out.metrics["noise_mean_kld"] = floor->mean_kld;
      out.metrics["noise_kld_p999"] = floor->tail.contains("kld_p999") ? json(floor->tail.at("kld_p999")) : json(nullptr);
    }
    return out;
  }

 private:
  /// As the server binary: a path as given, else $KVSWEEP_LLAMA_BIN/<name>, else PATH.
  core::Expected<std::string> resolve_binary() const {
    std::string found = process::find_llama_tool(m_binary);
    if (found.empty())
      return core::fail(core::ErrorKind::process, "'" + m_binary + "' not found: set the probe's \"binary\", put it on PATH, "
                                                  "or set KVSWEEP_LLAMA_BIN=$(scripts/llama-cpp)");
    return found;
  }

  /// The text the reference's base run reads: the user's file itself, else the corpus written into the
  /// run directory (regenerated on every reference run; the same knobs always give the same bytes);
  /// with documents, the item's document of it.
  core::Expected<std::filesystem::path> corpus_path(const std::filesystem::path& dir, std::optional<int> document) const {
    if (m_corpus.input && !document) return m_corpus.file;
    std::string text = m_corpus.text();
    std::string name = safe_name(m_name) + "-corpus.txt";
    if (document) {
      const auto parts = corpus::split_documents(text, static_cast<std::size_t>(m_documents));
      if (parts.size() < static_cast<std::size_t>(m_documents) || *document < 0 || *document >= m_documents)
        return core::fail(core::ErrorKind::invalid, "the corpus has too few lines to cut into " +
                                                        std::to_string(m_documents) + " documents (use fewer)");
      text = parts[static_cast<std::size_t>(*document)];
      name = safe_name(m_name) + "-d" + std::to_string(*document) + ".txt";
    }
    const std::filesystem::path p = dir / name;
    if (!core::write_file_no_follow(p, text))
      return core::fail(core::ErrorKind::io, core::open_failure(p));
    return p;
  }

  /// Runs llama-perplexity and parses its output; an exit 0 whose output lacks the lines parsed is run
  /// again (kParseAttempts in all). llama.cpp's logger writes from a thread of its own and is never
  /// flushed at exit (common/log.cpp, common_log_main: "logs may be lost if not flushed before the
  /// program exits", ggml-org/llama.cpp#22142): on a loaded machine the last lines — "Final estimate",
  /// the KLD summary — can be missing although the tool finished. Failures of the tool itself are not
  /// retried.
  template <class Parse>
  auto run_parsed(const std::vector<std::string>& argv, const ToolRunner::Env& env, const std::filesystem::path& log,
                  Parse parse) const -> decltype(parse(std::string())) {
    for (int attempt = 1;; ++attempt) {
      auto ran = run_tool(argv, env, log);
      if (!ran) return std::unexpected(ran.error());
      auto parsed = parse(ran->output);
      if (parsed || parsed.error().kind != core::ErrorKind::parse) return parsed;
      if (attempt == kParseAttempts) {
        parsed.error().message += " (" + std::to_string(kParseAttempts) +
                                  " runs, each exit 0: llama.cpp's logger can lose its last lines at exit)";
        return parsed;
      }
    }
  }

  static constexpr int kParseAttempts = 3;

  core::Expected<ToolRun> run_tool(const std::vector<std::string>& argv, const ToolRunner::Env& env,
                                   const std::filesystem::path& log) const {
    auto ran = m_runner->run(argv, env, log, std::chrono::seconds(m_timeout_s));
    if (!ran) return ran;
    if (ran->status.signaled || ran->status.code != 0) {
      std::string known;
      if (auto crash = process::known_crash(process::LlamaProgram::perplexity, ran->output, ran->status.signaled,
                                            process::host_has_amx()))
        known = " — " + *crash;
      return core::fail(core::ErrorKind::process, "llama-perplexity " + ran->status.describe() + known + " (" +
                                                      join(argv) + "); last lines:" + output_tail(ran->output));
    }
    return ran;
  }

  std::string m_name;
  CorpusSpec m_corpus;
  int m_ctx;
  int m_chunks;
  int m_documents;
  std::string m_binary;
  std::vector<std::string> m_args;
  int m_timeout_s;
  std::shared_ptr<ToolRunner> m_runner;
};

}  // namespace

std::unique_ptr<Probe> make_kld_probe(const json& cfg, const ConfigSource& site) {
  return make_kld_probe_with(cfg, site, process_tool_runner());
}

std::unique_ptr<Probe> make_kld_probe_with(const json& cfg, const ConfigSource& site, std::shared_ptr<ToolRunner> runner) {
  const config::Site& s = site.site;
  config::check_keys(cfg, {"kind", "name", "corpus", "ctx", "chunks", "documents", "binary", "args", "timeout_s"}, s);
  // kld's own default is 20 functions (recall keeps the generator's 200); no corpus: the built-in English text.
  corpus::RandomBodiesOptions defaults;
  defaults.functions = 20;
  CorpusSpec corpus = read_corpus_config(cfg, site, defaults, CorpusDefault::english);
  const long long ctx = config::get_int_in(cfg, "ctx", 512, 16, 1 << 20, s);
  const long long chunks = config::get_int(cfg, "chunks", 32, s);
  if (chunks < 1 && chunks != -1)
    s.child("chunks").fail("must be >= 1 (or -1 for the whole corpus), got " + std::to_string(chunks));
  std::string binary = config::get_string(cfg, "binary", "llama-perplexity", s);
  if (binary.empty()) s.child("binary").fail("must not be empty");
  const long long timeout = config::get_int(cfg, "timeout_s", 7200, s);
  if (timeout < 1) s.child("timeout_s").fail("must be >= 1");
  const long long documents = config::get_int_in(cfg, "documents", 1, 1, 256, s);
  return std::make_unique<KldProbe>(config::get_string(cfg, "name", "kld", s), std::move(corpus), static_cast<int>(ctx),
                                    static_cast<int>(chunks), static_cast<int>(documents), std::move(binary),
                                    config::get_strings(cfg, "args", {}, s),
                                    static_cast<int>(timeout), std::move(runner));
}

}  // namespace kvsweep::probe
