#include "kvsweep/probe/longkl/longkl.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/probe/corpus_config.hpp"
#include "kvsweep/probe/greedy.hpp"
#include "kvsweep/probe/longkl/longkl_scoring.hpp"

namespace kvsweep::probe {

namespace {

using nlohmann::json;
using Tokens = std::vector<std::int32_t>;

constexpr const char* kLowerBoundWhy =
    "kld's mean KLD threshold; here a lower bound of the KL, over the reference's top-K and a tail";

/// What one cell's server slot holds, as far as this probe knows: the document's tokens on that
/// server and how far through the schedule the slot's cache is.
struct CellSlot {
  const server::Api* api = nullptr;
  Tokens tokens;
  std::string tokens_sha256;
  /// The window whose first request may extend the cache (the previous window ran last on this
  /// server); npos when unknown (a fresh server, a failed item, another probe's requests).
  std::size_t ready_for = std::string::npos;
  int cached = 0;  // the prompt length of the last request, what the cache holds
  /// The prompt-logprobs path (vLLM, SGLang): every position's list from the one request, and what it evaluated.
  std::vector<TopList> prompt_lists;
  int prompt_evaluated = 0;
};

std::string sha_of(const Tokens& tokens) {
  std::string bytes;
  bytes.reserve(tokens.size() * 4);
  for (std::int32_t t : tokens) bytes.append(reinterpret_cast<const char*>(&t), sizeof t);
  return core::sha256_hex(bytes);
}

class LongKlProbe final : public Probe {
 public:
  LongKlProbe(std::string name, CorpusConfig corpus, DepthSchedule schedule, int depth, int top_k, int cell_top_k,
              std::vector<std::string> gate_bins)
      : m_name(std::move(name)), m_corpus(std::move(corpus)), m_schedule(std::move(schedule)), m_depth(depth),
        m_top_k(top_k), m_cell_top_k(cell_top_k), m_gate_bins(std::move(gate_bins)) {}

  std::string kind() const override { return "longkl"; }
  std::string name() const override { return m_name; }
  bool compares_with_reference() const override { return true; }
  bool deterministic() const override { return true; }
  /// The deepest prompt is `depth` tokens, and the answer needs one more.
  int min_context() const override { return m_depth + 2; }
  /// llama-server: token-id prompts answered with their top-n with ids, the tokenizer and the server's
  /// evaluated counts. A server with prompt_logprobs (vLLM, SGLang) instead answers every position in one request.
  std::vector<server::Need> needs() const override {
    const std::vector<server::Capability> instead = {server::Capability::prompt_logprobs};
    return {{server::Capability::token_prompts, "", instead},
            {server::Capability::logprobs, "", instead},
            {server::Capability::logprob_ids, "", instead},
            {server::Capability::tokenize, "", instead}};
  }
  std::vector<InputFile> inputs() const override {
    return m_corpus.input ? std::vector<InputFile>{*m_corpus.input} : std::vector<InputFile>{};
  }

  std::vector<Item> items() const override {
    std::vector<Item> out;
    for (const auto& w : m_schedule.windows) {
      const DepthBin& bin = m_schedule.bins[w.bin];
      out.push_back({w.key, json{{"corpus", m_corpus.spec()},
                                 {"bin", bin.name},
                                 {"start", w.start},
                                 {"positions", w.length},
                                 {"top_k", m_top_k},
                                 {"cell_top_k", m_cell_top_k}}});
    }
    return out;
  }

  std::vector<MetricSpec> metrics() const override {
    std::vector<MetricSpec> out = {
        distance("mean_kl", Direction::lower_better, MetricKind::continuous, kMeanKlThreshold, kLowerBoundWhy),
        distance("max_kl", Direction::lower_better, MetricKind::continuous),
        distance("same_top1_rate", Direction::higher_better, MetricKind::continuous),
        diagnostic("mean_dp", MetricKind::continuous, Direction::higher_better),
        diagnostic("outside", MetricKind::count, Direction::lower_better),
        diagnostic("depth", MetricKind::count),
    };
    // One mean KL per bin, set on that bin's windows only: a verdict at a depth. The bins named in
    // gate_bins gate by default (their threshold), the others are reported.
    for (const auto& bin : m_schedule.bins) {
      const bool gated = std::find(m_gate_bins.begin(), m_gate_bins.end(), bin.name) != m_gate_bins.end();
      out.push_back(gated ? distance("mean_kl_" + bin.name, Direction::lower_better, MetricKind::continuous,
                                     kMeanKlThreshold, kLowerBoundWhy)
                          : distance("mean_kl_" + bin.name, Direction::lower_better, MetricKind::continuous));
    }
    return out;
  }

