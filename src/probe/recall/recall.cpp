#include "kvsweep/probe/recall/recall.hpp"

#include <algorithm>
#include <cmath>

#include <glob.h>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/corpus/sample.hpp"
#include "kvsweep/probe/random_bodies_config.hpp"
#include "kvsweep/score/recall_score.hpp"

namespace kvsweep::probe {

namespace {

const std::vector<std::string> k_keys = {"kind",  "name",         "corpus", "k",     "sample_size", "seed",
                                         "lines", "bonus_lines",  "pass_lines", "relax_indent",
                                         "align", "mode",         "max_tokens", "prefill_no_think",
                                         "bounded", "budget_factor", "budget_plus", "stop_extra_lines",
                                         "cue"};
const std::vector<std::string> k_corpus_keys = {"files", "random_bodies"};

int int_in(const nlohmann::json& obj, const std::string& key, long long fallback, long long lo, long long hi,
           const config::Site& site) {
  return static_cast<int>(config::get_int_in(obj, key, fallback, lo, hi, site));
}

bool is_pattern(const std::string& path) { return path.find_first_of("*?[") != std::string::npos; }

/// Files as listed, with each glob pattern (`*`, `?`, `[…]`; relative to base_dir) replaced by
/// its matches in sorted order, shown relative to base_dir as the pattern was written.
std::vector<std::string> expand_files(const std::vector<std::string>& files, const std::filesystem::path& base_dir,
                                      const config::Site& site) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!is_pattern(files[i])) {
      out.push_back(files[i]);
      continue;
    }
    const std::filesystem::path pattern(files[i]);
    const std::filesystem::path full = pattern.is_absolute() || base_dir.empty() ? pattern : base_dir / pattern;
    glob_t g{};
    const int rc = ::glob(full.c_str(), GLOB_ERR, nullptr, &g);
    std::vector<std::string> matches;
    if (rc == 0) {
      for (std::size_t m = 0; m < g.gl_pathc; ++m) {
        const std::filesystem::path match(g.gl_pathv[m]);
        if (!std::filesystem::is_regular_file(match)) continue;
        matches.push_back(pattern.is_absolute() || base_dir.empty() ? match.string()
                                                                    : match.lexically_relative(base_dir).string());
      }
    }
    ::globfree(&g);
    if (matches.empty()) site.index(i).fail("pattern '" + files[i] + "' matches no file (relative to the config file)");
    out.insert(out.end(), matches.begin(), matches.end());
  }
  return out;
}

}  // namespace

