#include "kvsweep/probe/prompts.hpp"
#include "kvsweep/probe/divergence/divergence.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "kvsweep/probe/greedy.hpp"
#include "kvsweep/probe/top_list.hpp"
#include "kvsweep/score/token_divergence.hpp"

namespace kvsweep::probe {

namespace {

using Tokens = std::vector<std::int32_t>;
using nlohmann::json;

// Written for kvsweep: short openings of different registers (prose, code, lists, dialogue).
const std::vector<std::string> kDefaultPrompts = {
    "The lighthouse keeper climbed the stairs one last time and",
    "def merge_sorted(a, b):\n    \"\"\"Merge two sorted lists into one sorted list.\"\"\"\n",
    "Ingredients for a simple bread: flour, water, salt and",
    "Q: Why does ice float on water?\nA:",
    "Dear team, thank you all for the hard work this quarter. Before the holidays",
    "1. Preheat the oven.\n2.",
    "In 1869 the periodic table was arranged by",
    "\"Are you sure this is the right road?\" she asked. \"",
};

enum class Mode { cache, reference };

/// Whether a request may reuse the slot's KV cache for a prefix it shares with the previous request.
enum class PromptCache { reuse, recompute };

/// One next-token answer: the greedy token and the distribution it came from.
struct Step {
  std::int32_t token = -1;
  TopList top;
  bool eos = false;
};

/// A greedy generation with its per-token distributions.
struct Generation {
  Tokens tokens;
  std::vector<TopList> tops;
  std::string content;
  std::string stop_type;
};

/// A path recomputed one step per request and compared with a baseline's distributions.
struct Forced {
  Tokens argmax;          // the recomputed greedy token at each step
  std::vector<bool> eos;  // whether that token ended generation
  std::vector<TopList> tops;
  std::vector<double> kl;
  std::vector<double> js;
};

core::Expected<TopList> top_of(const server::TokenLogprob& tp) { return top_list_of(tp, "divergence"); }

double mean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  double s = 0.0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double max_of(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, x);
  return m;
}

Tokens concat(const Tokens& prompt, const Tokens& path, std::size_t n) {
  Tokens out = prompt;
  out.insert(out.end(), path.begin(), path.begin() + static_cast<std::ptrdiff_t>(n));
  return out;
}

/// The reference cell's record of `key`: its prompt tokens, tokens and per-step top lists.
struct ReferencePath {
  Tokens prompt;
  Generation gen;
};

core::Expected<ReferencePath> reference_path(const Context& ctx, const std::string& key) {
  if (ctx.reference_records) {
    for (const auto& r : *ctx.reference_records) {
      if (r.item != key || !r.ok()) continue;
      try {
        const json& resp = r.response;
        ReferencePath out;
        out.prompt = resp.at("prompt_tokens").get<Tokens>();
        out.gen.tokens = resp.at("tokens").get<Tokens>();
        out.gen.tops = tops_from_json(resp.at("top"));
        if (out.gen.tops.size() != out.gen.tokens.size())
          return core::fail(core::ErrorKind::parse, "the reference record of " + key + " has " +
                                                        std::to_string(out.gen.tokens.size()) + " tokens but " +
                                                        std::to_string(out.gen.tops.size()) + " top lists");
        return out;
      } catch (const std::exception& e) {
        return core::fail(core::ErrorKind::parse, "the reference record of " + key +
                                                      " lacks prompt_tokens/tokens/top (" + e.what() + ")");
      }
    }
  }
  return core::fail(core::ErrorKind::invalid, "no ok record of the reference cell for item " + key +
                                                  " (did its divergence item fail?); nothing to compare with");
}

class DivergenceProbe final : public Probe {
 public:
  DivergenceProbe(std::string name, Prompts prompts, int tokens, int top_n, Mode mode)
      : m_name(std::move(name)), m_prompts(std::move(prompts)), m_tokens(tokens), m_top_n(top_n), m_mode(mode) {}

  std::string kind() const override { return "divergence"; }
  std::string name() const override { return m_name; }
  int min_context() const override { return 512 + m_tokens; }
  /// Token-id prompts (teacher forcing), the top-n of every step with token ids (KL, flip index), and the
  /// tokenizer (the prompt's ids, the free-running path's text): no text-only form.
  std::vector<server::Need> needs() const override {
    return {{server::Capability::token_prompts, ""},
            {server::Capability::logprobs, ""},
            {server::Capability::logprob_ids, ""},
            {server::Capability::tokenize, ""}};
  }
  bool compares_with_reference() const override { return m_mode == Mode::reference; }