  core::Expected<ItemResult> run(const Item& item, Context& ctx) override {
    const auto at = std::find_if(m_schedule.windows.begin(), m_schedule.windows.end(),
                                 [&](const DepthWindow& w) { return w.key == item.key; });
    if (at == m_schedule.windows.end())
      return core::fail(core::ErrorKind::invalid, "no window " + item.key + " in this longkl schedule");
    const std::size_t index = static_cast<std::size_t>(at - m_schedule.windows.begin());
    CellSlot& slot = slot_of(ctx);
    auto ran = run_window(index, ctx, slot);
    if (!ran) slot.ready_for = std::string::npos;  // what the cache holds is no longer known
    return ran;
  }

 private:
  CellSlot& slot_of(const Context& ctx) {
    std::lock_guard lock(m_mutex);
    CellSlot& slot = m_slots[ctx.cell.id()];
    // Another server (a restart, the next run of this cell): nothing known of its cache.
    if (slot.api != &ctx.api) {
      slot = CellSlot{};
      slot.api = &ctx.api;
    }
    return slot;
  }

  core::Expected<void> tokenize(Context& ctx, CellSlot& slot) const {
    if (!slot.tokens.empty()) return {};
    auto tokens = ctx.api.tokenize(m_corpus.text(), true);
    if (!tokens) return std::unexpected(tokens.error());
    if (tokens->size() < static_cast<std::size_t>(m_depth))
      return core::fail(core::ErrorKind::invalid,
                        "the document is " + std::to_string(tokens->size()) + " tokens for this model; depth " +
                            std::to_string(m_depth) + " needs at least as many (a longer corpus, or a lower depth)");
    slot.tokens = std::move(*tokens);
    slot.tokens_sha256 = sha_of(slot.tokens);
    return {};
  }

  server::CompletionRequest request(int n_probs, bool cache) const {
    server::CompletionRequest req;
    req.n_predict = 1;
    req.n_probs = n_probs;
    set_greedy(req);
    req.cache_prompt = cache;
    return req;
  }

  /// Asks for the positions `ps` in order, each a prompt of the document's first p tokens, and checks
  /// that each request evaluated only what extends the slot's cache. With `first` the first request
  /// starts the cache from nothing (cache_prompt off).
  core::Expected<std::vector<server::CompletionResponse>> ask(Context& ctx, CellSlot& slot, const std::vector<int>& ps,
                                                              int n_probs, bool first, server::Timings& sum) const {
    std::vector<server::CompletionResponse> out;
    std::size_t from = 0;
    if (first) {
      server::CompletionRequest req = request(n_probs, false);
      req.tokens.assign(slot.tokens.begin(), slot.tokens.begin() + ps.front());
      auto one = ctx.api.complete(req);
      if (!one) return std::unexpected(one.error());
      slot.cached = 0;
      if (auto ok = check(*one, ps.front(), slot); !ok) return std::unexpected(ok.error());
      sum += one->timings;
      out.push_back(std::move(*one));
      from = 1;
    }
    // Several prompts per request (one task each, run in order on the one slot), up to about
    // kTokensPerRequest prompt tokens: a 128K-token prompt is ~1 MB of JSON.
    constexpr std::size_t kTokensPerRequest = std::size_t{1} << 17;
    while (from < ps.size()) {
      std::vector<Tokens> prompts;
      std::size_t tokens = 0;
      for (std::size_t i = from; i < ps.size(); ++i) {
        const auto n = static_cast<std::size_t>(ps[i]);
        if (!prompts.empty() && tokens + n > kTokensPerRequest) break;
        prompts.emplace_back(slot.tokens.begin(), slot.tokens.begin() + ps[i]);
        tokens += n;
      }
      auto rest = ctx.api.complete_each(request(n_probs, true), prompts);
      if (!rest) return std::unexpected(rest.error());
      if (rest->size() != prompts.size())
        return core::fail(core::ErrorKind::parse, std::to_string(prompts.size()) + " prompts got " +
                                                      std::to_string(rest->size()) + " answers");
      for (std::size_t i = 0; i < rest->size(); ++i) {
        if (auto ok = check((*rest)[i], ps[from + i], slot); !ok) return std::unexpected(ok.error());
        sum += (*rest)[i].timings;
        out.push_back(std::move((*rest)[i]));
      }
      from += prompts.size();
    }
    return out;
  }