RecallConfig parse_recall_config(const nlohmann::json& cfg, const ConfigSource& where) {
  const config::Site& site = where.site;
  config::check_keys(cfg, k_keys, site);
  RecallConfig c;
  c.base_dir = where.base_dir;
  c.name = config::get_string(cfg, "name", c.name, site);
  if (c.name.empty()) site.child("name").fail("must not be empty");

  if (!cfg.contains("corpus")) site.child("corpus").fail("missing; give {\"files\": [...]} or {\"random_bodies\": {...}}");
  const nlohmann::json& corpus_cfg = cfg["corpus"];
  const config::Site corpus_site = site.child("corpus");
  config::check_keys(corpus_cfg, k_corpus_keys, corpus_site);
  const bool has_files = corpus_cfg.contains("files");
  const bool has_random = corpus_cfg.contains("random_bodies");
  if (has_files == has_random) corpus_site.fail("give exactly one of \"files\" and \"random_bodies\"");
  if (has_files) {
    c.files = config::get_strings(corpus_cfg, "files", {}, corpus_site);
    if (c.files.empty()) corpus_site.child("files").fail("must name at least one file");
    for (std::size_t i = 0; i < c.files.size(); ++i) {
      if (is_pattern(c.files[i])) continue;  // checked once expanded
      auto language = corpus::language_of(c.files[i]);
      if (!language) corpus_site.child("files").index(i).fail(language.error().message);
    }
  } else {
    c.random_bodies = read_random_bodies(corpus_cfg["random_bodies"], corpus_site.child("random_bodies"));
  }

  // "k" is the older name of "sample_size"; both are accepted, one at a time.
  if (cfg.contains("k") && cfg.contains("sample_size"))
    site.fail("give one of \"sample_size\" and \"k\" (its older name), not both");
  const std::string sample_key = cfg.contains("k") ? "k" : "sample_size";
  c.sample_size = int_in(cfg, sample_key, c.sample_size, 1, 100'000, site);
  c.seed = config::get_int(cfg, "seed", c.seed, site);
  c.lines = int_in(cfg, "lines", c.lines, 1, 100'000, site);
  c.bonus_lines = int_in(cfg, "bonus_lines", c.bonus_lines, 0, 100'000, site);
  if (cfg.contains("pass_lines")) {
    const auto& v = cfg["pass_lines"];
    if (v.is_number_integer()) {
      c.pass_lines = int_in(cfg, "pass_lines", c.pass_lines, 0, c.lines, site);
    } else if (v.is_number_float() && v.get<double>() > 0 && v.get<double>() < 1) {
      // A ratio of the primary lines, rounded up (the tiny epsilon absorbs 0.4 * 20 = 8.000…1).
      c.pass_lines = static_cast<int>(std::ceil(v.get<double>() * c.lines - 1e-9));
    } else {
      site.child("pass_lines").fail("expected an integer 0.." + std::to_string(c.lines) +
                                    " or a ratio between 0 and 1, got " + v.dump());
    }
  } else {
    c.pass_lines = std::min(c.pass_lines, c.lines);
  }
  c.relax_indent = config::get_bool(cfg, "relax_indent", c.relax_indent, site);
  c.align = config::get_one_of(cfg, "align", "difflib", {"difflib", "lcs"}, site) == "lcs" ? score::Alignment::lcs
                                                                               : score::Alignment::difflib;
  c.mode = config::get_one_of(cfg, "mode", "chat", {"chat", "raw"}, site) == "raw" ? RecallMode::raw : RecallMode::chat;
  c.cue = config::get_one_of(cfg, "cue", "none", {"none", "signature"}, site) == "signature" ? RecallCue::signature
                                                                                : RecallCue::none;
  c.max_tokens = int_in(cfg, "max_tokens", c.max_tokens, 1, 10'000'000, site);
  c.prefill_no_think = config::get_bool(cfg, "prefill_no_think", c.prefill_no_think, site);
  c.bounded = config::get_bool(cfg, "bounded", c.bounded, site);
  c.budget_factor = config::get_number(cfg, "budget_factor", c.budget_factor, site);
  if (c.budget_factor <= 0) {
    site.child("budget_factor").fail("expected a number > 0 (the margin over the expected answer's tokens), got " +
                                     cfg["budget_factor"].dump());
  }
  c.budget_plus = int_in(cfg, "budget_plus", c.budget_plus, 0, 1'000'000, site);
  c.stop_extra_lines = int_in(cfg, "stop_extra_lines", c.stop_extra_lines, 0, 1'000'000, site);
  return c;
}

corpus::Corpus load_recall_corpus(const RecallConfig& config, const ConfigSource& where) {
  const config::Site site = where.site.child("corpus");
  core::Expected<corpus::Corpus> loaded;
  if (config.random_bodies) {
    const std::vector<corpus::SourceFile> files{
        {std::string(random_bodies_file_name), corpus::generate_random_bodies(*config.random_bodies)}};
    loaded = corpus::build_corpus(files, config.lines);
  } else {
    loaded = corpus::load_corpus(expand_files(config.files, config.base_dir, site.child("files")), config.base_dir,
                                 config.lines);
  }
  if (!loaded) site.child("files").fail(loaded.error().message + " (paths are relative to the config file)");
  if (loaded->targets.empty()) {
    site.fail("no function in the corpus has " + std::to_string(config.lines) + " or more body lines");
  }
  return std::move(*loaded);
}

std::string_view to_string(RecallCue cue) { return cue == RecallCue::signature ? "signature" : "none"; }

std::string signature_text(const corpus::Corpus& corpus, const corpus::Target& target) {
  // Lines are 1-based positions in corpus.text; the signature ends on the line before the body.
  const int first = target.start_line;
  const int last = std::max(first, target.body_start_line - 1);
  std::string out;
  int line = 1;
  std::size_t pos = 0;
  while (pos <= corpus.text.size() && line <= last) {
    const std::size_t end = std::min(corpus.text.find('\n', pos), corpus.text.size());
    if (line >= first) {
      if (line > first) out += '\n';
      out.append(corpus.text, pos, end - pos);
    }
    pos = end + 1;
    ++line;
  }
  return out;
}

std::string recall_task_text(const corpus::Target& target, int n, bool multi_file, RecallCue cue) {
  const std::string count = std::to_string(n);
  const std::string where = multi_file && !target.file.empty() ? " in file `" + target.file + "`" : "";
  std::string anchor;
  std::string marker;
  if (target.language == corpus::Language::python) {
    anchor = "the " + count + " lines that start with the first line after the `def " + target.name +
             "(...):` signature (a docstring, if there is one, counts as body)";
    marker = "def " + target.name + "(";
  } else {
    // JavaScript and PHP: the body is the lines between the `{` line and the `}` line.
    anchor = "the " + count + " lines that start right after the line with the opening brace `{` of `" +
             target.name + "`";
    marker = "the opening brace `{` of `" + target.name + "`";
  }
  return "Task: reproduce verbatim the first " + count + " lines of the body of the function named `" +
         target.name + "`" + where + " in the source above, that is, " + anchor +
         ".\n"
         "\n"
         "Rules:\n"
         "- Output only those lines, one per line, in their original order.\n"
         "- Keep the original indentation and every character exactly as in the source.\n"
         "- Do not output the function signature or the line containing " +
         (target.language == corpus::Language::python ? "`" + marker + "`" : marker) +
         ".\n"
         "- Do not add commentary, line numbers or markdown code fences.\n"
         "- Where the body has blank lines, output them as blank lines.\n" +
         (cue == RecallCue::signature
              ? std::string("\nThe function's signature is repeated below; continue right after it with the body.\n")
              : std::string());
}

std::string recall_prompt(const corpus::Corpus& corpus, const corpus::Target& target, int n, RecallCue cue) {
  return corpus.text + "\n\n---\n\n" + recall_task_text(target, n, corpus.files.size() > 1, cue);
}

RecallProbe::RecallProbe(RecallConfig config, corpus::Corpus corpus)
    : m_config(std::move(config)), m_corpus(std::move(corpus)), m_prefix(m_corpus.text) {
  m_sampled = corpus::stratified_sample(m_corpus.targets, m_corpus.total_lines, m_config.sample_size, m_config.seed);
  // Hashed once, as the corpus was read (random bodies are generated from the config's own numbers).
  for (const std::string& name : m_config.random_bodies ? std::vector<std::string>{} : m_corpus.files) {
    std::filesystem::path path(name);
    if (path.is_relative() && !m_config.base_dir.empty()) path = m_config.base_dir / path;
    const auto sha = core::sha256_file(path);
    m_inputs.push_back({"corpus.files", path.string(), sha ? *sha : ""});
  }
}

std::vector<Item> RecallProbe::items() const {
  std::vector<Item> out;
  for (const corpus::Target& t : m_sampled) {
    out.push_back(Item{t.name,
                       {{"name", t.name},
                        {"file", t.file},
                        {"start_line", t.start_line},
                        {"body_start_line", t.body_start_line},
                        {"body_lines", t.body.size()}}});
  }
  return out;
}

int RecallProbe::min_context() const {
  // Tokens from bytes, generously: random bodies tokenize at ~1.5 bytes a token, code at ~3.
  const auto tokens_of = [&](long long bytes) { return m_config.random_bodies ? bytes * 3 / 4 : bytes / 3; };
  const long long corpus_tokens = tokens_of(static_cast<long long>(m_corpus.text.size()));
  long long answer = m_config.max_tokens;
  if (m_config.bounded) {
    long long longest = 0;
    for (const corpus::Target& t : m_sampled) {
      long long bytes = 0;
      const auto n = std::min<std::size_t>(t.body.size(), static_cast<std::size_t>(m_config.lines + m_config.bonus_lines));
      for (std::size_t i = 0; i < n; ++i) bytes += static_cast<long long>(t.body[i].size()) + 1;
      longest = std::max(longest, bytes);
    }
    const double budget = m_config.budget_factor * static_cast<double>(tokens_of(longest)) + m_config.budget_plus;
    answer = std::min(answer, static_cast<long long>(budget) + 1);
  }
  const long long total = corpus_tokens + answer + 256;
  return static_cast<int>(std::min<long long>(total, 1LL << 30));
}

std::vector<MetricSpec> RecallProbe::metrics() const {
  return {quality("primary_matched", Direction::higher_better, MetricKind::count),
          quality("bonus_matched", Direction::higher_better, MetricKind::count),
          quality("hallucinated", Direction::lower_better, MetricKind::count),
          quality("passed", Direction::higher_better, MetricKind::binary),
          diagnostic("produced_lines", MetricKind::count),
          diagnostic("cut", MetricKind::binary)};
}

std::optional<Probe::Calibration> RecallProbe::calibration() const {
  return Calibration{"primary_matched", 0, static_cast<double>(m_config.lines)};
}

bool RecallProbe::deterministic() const { return true; }  // temperature 0

std::vector<server::Need> RecallProbe::needs() const {
  if (m_config.mode == RecallMode::chat)
    return {{server::Capability::chat, ""},
            {server::Capability::tokenize, "the prompt's length is not checked against the context before it is sent"}};
  return {{server::Capability::token_prompts, "the prompt is sent as text, tokenized by the server"},
          {server::Capability::tokenize, "the prompt's length is not checked against the context before it is sent"}};
}

server::CompletionRequest RecallProbe::request_for(const corpus::Target& target, int n_predict) const {
  server::CompletionRequest request;
  const int n = std::min<int>(m_config.lines, static_cast<int>(target.body.size()));
  std::string prompt = recall_prompt(m_corpus, target, n, m_config.cue);
  const std::string cue = m_config.cue == RecallCue::signature ? signature_text(m_corpus, target) + "\n" : "";
  if (m_config.mode == RecallMode::chat) {
    request.messages.push_back({"user", std::move(prompt)});
    std::string prefill = m_config.prefill_no_think ? std::string(no_think_prefill) : "";
    prefill += cue;
    if (!prefill.empty()) request.messages.push_back({"assistant", std::move(prefill)});
  } else {
    request.prompt = std::move(prompt) + cue;
  }
  request.n_predict = n_predict > 0 ? n_predict : m_config.max_tokens;
  request.temperature = 0.0;
  request.top_k = 40;
  request.top_p = 1.0;
  request.min_p = 0.0;
  request.seed = m_config.sampling_seed;
  request.cache_prompt = true;
  return request;
}

core::Expected<RecallProbe::PromptTokens> RecallProbe::prepare(const corpus::Target& target, int budget,
                                                                Context& ctx, server::CompletionRequest& request) {
  const bool raw = m_config.mode == RecallMode::raw;
  if (ctx.cell.n_ctx <= 0 && !raw) return PromptTokens{};
  // The tokenizer is the model file's: counted once per model and run, whatever the cell's K/V.
  const std::string model = ctx.cell.model + "\n" + ctx.cell.model_path;
  const auto tokenize_failed = [](core::Error e) {
    e.message = "preflight tokenize: " + e.message;
    return std::unexpected(std::move(e));
  };
  const int n = std::min<int>(m_config.lines, static_cast<int>(target.body.size()));
  std::string question_text = "\n\n---\n\n" + recall_task_text(target, n, m_corpus.files.size() > 1, m_config.cue);
  if (m_config.cue == RecallCue::signature) question_text += signature_text(m_corpus, target) + "\n";
  auto corpus_tokens = m_prefix.head_tokens(ctx.api, model);
  if (!corpus_tokens) return tokenize_failed(corpus_tokens.error());
  // A backend without a tokenizer endpoint cannot be checked; the request itself will tell.
  if (!*corpus_tokens) return PromptTokens{};
  int question_tokens = -1;
  if (raw && ctx.api.capabilities().has(server::Capability::token_prompts)) {
    // Raw mode sends ids: the corpus's from the once-per-model count, the question's as they
    // continue them (SharedPrefix checks they equal the server's own tokens of the text).
    auto ids = m_prefix.prompt_ids(ctx.api, model, question_text);
    if (!ids) return tokenize_failed(ids.error());
    if (*ids) {
      question_tokens = static_cast<int>((*ids)->size()) - **corpus_tokens;
      request.tokens = std::move(**ids);
      request.prompt.clear();
    }
  }
  if (question_tokens < 0) {
    auto question = ctx.api.tokenize(m_prefix.tail() + question_text, false);
    if (!question) {
      if (question.error().kind == core::ErrorKind::unsupported) return PromptTokens{};
      return tokenize_failed(question.error());
    }
    question_tokens = static_cast<int>(question->size());
  }
  if (ctx.cell.n_ctx <= 0) return PromptTokens{**corpus_tokens, question_tokens};
  // A chat template adds a few dozen tokens around the messages.
  const int overhead = m_config.mode == RecallMode::chat ? 64 : 0;
  const long long needed =
      static_cast<long long>(**corpus_tokens) + static_cast<long long>(question_tokens) + overhead + budget;
  if (needed > ctx.cell.n_ctx) {
    return core::exceeds_context("recall prompt needs about " + std::to_string(needed) + " tokens (corpus " +
                          std::to_string(**corpus_tokens) + " + question " + std::to_string(question_tokens) +
                          " + answer budget " + std::to_string(budget) + ") but the context holds " +
                          std::to_string(ctx.cell.n_ctx) + "; raise the server's -c or shrink the corpus",
                                 needed);
  }
  return PromptTokens{**corpus_tokens, question_tokens};
}

core::Expected<ItemResult> RecallProbe::run(const Item& item, Context& ctx) {
  const auto it = std::find_if(m_sampled.begin(), m_sampled.end(),
                               [&](const corpus::Target& t) { return t.name == item.key; });
  if (it == m_sampled.end()) {
    return core::fail(core::ErrorKind::invalid, "recall: no sampled function named '" + item.key + "'");
  }
  const corpus::Target& target = *it;
  const auto lines = static_cast<std::size_t>(m_config.lines);
  const std::span<const std::string> body(target.body);
  const std::size_t n_primary = std::min(lines, body.size());
  const std::size_t n_bonus = std::min(static_cast<std::size_t>(m_config.bonus_lines), body.size() - n_primary);
  score::RecallOptions options;
  options.relax_indent = m_config.relax_indent;
  options.pass_lines = m_config.pass_lines;
  options.primary_lines = m_config.lines;
  options.align = m_config.align;

  // The answer's budget: what the expected lines cost in this model's tokens, with a margin.
  int budget = m_config.max_tokens;
  nlohmann::json expected_tokens = nullptr;
  if (m_config.bounded) {
    std::string expected;
    for (std::size_t i = 0; i < n_primary + n_bonus; ++i) expected += body[i] + "\n";
    auto tokens = ctx.api.tokenize(expected, false);
    if (tokens) {
      expected_tokens = tokens->size();
      const double b = m_config.budget_factor * static_cast<double>(tokens->size()) + m_config.budget_plus;
      budget = static_cast<int>(std::clamp(b, 1.0, static_cast<double>(m_config.max_tokens)));
    } else if (tokens.error().kind != core::ErrorKind::unsupported) {
      core::Error e = tokens.error();
      e.message = "answer budget tokenize: " + e.message;
      return std::unexpected(std::move(e));
    }
  }
  server::CompletionRequest request = request_for(target, budget);
  const auto prompt_tokens = prepare(target, budget, ctx, request);
  if (!prompt_tokens) return std::unexpected(prompt_tokens.error());
  bool enough_lines = false;
  if (m_config.bounded) {
    const std::size_t stop_at = n_primary + n_bonus + static_cast<std::size_t>(m_config.stop_extra_lines);
    request.stop_when = [&options, stop_at, &enough_lines](std::string_view content) {
      // Only complete lines count; the one being written may still grow.
      const auto last_newline = content.rfind('\n');
      if (last_newline == std::string_view::npos) return false;
      enough_lines = score::answer_lines(content.substr(0, last_newline + 1), options).size() > stop_at;
      return enough_lines;
    };
  }
  auto reply = ctx.api.complete(request);
  if (!reply) return std::unexpected(reply.error());

  const score::RecallScore s =
      score::score_recall(body.subspan(0, n_primary), body.subspan(n_primary, n_bonus), reply->content, options);

  nlohmann::json cut = nullptr;
  if (reply->stop_type == "cancel" && enough_lines) {
    cut = "lines";
  } else if (reply->stop_type == "limit") {
    cut = "budget";
  }
  ItemResult result;
  const auto known = [](int n) { return n < 0 ? nlohmann::json(nullptr) : nlohmann::json(n); };
  result.response = {{"text", reply->content},
                     {"budget", budget},
                     {"expected_tokens", expected_tokens},
                     {"cut", cut},
                     {"corpus_tokens", known(prompt_tokens->corpus)},
                     {"question_tokens", known(prompt_tokens->question)},
                     {"cue", to_string(m_config.cue)},
                     {"prompt_as", request.tokens.empty() ? "text" : "ids"}};
  result.metrics = {{"primary_matched", s.primary_matched},
                    {"bonus_matched", s.bonus_matched},
                    {"hallucinated", s.hallucinated},
                    {"passed", s.passed ? 1 : 0},
                    {"produced_lines", s.produced_lines},
                    {"cut", cut.is_null() ? 0 : 1}};
  result.timings += reply->timings;
  return result;
}

std::unique_ptr<Probe> make_recall_probe(const nlohmann::json& config, const ConfigSource& site) {
  RecallConfig parsed = parse_recall_config(config, site);
  corpus::Corpus corpus = load_recall_corpus(parsed, site);
  return std::make_unique<RecallProbe>(std::move(parsed), std::move(corpus));
}

}  // namespace kvsweep::probe