  std::vector<Item> items() const override { return prompt_items(without_expect(m_prompts.prompts)); }
  std::vector<InputFile> inputs() const override { return m_prompts.inputs; }

  std::vector<MetricSpec> metrics() const override {
    // Whether and where the greedy text leaves the reference's: changes. How far each step's distribution
    // moved: distances, the mean KL per step gated by its threshold (metric_spec.hpp: kMeanKlThreshold).
    return {change("diverged", Direction::lower_better, MetricKind::binary),
            change("flip_index", Direction::higher_better, MetricKind::count),
            distance("mean_kl", Direction::lower_better, MetricKind::continuous, kMeanKlThreshold, kMeanKlWhy),
            distance("max_kl", Direction::lower_better, MetricKind::continuous),
            distance("mean_js", Direction::lower_better, MetricKind::continuous),
            distance("same_top1_rate", Direction::higher_better, MetricKind::continuous),
            diagnostic("n_steps", MetricKind::count)};
  }
  bool deterministic() const override { return true; }  // greedy in both modes

  core::Expected<ItemResult> run(const Item& item, Context& ctx) override {
    return m_mode == Mode::cache ? run_cache(item, ctx) : run_reference(item, ctx);
  }

 private:
  server::CompletionRequest request(Tokens prompt, int n_predict, PromptCache cache) const {
    server::CompletionRequest req;
    req.tokens = std::move(prompt);
    req.n_predict = n_predict;
    req.n_probs = m_top_n;
    set_greedy(req);
    req.cache_prompt = cache == PromptCache::reuse;
    return req;
  }

  // The greedy generation of up to m_tokens after `prompt`. The prompt is prefilled from scratch
  // (cache_prompt:false) so the result never depends on what the slot held before (resume
  // order); the generated tokens are still decoded against the KV cache: this is "cache-ON".
  core::Expected<Generation> generate(Context& ctx, const Tokens& prompt, server::Timings& sum) const {
    auto res = ctx.api.complete(request(prompt, m_tokens, PromptCache::recompute));
    if (!res) return std::unexpected(res.error());
    sum += res->timings;
    Generation g;
    g.content = res->content;
    g.stop_type = res->stop_type;
    for (const auto& p : res->probs) {
      auto top = top_of(p);
      if (!top) return std::unexpected(top.error());
      g.tokens.push_back(p.id);
      g.tops.push_back(std::move(*top));
    }
    if (g.tokens.empty())
      return core::fail(core::ErrorKind::parse, "the generation returned no tokens with probabilities");
    return g;
  }

  static core::Expected<Step> to_step(const server::CompletionResponse& res, server::Timings& sum) {
    sum += res.timings;
    if (res.probs.empty())
      return core::fail(core::ErrorKind::parse, "a one-token request returned no completion_probabilities");
    auto top = top_of(res.probs.front());
    if (!top) return std::unexpected(top.error());
    return Step{res.probs.front().id, std::move(*top), res.stop_type == "eos"};
  }

  // One request, one token: the next-token distribution after `prefix`.
  core::Expected<Step> next(Context& ctx, Tokens prefix, PromptCache cache, server::Timings& sum) const {
    auto res = ctx.api.complete(request(std::move(prefix), 1, cache));
    if (!res) return std::unexpected(res.error());
    return to_step(*res, sum);
  }

  // The next-token distributions after prompt + path[0..t) for t in [from, to), in order.
  //
  // What llama-server's /completion offers here (pinned de3ff81, tools/server): `n_probs` gives
  // the top-n of each *generated* token's distribution (before sampling, as we ask); it gives
  // none for prompt tokens (the OpenAI `echo` is refused: "Only no echo is supported"), and no
  // field forces the sampled token step by step (logit_bias holds for a whole request; a grammar
  // constrains text, not token ids). So a teacher-forced step is one one-token task. What the API
  // does offer is a multi-prompt request: "prompt" as an array of token arrays makes one task per
  // prompt, answered as an array in order. We send the steps that way, many per request
  // (server::Api::complete_each), instead of one request each; on the one-slot server kvsweep
  // starts the tasks run in order, so with cache_prompt each step still evaluates one new token
  // on top of the previous step's cache, exactly as one request per step did. Requests are cut
  // at kStepsPerRequest steps or kTokensPerRequest prompt tokens, whichever comes first.
  core::Expected<std::vector<Step>> steps(Context& ctx, const Tokens& prompt, const Tokens& path, std::size_t from,
                                          std::size_t to, PromptCache cache, server::Timings& sum) const {
    constexpr std::size_t kStepsPerRequest = 64;
    constexpr std::size_t kTokensPerRequest = 1 << 16;
    std::vector<Step> out;
    out.reserve(to - from);
    for (std::size_t t = from; t < to;) {
      std::vector<Tokens> prompts;
      std::size_t tokens = 0;
      for (; t < to && prompts.size() < kStepsPerRequest; ++t) {
        const std::size_t n = prompt.size() + t;
        if (!prompts.empty() && tokens + n > kTokensPerRequest) break;
        prompts.push_back(concat(prompt, path, t));
        tokens += n;
      }
      auto answers = ctx.api.complete_each(request({}, 1, cache), prompts);
      if (!answers) return std::unexpected(answers.error());
      if (answers->size() != prompts.size())
        return core::fail(core::ErrorKind::parse, std::to_string(prompts.size()) + " step prompts got " +
                                                      std::to_string(answers->size()) + " answers");
      for (const auto& a : *answers) {
        auto step = to_step(a, sum);
        if (!step) return std::unexpected(step.error());
        out.push_back(std::move(*step));
      }
    }
    return out;
  }