  /// One answer's evaluated count against the schedule: a prompt of `p` tokens on a cache of
  /// slot.cached evaluates p − cached (all p from nothing).
  static core::Expected<void> check(const server::CompletionResponse& answer, int p, CellSlot& slot) {
    const int expected = p - slot.cached;
    if (answer.timings.client_measured)
      return core::fail(core::ErrorKind::unsupported,
                        "the server reports no evaluated-token counts (timings.prompt_n); longkl cannot check "
                        "that each request evaluated only what the schedule says");
    if (answer.timings.prompt_n != expected)
      return core::fail(core::ErrorKind::invalid,
                        "the server evaluated " + std::to_string(answer.timings.prompt_n) + " tokens of a " +
                            std::to_string(p) + "-token prompt (reused " + std::to_string(answer.timings.cache_n) +
                            ") where the schedule expected " + std::to_string(expected) + " on a cache of " +
                            std::to_string(slot.cached) +
                            ": its cache did not hold the schedule's prefix (another client? --cache-reuse?); "
                            "the item is not scored on other batches");
    slot.cached = p;
    return {};
  }

  static std::vector<int> positions_of(const DepthWindow& w) {
    std::vector<int> ps;
    for (int i = 0; i < w.length; ++i) ps.push_back(w.start + i);
    return ps;
  }

  /// The prompt-logprobs path: the document up to the deepest position in one request (the first
  /// window's), every window's lists read from it.
  core::Expected<void> ask_prompt(Context& ctx, CellSlot& slot, int n_probs, server::Timings& sum) const {
    if (!slot.prompt_lists.empty()) return {};
    const int last = m_schedule.windows.back().start + m_schedule.windows.back().length - 1;
    server::PromptLogprobsRequest req;
    req.top_n = n_probs;
    if (ctx.api.capabilities().has(server::Capability::tokenize)) {
      if (auto ok = tokenize(ctx, slot); !ok) return std::unexpected(ok.error());
      req.tokens.assign(slot.tokens.begin(), slot.tokens.begin() + last + 1);
    } else {
      req.text = m_corpus.text();  // SGLang tokenizes it and answers with the ids
    }
    auto answer = ctx.api.prompt_logprobs(req);
    if (!answer) return std::unexpected(answer.error());
    if (answer->positions.size() < static_cast<std::size_t>(last + 1))
      return core::fail(core::ErrorKind::invalid, "the document is " + std::to_string(answer->positions.size()) +
                                                      " tokens for this model; depth " + std::to_string(m_depth) +
                                                      " needs at least as many (a longer corpus, or a lower depth)");
    if (req.tokens.empty()) {
      slot.tokens.clear();
      for (const auto& p : answer->positions) slot.tokens.push_back(p.id);
      slot.tokens_sha256 = sha_of(slot.tokens);
    }
    std::vector<TopList> lists;
    for (std::size_t p = 0; p <= static_cast<std::size_t>(last); ++p) {
      if (p == 0) {
        lists.emplace_back();
        continue;
      }
      auto list = top_list_of(answer->positions[p], "longkl");
      if (!list) return std::unexpected(list.error());
      lists.push_back(std::move(*list));
    }
    slot.prompt_lists = std::move(lists);
    slot.prompt_evaluated = answer->timings.prompt_n;
    sum += answer->timings;
    return {};
  }

  core::Expected<ItemResult> run_window(std::size_t index, Context& ctx, CellSlot& slot) {
    const bool whole_prompt = ctx.api.capabilities().has(server::Capability::prompt_logprobs);
    if (!whole_prompt) {
      if (auto ok = tokenize(ctx, slot); !ok) return std::unexpected(ok.error());
    }
    const DepthWindow& w = m_schedule.windows[index];
    const int n_probs = ctx.cell.is_reference ? m_top_k : m_cell_top_k;
    server::Timings prompt_sum;
    if (whole_prompt) {
      if (auto ok = ask_prompt(ctx, slot, n_probs, prompt_sum); !ok) return std::unexpected(ok.error());
    }
    std::optional<LongKlResponse> reference;
    if (!ctx.cell.is_reference) {
      auto ref = read_longkl_reference(ctx.reference_records, w.key);
      if (!ref) return std::unexpected(ref.error());
      if (ref->tokens_sha256 != slot.tokens_sha256)
        return core::fail(core::ErrorKind::invalid,
                          "this cell's server tokenizes the document differently from the reference's (sha256 " +
                              slot.tokens_sha256.substr(0, 12) + " vs " + ref->tokens_sha256.substr(0, 12) +
                              "): the positions would not be the same text");
      if (ref->positions != positions_of(w))
        return core::fail(core::ErrorKind::invalid, "the reference's record of " + w.key + " scored other positions");
      reference = std::move(*ref);
    }
    server::Timings sum = prompt_sum;
    ItemResult out;
    // The schedule's windows before this one, when the cache does not hold them (a fresh server, a
    // resumed run): asked again in the same order, so this window's batches are the same as ever.
    int replayed_requests = 0, replayed_tokens = 0;
    bool first = true;
    const std::vector<int> ps = positions_of(w);
    std::vector<TopList> lists;
    if (whole_prompt) {
      for (int p : ps) lists.push_back(slot.prompt_lists[static_cast<std::size_t>(p)]);
    } else if (slot.ready_for == index) {
      first = false;
    } else {
      server::Timings replay;
      for (std::size_t i = 0; i < index; ++i) {
        auto answers = ask(ctx, slot, positions_of(m_schedule.windows[i]), 1, first, replay);
        if (!answers) return std::unexpected(answers.error());
        first = false;
        replayed_requests += static_cast<int>(answers->size());
      }
      replayed_tokens = replay.prompt_n;
      sum += replay;
    }
    server::Timings own = prompt_sum;
    if (!whole_prompt) {
      auto answers = ask(ctx, slot, ps, n_probs, first, own);
      if (!answers) return std::unexpected(answers.error());
      sum += own;
      slot.ready_for = index + 1;
      for (const auto& a : *answers) {
        auto list = top_list(a);
        if (!list) return std::unexpected(list.error());
        lists.push_back(std::move(*list));
      }
    }
    // The reference scores its own lists (0 by construction, computed all the same); a cell scores
    // its lists against the reference's.
    const std::vector<TopList>& base = reference ? reference->lists : lists;
    out = score_window(base, lists, ps);
    out.response["tokens_sha256"] = slot.tokens_sha256;
    out.response["document_tokens"] = slot.tokens.size();
    out.response["evaluated"] = own.prompt_n;
    out.response["replayed_requests"] = replayed_requests;
    out.response["replayed_tokens"] = replayed_tokens;
    out.metrics["depth"] = w.start;
    for (const auto& bin : m_schedule.bins)
      out.metrics["mean_kl_" + bin.name] = bin.name == m_schedule.bins[w.bin].name ? out.metrics["mean_kl"] : json(nullptr);
    out.timings = sum;
    return out;
  }

