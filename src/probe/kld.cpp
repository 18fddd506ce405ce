#include "kvsweep/probe/kld.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/corpus/random_bodies.hpp"

namespace kvsweep::probe {

namespace {

using nlohmann::json;

constexpr std::string_view kPlusMinus = "\xC2\xB1";  // ±, as llama-perplexity prints it

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    pos = nl + 1;
  }
  return out;
}

/// Whitespace trimmed and runs of spaces collapsed ("Mean    KLD" → "Mean KLD").
std::string collapse(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

/// The last `n` non-empty lines of `text`, for error messages.
std::string tail(std::string_view text, std::size_t n = 12) {
  auto lines = split_lines(text);
  std::vector<std::string_view> kept;
  for (auto it = lines.rbegin(); it != lines.rend() && kept.size() < n; ++it)
    if (!collapse(*it).empty()) kept.push_back(*it);
  std::string out;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) out += "\n  " + std::string(*it);
  return out.empty() ? " (no output)" : out;
}

/// Reads a number at `pos` (after spaces); strtod also takes llama.cpp's "nan" / "-nan" / "inf".
std::optional<double> number(std::string_view s, std::size_t& pos) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  std::string copy(s.substr(pos, 48));
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str()) return std::nullopt;
  pos += static_cast<std::size_t>(end - copy.c_str());
  return v;
}

bool skip(std::string_view s, std::size_t& pos, std::string_view token) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  if (s.substr(pos, token.size()) != token) return false;
  pos += token.size();
  return true;
}

/// "value ± uncertainty" (an optional % after either) starting at `pos`.
std::optional<std::pair<double, double>> value_pm(std::string_view s, std::size_t& pos) {
  auto v = number(s, pos);
  if (!v) return std::nullopt;
  skip(s, pos, "%");
  if (!skip(s, pos, kPlusMinus) && !skip(s, pos, "+/-")) return std::nullopt;
  auto u = number(s, pos);
  if (!u) return std::nullopt;
  skip(s, pos, "%");
  return std::pair{*v, *u};
}

/// The labelled summary lines ("Mean    KLD:   0.248995 ±   0.010565"), by collapsed label.
/// A label matches whole (or after a log prefix such as "0.01.223.632 I ").
std::map<std::string, std::pair<std::pair<double, double>, std::string>> labelled(std::string_view text,
                                                                                  const std::vector<std::string>& labels) {
  std::map<std::string, std::pair<std::pair<double, double>, std::string>> out;
  for (std::string_view line : split_lines(text)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string head = collapse(line.substr(0, colon));
    for (const auto& label : labels) {
      if (head != label && !head.ends_with(" " + label)) continue;
      std::size_t pos = colon + 1;
      if (auto v = value_pm(line, pos)) out[label] = {*v, std::string(line)};
    }
  }
  return out;
}

/// The last cumulative chunk row under the "chunk  PPL  ln(PPL(Q)/PPL(base))  KL Divergence …" header.
std::optional<std::pair<std::vector<std::pair<double, double>>, std::string>> last_chunk_row(std::string_view text) {
  std::optional<std::pair<std::vector<std::pair<double, double>>, std::string>> last;
  bool in_table = false;
  for (std::string_view line : split_lines(text)) {
    if (line.find("KL Divergence") != std::string_view::npos && line.find("Same top p") != std::string_view::npos) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    std::size_t pos = 0;
    auto chunk = number(line, pos);
    if (!chunk) continue;
    std::vector<std::pair<double, double>> cols;
    while (cols.size() < 5) {
      auto v = value_pm(line, pos);
      if (!v) break;
      cols.push_back(*v);
    }
    if (cols.size() == 5) last = {{cols, std::string(line)}};
  }
  return last;
}

/// The "you need at least N tokens" complaint (and the line after it), if present.
std::optional<std::string> too_short(std::string_view text) {
  auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t at = lines[i].find("you need at least");
    if (at == std::string_view::npos) continue;
    std::string msg(lines[i].substr(at));
    if (i + 1 < lines.size()) {
      const std::size_t more = lines[i + 1].find("tokenizes to only");
      if (more != std::string_view::npos) msg += "; " + std::string(lines[i + 1].substr(lines[i + 1].find("the data file")));
    }
    return msg;
  }
  return std::nullopt;
}

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string safe_name(std::string_view s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  return out;
}

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