  // Teacher forcing: step t recomputes the distribution after prompt + path[0..t) and compares
  // it with baseline[t] as KL(baseline ‖ recomputed) and JS. The first step's cache mode is
  // `first`, the later ones' `rest` (one request per cache mode, cache_prompt being per request).
  core::Expected<Forced> force(Context& ctx, const Tokens& prompt, const Generation& baseline, PromptCache first,
                               PromptCache rest, server::Timings& sum) const {
    const std::size_t n = baseline.tokens.size();
    std::vector<Step> all;
    if (first == rest) {
      auto s = steps(ctx, prompt, baseline.tokens, 0, n, first, sum);
      if (!s) return std::unexpected(s.error());
      all = std::move(*s);
    } else {
      auto head = steps(ctx, prompt, baseline.tokens, 0, std::min<std::size_t>(1, n), first, sum);
      if (!head) return std::unexpected(head.error());
      auto tail = steps(ctx, prompt, baseline.tokens, std::min<std::size_t>(1, n), n, rest, sum);
      if (!tail) return std::unexpected(tail.error());
      all = std::move(*head);
      all.insert(all.end(), std::make_move_iterator(tail->begin()), std::make_move_iterator(tail->end()));
    }
    Forced f;
    for (std::size_t t = 0; t < n; ++t) {
      Step& step = all[t];
      f.kl.push_back(score::kl_divergence(baseline.tops[t], step.top));
      f.js.push_back(score::js_divergence(baseline.tops[t], step.top));
      f.argmax.push_back(step.token);
      f.eos.push_back(step.eos);
      f.tops.push_back(std::move(step.top));
    }
    return f;
  }

  // The metrics shared by both modes: `f` is the recomputed path, `baseline` the generated tokens
  // it was forced on.
  void comparison_metrics(ItemResult& out, const Forced& f, const Tokens& baseline) const {
    std::size_t same = 0;
    for (std::size_t t = 0; t < baseline.size(); ++t) same += f.argmax[t] == baseline[t] ? 1 : 0;
    out.metrics["mean_kl"] = mean(f.kl);
    out.metrics["max_kl"] = max_of(f.kl);
    out.metrics["mean_js"] = mean(f.js);
    out.metrics["same_top1_rate"] = static_cast<double>(same) / static_cast<double>(baseline.size());
    out.metrics["n_steps"] = baseline.size();
    out.response["argmax"] = f.argmax;
    out.response["forced_top"] = tops_to_json(f.tops);
    out.response["kl"] = f.kl;
    out.response["js"] = f.js;
  }

  void flip_metrics(ItemResult& out, const Tokens& a, const Tokens& b) const {
    auto flip = score::flip_index(a, b);
    out.metrics["diverged"] = flip ? 1 : 0;
    // No flip inside the window: the first step outside it (a right-censored value).
    out.metrics["flip_index"] = flip ? static_cast<long long>(*flip) : static_cast<long long>(m_tokens);
  }