  std::string m_name;
  CorpusConfig m_corpus;
  DepthSchedule m_schedule;
  int m_depth;
  int m_top_k;
  int m_cell_top_k;
  std::vector<std::string> m_gate_bins;
  std::mutex m_mutex;
  std::map<std::string, CellSlot> m_slots;
};

}  // namespace

std::unique_ptr<Probe> make_longkl_probe(const json& cfg, const ConfigSource& site) {
  const config::Site& s = site.site;
  config::check_keys(cfg, {"kind", "name", "corpus", "depth", "min_depth", "windows", "window", "top_k", "cell_top_k",
                           "gate_bins"},
                     s);
  const int depth = static_cast<int>(config::get_int_in(cfg, "depth", 8000, 16, 1 << 22, s));
  const int min_depth = static_cast<int>(config::get_int_in(cfg, "min_depth", std::min(1024, depth), 1, depth, s));
  const int windows = static_cast<int>(config::get_int_in(cfg, "windows", 4, 1, 4096, s));
  const int window = static_cast<int>(config::get_int_in(cfg, "window", 8, 1, 4096, s));
  const int top_k = static_cast<int>(config::get_int_in(cfg, "top_k", 20, 1, 1000, s));
  const int cell_top_k = static_cast<int>(config::get_int_in(cfg, "cell_top_k", 100, 1, 10000, s));
  if (cell_top_k < top_k)
    s.child("cell_top_k").fail("must be at least top_k (" + std::to_string(top_k) +
                               "): the reference's ids are looked up in each cell's list");
  auto schedule = make_depth_schedule(min_depth, depth, windows, window);
  if (!schedule) s.fail(schedule.error().message);
  std::vector<std::string> bins;
  for (const auto& b : schedule->bins) bins.push_back(b.name);
  std::vector<std::string> gate_bins = config::get_strings(cfg, "gate_bins", {}, s);
  for (std::size_t i = 0; i < gate_bins.size(); ++i)
    if (std::find(bins.begin(), bins.end(), gate_bins[i]) == bins.end())
      s.child("gate_bins").index(i).fail("'" + gate_bins[i] + "' is not a bin of this schedule" +
                                         config::did_you_mean_or_list(gate_bins[i], bins));
  // The default document: random bodies long enough for the depth, by the SPM estimate with room for
  // tokenizers that make more tokens of a random literal (it is checked against the model's count).
  corpus::RandomBodiesOptions generator;
  generator.functions = 20;
  while (corpus::estimate_spm_tokens(corpus::generate_random_bodies(generator)) < static_cast<std::size_t>(depth) * 5 / 4)
    generator.functions *= 2;
  CorpusConfig corpus = read_corpus_config(cfg, site, generator, CorpusDefault::random_bodies);
  return std::make_unique<LongKlProbe>(config::get_string(cfg, "name", "longkl", s), std::move(corpus),
                                       std::move(*schedule), depth, top_k, cell_top_k, std::move(gate_bins));
}

}  // namespace kvsweep::probe