class ProcessToolRunner final : public ToolRunner {
 public:
  core::Expected<ToolRun> run(const std::vector<std::string>& argv, const Env& env, const std::filesystem::path& log,
                              std::chrono::seconds timeout) override {
    std::error_code ec;
    std::filesystem::create_directories(log.parent_path(), ec);
    const auto size = std::filesystem::file_size(log, ec);
    const std::uintmax_t start = ec ? 0 : size;
    process::LaunchSpec spec;
    spec.argv = argv;
    spec.env = env;
    spec.log_path = log;
    auto child = process::Child::spawn(spec);
    if (!child) return std::unexpected(child.error());
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::optional<process::ExitStatus> status;
    while (!(status = child->poll())) {
      if (std::chrono::steady_clock::now() > deadline) {
        child->stop(std::chrono::seconds(5));
        // A process error, not a timeout: a timeout would tell the runner the server is wedged.
        return core::fail(core::ErrorKind::process, argv.front() + " ran past " + std::to_string(timeout.count()) +
                                                        " s (timeout_s) and was killed; its output is in " + log.string());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::ifstream in(log, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(start));
    std::ostringstream text;
    text << in.rdbuf();
    return ToolRun{*status, text.str()};
  }
};

/// Where the probe's corpus comes from: a file, or the random-bodies generator.
struct CorpusSpec {
  std::filesystem::path file;
  std::optional<corpus::RandomBodiesOptions> generated;
};

class KldProbe final : public Probe {
 public:
  KldProbe(std::string name, CorpusSpec corpus, int ctx, int chunks, std::string binary, std::vector<std::string> args,
           int timeout_s, std::shared_ptr<ToolRunner> runner)
      : m_name(std::move(name)), m_corpus(std::move(corpus)), m_ctx(ctx), m_chunks(chunks),
        m_binary(std::move(binary)), m_args(std::move(args)), m_timeout_s(timeout_s), m_runner(std::move(runner)) {}

  std::string kind() const override { return "kld"; }
  std::string name() const override { return m_name; }
  bool compares_with_reference() const override { return true; }  // scored against the reference's logits

  std::vector<Item> items() const override {
    json spec = {{"ctx", m_ctx}, {"chunks", m_chunks}};
    if (m_corpus.generated) {
      const auto& g = *m_corpus.generated;
      spec["corpus"] = {{"random_bodies", {{"functions", g.functions}, {"value_len", g.value_len}, {"seed", g.seed}}}};
    } else {
      spec["corpus"] = m_corpus.file.string();
    }
    return {{"kld", spec}};
  }

  std::vector<MetricSpec> metrics() const override {
    return {quality("mean_kld", Direction::lower_better, MetricKind::continuous),
            diagnostic("mean_kld_se", MetricKind::continuous),
            quality("same_top_p", Direction::higher_better, MetricKind::continuous),
            diagnostic("same_top_p_se", MetricKind::continuous),
            quality("ppl_ratio", Direction::lower_better, MetricKind::continuous),
            diagnostic("ppl_ratio_se", MetricKind::continuous),
            quality("rms_dp", Direction::lower_better, MetricKind::continuous),
            diagnostic("rms_dp_se", MetricKind::continuous),
            diagnostic("ppl_q", MetricKind::continuous),
            diagnostic("ppl_base", MetricKind::continuous)};
  }
  bool deterministic() const override { return true; }  // llama-perplexity over a fixed text

  // llama-perplexity loads the model itself; the llama-server the runner started for this cell
  // stays idle meanwhile (it costs memory, not time, and keeps the runner's cell lifecycle uniform).
  core::Expected<ItemResult> run(const Item&, Context& ctx) override {
    const CellInfo& cell = ctx.cell;
    auto binary = resolve_binary();
    if (!binary) return std::unexpected(binary.error());
    const std::filesystem::path dir = cell.run_dir / "kld";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return core::fail(core::ErrorKind::io, "cannot create " + dir.string() + ": " + ec.message());
    const std::string suffix = m_name == "kld" ? "" : "-" + safe_name(m_name);
    const std::filesystem::path base = dir / (safe_name(cell.model) + suffix + "-base.kld");
    const std::filesystem::path log =
        dir / (safe_name(cell.model) + "-" + cell.type_k + "-" + cell.type_v + suffix + ".log");
    const std::vector<std::string> common = [&] {
      auto a = perplexity_args(cell.server_args);
      a.insert(a.end(), m_args.begin(), m_args.end());
      return a;
    }();

    ItemResult out;
    out.response = json::object();
    if (cell.is_reference) {
      auto corpus = corpus_path(dir);
      if (!corpus) return std::unexpected(corpus.error());
      std::vector<std::string> argv = {*binary, "-m", cell.model_path, "-f", corpus->string(), "-c",
                                       std::to_string(m_ctx), "--chunks", std::to_string(m_chunks),
                                       "--kl-divergence-base", base.string(), "-ctk", cell.type_k, "-ctv", cell.type_v};
      argv.insert(argv.end(), common.begin(), common.end());
      auto ran = run_tool(argv, cell.env, log);
      core::Expected<BasePerplexity> ppl = ran ? parse_base_output(ran->output) : std::unexpected(ran.error());
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
    auto ran = run_tool(argv, cell.env, log);
    if (!ran) return std::unexpected(ran.error());
    auto summary = parse_kld_output(ran->output);
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
    return out;
  }

 private:
  /// As the server binary: a path as given, else $KVSWEEP_LLAMA_BIN/<name>, else PATH.
  core::Expected<std::string> resolve_binary() const {
    if (m_binary.find('/') != std::string::npos) return m_binary;
    if (const char* dir = std::getenv("KVSWEEP_LLAMA_BIN"); dir && *dir) {
      const std::filesystem::path p = std::filesystem::path(dir) / m_binary;
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
    std::string found = process::which(m_binary);
    if (found.empty())
      return core::fail(core::ErrorKind::process, "'" + m_binary + "' not found: set the probe's \"binary\", put it on PATH, "
                                                  "or set KVSWEEP_LLAMA_BIN=$(scripts/llama-cpp)");
    return found;
  }

  core::Expected<std::filesystem::path> corpus_path(const std::filesystem::path& dir) const {
    if (!m_corpus.generated) return m_corpus.file;
    // Regenerated on every reference run; the same knobs always give the same bytes.
    const std::filesystem::path p = dir / (safe_name(m_name) + "-corpus.txt");
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << corpus::generate_random_bodies(*m_corpus.generated);
    if (!f.flush()) return core::fail(core::ErrorKind::io, "cannot write " + p.string());
    return p;
  }

  core::Expected<ToolRun> run_tool(const std::vector<std::string>& argv, const ToolRunner::Env& env,
                                   const std::filesystem::path& log) const {
    auto ran = m_runner->run(argv, env, log, std::chrono::seconds(m_timeout_s));
    if (!ran) return ran;
    if (ran->status.signaled || ran->status.code != 0)
      return core::fail(core::ErrorKind::process, "llama-perplexity " + ran->status.describe() + " (" + join(argv) +
                                                      "); last lines:" + tail(ran->output));
    return ran;
  }

  std::string m_name;
  CorpusSpec m_corpus;
  int m_ctx;
  int m_chunks;
  std::string m_binary;
  std::vector<std::string> m_args;
  int m_timeout_s;
  std::shared_ptr<ToolRunner> m_runner;
};

}  // namespace

core::Expected<KldSummary> parse_kld_output(std::string_view output) {
  if (auto msg = too_short(output))
    return core::fail(core::ErrorKind::invalid, "the corpus is too short for this ctx: llama-perplexity: " + *msg +
                                                    " (use a longer corpus or a smaller ctx)");
  const std::vector<std::string> labels = {"Mean PPL(Q)",  "Mean PPL(base)", "Mean PPL(Q)/PPL(base)",
                                           "Mean KLD",     "RMS Δp",         "Same top p"};
  auto found = labelled(output, labels);
  KldSummary s;
  if (!found.empty()) {
    std::string missing;
    for (const auto& l : labels)
      if (!found.contains(l)) missing += (missing.empty() ? "'" : ", '") + l + ":'";
    if (!missing.empty())
      return core::fail(core::ErrorKind::parse, "llama-perplexity's summary has no " + missing + " line; last lines:" + tail(output));
    std::tie(s.ppl_q, s.ppl_q_se) = found["Mean PPL(Q)"].first;
    std::tie(s.ppl_base, s.ppl_base_se) = found["Mean PPL(base)"].first;
    std::tie(s.ppl_ratio, s.ppl_ratio_se) = found["Mean PPL(Q)/PPL(base)"].first;
    std::tie(s.mean_kld, s.mean_kld_se) = found["Mean KLD"].first;
    std::tie(s.rms_dp, s.rms_dp_se) = found["RMS Δp"].first;
    std::tie(s.same_top_p, s.same_top_p_se) = found["Same top p"].first;
    s.source = "summary";
    for (const auto& l : labels) s.text += found[l].second + "\n";
  } else if (auto row = last_chunk_row(output)) {
    // Columns: PPL(Q), ln(PPL(Q)/PPL(base)), KLD, RMS Δp %, same top p %; all cumulative.
    const auto& c = row->first;
    std::tie(s.ppl_q, s.ppl_q_se) = c[0];
    s.ppl_ratio = std::exp(c[1].first);
    s.ppl_ratio_se = s.ppl_ratio * c[1].second;  // d exp(x) = exp(x) dx, as the tool's own summary
    s.ppl_base = s.ppl_q / s.ppl_ratio;
    s.ppl_base_se = std::nan("");
    std::tie(s.mean_kld, s.mean_kld_se) = c[2];
    std::tie(s.rms_dp, s.rms_dp_se) = c[3];
    std::tie(s.same_top_p, s.same_top_p_se) = c[4];
    s.source = "chunk_row";
    s.text = row->second + "\n";
  } else {
    return core::fail(core::ErrorKind::parse,
                      "llama-perplexity's output has no 'Mean    KLD:' summary and no chunk rows; last lines:" + tail(output));
  }
  for (double v : {s.mean_kld, s.same_top_p, s.ppl_ratio, s.rms_dp, s.ppl_q})
    if (!std::isfinite(v))
      return core::fail(core::ErrorKind::parse, "llama-perplexity printed a non-finite statistic:\n" + s.text);
  return s;
}

core::Expected<BasePerplexity> parse_base_output(std::string_view output) {
  if (auto msg = too_short(output))
    return core::fail(core::ErrorKind::invalid, "the corpus is too short for this ctx: llama-perplexity: " + *msg +
                                                    " (use a longer corpus or a smaller ctx)");
  constexpr std::string_view label = "Final estimate: PPL =";
  for (std::string_view line : split_lines(output)) {
    const std::size_t at = line.find(label);
    if (at == std::string_view::npos) continue;
    std::size_t pos = at + label.size();
    if (auto v = value_pm(line, pos)) return BasePerplexity{v->first, v->second};
  }
  return core::fail(core::ErrorKind::parse,
                    "llama-perplexity --kl-divergence-base printed no 'Final estimate: PPL = X +/- Y'; last lines:" +
                        tail(output));
}

std::vector<std::string> perplexity_args(const std::vector<std::string>& server_args) {
  static const std::vector<std::string> with_value = {
      "-t",   "--threads",      "-tb", "--threads-batch", "-b",    "--batch-size", "-ub",   "--ubatch-size",
      "-fa",  "--flash-attn",   "-ngl", "--gpu-layers",   "--n-gpu-layers", "-sm", "--split-mode", "-ts",
      "--tensor-split", "-mg",  "--main-gpu", "-dev",     "--device", "--numa", "-ot", "--override-tensor",
      "-ncmoe", "--n-cpu-moe", "-lm",  "--load-mode"};
  static const std::vector<std::string> flags = {"-nkvo", "--no-kv-offload", "-kvo", "--kv-offload", "--swa-full",
                                                 "-nr",   "--no-repack",     "--repack", "-cmoe", "--cpu-moe",
                                                 "--no-op-offload"};
  auto in = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < server_args.size(); ++i) {
    const std::string& a = server_args[i];
    const std::string flag = a.substr(0, a.find('='));
    const bool inline_value = flag.size() != a.size();
    if (in(with_value, flag)) {
      out.push_back(a);
      if (!inline_value && i + 1 < server_args.size()) out.push_back(server_args[++i]);
    } else if (in(flags, flag)) {
      out.push_back(a);
    } else if (!inline_value && i + 1 < server_args.size() && !server_args[i + 1].starts_with("-")) {
      ++i;  // an unknown (server-only) flag's value goes with it
    }
  }
  return out;
}

std::shared_ptr<ToolRunner> process_tool_runner() { return std::make_shared<ProcessToolRunner>(); }

std::unique_ptr<Probe> make_kld_probe(const json& cfg, const ConfigSite& site) {
  return make_kld_probe_with(cfg, site, process_tool_runner());
}

std::unique_ptr<Probe> make_kld_probe_with(const json& cfg, const ConfigSite& site, std::shared_ptr<ToolRunner> runner) {
  config::Site s(site.file, site.path);
  config::check_keys(cfg, {"kind", "name", "corpus", "ctx", "chunks", "binary", "args", "timeout_s"}, s);
  CorpusSpec corpus;
  if (!cfg.contains("corpus")) s.child("corpus").fail("missing: a text file, or {\"random_bodies\": {\"functions\": N, …}}");
  const json& c = cfg["corpus"];
  if (c.is_string()) {
    corpus.file = c.get<std::string>();
    if (corpus.file.is_relative()) corpus.file = site.base_dir / corpus.file;
    if (!std::ifstream(corpus.file)) s.child("corpus").fail("cannot open " + corpus.file.string());
  } else if (c.is_object()) {
    const config::Site cs = s.child("corpus");
    config::check_keys(c, {"random_bodies"}, cs);
    const config::Site rs = cs.child("random_bodies");
    const json& r = c.contains("random_bodies") ? c["random_bodies"] : json::object();
    config::check_keys(r, {"functions", "value_len", "seed"}, rs);
    corpus::RandomBodiesOptions o;
    o.functions = static_cast<int>(config::get_int(r, "functions", 20, rs));
    o.value_len = static_cast<int>(config::get_int(r, "value_len", 24, rs));
    o.seed = static_cast<std::uint64_t>(config::get_int(r, "seed", 42, rs));
    if (o.functions < 1) rs.child("functions").fail("must be >= 1");
    if (o.value_len < 1) rs.child("value_len").fail("must be >= 1");
    corpus.generated = o;
  } else {
    s.child("corpus").fail("expected a file name or {\"random_bodies\": {…}}, got " + c.dump());
  }
  const long long ctx = config::get_int(cfg, "ctx", 512, s);
  if (ctx < 16 || ctx > 1 << 20) s.child("ctx").fail("must be between 16 and 1048576, got " + std::to_string(ctx));
  const long long chunks = config::get_int(cfg, "chunks", 32, s);
  if (chunks < 1 && chunks != -1)
    s.child("chunks").fail("must be >= 1 (or -1 for the whole corpus), got " + std::to_string(chunks));
  std::string binary = config::get_string(cfg, "binary", "llama-perplexity", s);
  if (binary.empty()) s.child("binary").fail("must not be empty");
  const long long timeout = config::get_int(cfg, "timeout_s", 7200, s);
  if (timeout < 1) s.child("timeout_s").fail("must be >= 1");
  return std::make_unique<KldProbe>(config::get_string(cfg, "name", "kld", s), std::move(corpus), static_cast<int>(ctx),
                                    static_cast<int>(chunks), std::move(binary), config::get_strings(cfg, "args", {}, s),
                                    static_cast<int>(timeout), std::move(runner));
}

}  // namespace kvsweep::probe