  // Mode cache: (a) cache-ON generation; (b) cache-OFF teacher-forced on its tokens;
  // (c) cache-OFF free-running generation, one token per request from scratch.
  core::Expected<ItemResult> run_cache(const Item& item, Context& ctx) {
    auto prompt = ctx.api.tokenize(item.spec.at("prompt").get<std::string>(), true);
    if (!prompt) return std::unexpected(prompt.error());
    ItemResult out;
    auto on = generate(ctx, *prompt, out.timings);
    if (!on) return std::unexpected(on.error());
    auto off = force(ctx, *prompt, *on, PromptCache::recompute, PromptCache::recompute, out.timings);
    if (!off) return std::unexpected(off.error());

    // (c) Until the first step where the teacher-forced argmax differs from the cache-ON token, the
    // free-running request is byte-identical to the teacher-forced one (same prefix, from
    // scratch), so its answers are reused; from there on it continues with its own tokens.
    Tokens free;
    bool eos = false;
    for (std::size_t t = 0; t < on->tokens.size() && !eos; ++t) {
      free.push_back(off->argmax[t]);
      eos = off->eos[t];
      if (off->argmax[t] != on->tokens[t]) break;
    }
    const bool split = free != on->tokens;
    while (split && !eos && free.size() < static_cast<std::size_t>(m_tokens)) {
      auto step = next(ctx, concat(*prompt, free, free.size()), PromptCache::recompute, out.timings);
      if (!step) return std::unexpected(step.error());
      free.push_back(step->token);
      eos = step->eos;
    }
    std::string free_content = on->content;
    if (split) {
      auto text = ctx.api.detokenize(free);
      if (!text) return std::unexpected(text.error());
      free_content = *text;
    }

    out.response = {{"mode", "cache"},          {"prompt_n", prompt->size()}, {"content", on->content},
                    {"stop_type", on->stop_type}, {"tokens", on->tokens},       {"top", tops_to_json(on->tops)},
                    {"free_tokens", free},        {"free_content", free_content}};
    comparison_metrics(out, *off, on->tokens);
    flip_metrics(out, on->tokens, free);
    return out;
  }

  // Mode reference: the reference cell records its greedy path with the distributions; every
  // cell (the reference too, which measures the floor of the method) recomputes that path one
  // step per request and is compared with it. The first step is prefilled from scratch; later
  // steps reuse the slot's cache, so each evaluates one new token.
  core::Expected<ItemResult> run_reference(const Item& item, Context& ctx) {
    ItemResult out;
    ReferencePath ref;
    if (ctx.cell.is_reference) {
      auto prompt = ctx.api.tokenize(item.spec.at("prompt").get<std::string>(), true);
      if (!prompt) return std::unexpected(prompt.error());
      auto gen = generate(ctx, *prompt, out.timings);
      if (!gen) return std::unexpected(gen.error());
      ref = {std::move(*prompt), std::move(*gen)};
      out.response = {{"mode", "reference"},          {"prompt_tokens", ref.prompt}, {"content", ref.gen.content},
                      {"stop_type", ref.gen.stop_type}, {"tokens", ref.gen.tokens},   {"top", tops_to_json(ref.gen.tops)}};
    } else {
      auto found = reference_path(ctx, item.key);
      if (!found) return std::unexpected(found.error());
      ref = std::move(*found);
      out.response = {{"mode", "reference"}, {"prompt_n", ref.prompt.size()}, {"reference_tokens", ref.gen.tokens.size()}};
    }
    auto forced = force(ctx, ref.prompt, ref.gen, PromptCache::recompute, PromptCache::reuse, out.timings);
    if (!forced) return std::unexpected(forced.error());
    comparison_metrics(out, *forced, ref.gen.tokens);
    flip_metrics(out, ref.gen.tokens, forced->argmax);
    return out;
  }

  std::string m_name;
  Prompts m_prompts;
  int m_tokens;
  int m_top_n;
  Mode m_mode;
};

}  // namespace

std::unique_ptr<Probe> make_divergence_probe(const json& cfg, const ConfigSource& site) {
  const config::Site& s = site.site;
  config::check_keys(cfg, {"kind", "name", "prompts", "prompts_file", "tokens", "top_n", "mode"}, s);
  Prompts prompts = read_prompts(cfg, site, kDefaultPrompts);
  const long long tokens = config::get_int_in(cfg, "tokens", 128, 1, 1 << 20, s);
  const long long top_n = config::get_int_in(cfg, "top_n", 20, 1, 1000, s);
  const std::string mode = config::get_one_of(cfg, "mode", "cache", {"cache", "reference"}, s);
  // Two divergence probes (one per mode) are the usual pair, so the default name carries the mode.
  std::string name = config::get_string(cfg, "name", "divergence-" + mode, s);
  return std::make_unique<DivergenceProbe>(std::move(name), std::move(prompts), static_cast<int>(tokens),
                                           static_cast<int>(top_n), mode == "cache" ? Mode::cache : Mode::reference);
}

}  // namespace kvsweep::probe
