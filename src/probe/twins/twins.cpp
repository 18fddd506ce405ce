#include "kvsweep/probe/twins/twins.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "kvsweep/probe/greedy.hpp"
#include "kvsweep/server/token_logprobs.hpp"

namespace kvsweep::probe {

namespace {

using Tokens = std::vector<std::int32_t>;
using nlohmann::json;

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

core::Expected<std::vector<TwinsTop>> top_of(const server::CompletionResponse& res) {
  if (res.probs.empty() || res.probs.front().top.empty())
    return core::fail(core::ErrorKind::parse, "the answer carries no top log-probabilities (was n_probs ignored?)");
  std::vector<TwinsTop> out;
  for (const auto& t : res.probs.front().top) {
    if (t.id < 0)
      return core::fail(core::ErrorKind::unsupported,
                        "the server reports top log-probabilities without token ids; twins needs them");
    if (const std::string why = server::impossible_logprob(t.logprob); !why.empty())
      return core::fail(core::ErrorKind::parse, "the server reports a top log-probability of " +
                                                    std::to_string(t.logprob) + ": " + why);
    out.push_back({t.id, t.logprob});
  }
  return out;
}

/// The item's tokens: the prompt's, and the answer's after it (the true value's and each rival's).
struct Answers {
  Tokens prompt;
  Tokens truth;
  std::vector<Tokens> rivals;
};

/// What the reference measured for an item, read back on every other cell.
struct Measured {
  TwinsMargin margin;
  std::size_t diverge_at = 0;  // answer tokens before the first that differs
  std::int32_t true_token = -1;
  std::int32_t rival_token = -1;
  std::string rival;  // the best rival's item key
  json token_distance = nullptr;
};

class TwinsProbe final : public Probe {
 public:
  explicit TwinsProbe(TwinsConfig config) : m_config(std::move(config)), m_set(generate_twins(m_config)) {}

  std::string kind() const override { return "twins"; }
  std::string name() const override { return m_config.name; }
  bool compares_with_reference() const override { return true; }
  bool deterministic() const override { return true; }  // greedy
  std::vector<server::Need> needs() const override {
    return {{server::Capability::token_prompts, ""},
            {server::Capability::logprobs, ""},
            {server::Capability::logprob_ids, ""},
            {server::Capability::tokenize, ""}};
  }
  int min_context() const override {
    // Two tokens a word is generous for these words in either vocabulary.
    const int per_record = 2 * (m_config.key_words + m_config.value_words) + 4;
    const auto per_table = m_set.records.size() / static_cast<std::size_t>(m_config.tables);
    return static_cast<int>(per_table) * per_record + 96 + 2 * m_config.value_words;
  }
  std::optional<std::size_t> items_max() const override { return m_set.records.size(); }

  std::vector<Item> items() const override {
    std::vector<Item> out;
    for (const std::size_t i : m_set.asked) {
      const TwinsRecord& r = m_set.records[i];
      json rivals = json::array();
      for (const std::size_t j : twins_rivals(m_set, i)) rivals.push_back(twins_item_key(m_set.records[j]));
      out.push_back({twins_item_key(r),
                     {{"key", r.key},
                      {"value", r.value},
                      {"rivals", rivals},
                      {"distance", r.distance},
                      {"at", r.at == TwinsSide::end ? "end" : "start"}}});
    }
    return out;
  }

  std::vector<MetricSpec> metrics() const override {
    return {quality("recalled", Direction::higher_better, MetricKind::binary),
            quality("took_twin", Direction::lower_better, MetricKind::binary),
            quality("recalled_low", Direction::higher_better, MetricKind::binary),
            diagnostic("margin", MetricKind::continuous, Direction::higher_better),
            diagnostic("cell_margin", MetricKind::continuous, Direction::higher_better),
            diagnostic("token_distance", MetricKind::count)};
  }
  std::optional<Calibration> calibration() const override { return Calibration{"recalled", 0, 1}; }

  core::Expected<ItemResult> run(const Item& item, Context& ctx) override {
    const auto at = std::find_if(m_set.asked.begin(), m_set.asked.end(),
                                 [&](std::size_t i) { return twins_item_key(m_set.records[i]) == item.key; });
    if (at == m_set.asked.end()) return core::fail(core::ErrorKind::invalid, "twins: no item '" + item.key + "'");
    const std::size_t index = *at;
    const TwinsRecord& query = m_set.records[index];
    const std::vector<std::size_t> rivals = twins_rivals(m_set, index);
    ItemResult out;
    auto answers = tokens_of(ctx, query, rivals);
    if (!answers) return std::unexpected(answers.error());

    // The answer: greedy, up to the value's tokens and a newline.
    server::CompletionRequest req;
    req.tokens = answers->prompt;
    req.n_predict = static_cast<int>(answers->truth.size()) + 2;
    req.stop = {"\n"};
    set_greedy(req);
    req.cache_prompt = true;
    auto reply = ctx.api.complete(req);
    if (!reply) return std::unexpected(reply.error());
    out.timings += reply->timings;
    std::vector<std::string> rival_values;
    for (const std::size_t j : rivals) rival_values.push_back(m_set.records[j].value);
    const TwinsOutcome outcome = classify_answer(reply->content, query.value, rival_values);
    json took = nullptr;
    if (outcome == TwinsOutcome::twin) {
      const std::string answer = reply->content.substr(0, reply->content.find('\n'));
      for (const std::size_t j : rivals) {
        if (answer.find(m_set.records[j].value) != std::string::npos) took = twins_item_key(m_set.records[j]);
      }
    }

    auto measured = ctx.cell.is_reference ? measure(ctx, query, rivals, *answers, out.timings)
                                          : from_reference(ctx, item.key);
    if (!measured) return std::unexpected(measured.error());
    double cell_margin = measured->margin.value;
    if (!ctx.cell.is_reference && measured->margin.bound != MarginBound::unknown) {
      if (measured->diverge_at >= answers->truth.size() || answers->truth[measured->diverge_at] != measured->true_token)
        return core::fail(core::ErrorKind::invalid, "the reference's divergence point of " + item.key +
                                                        " is not this cell's answer token (another tokenizer?)");
      auto top = tops_at(ctx, *answers, {measured->diverge_at}, out.timings);
      if (!top) return std::unexpected(top.error());
      cell_margin = margin_from_top(top->front(), measured->true_token, measured->rival_token).value;
    }
    const std::optional<int> bin = margin_bin(measured->margin.value, m_config.bins);
    const bool correct = outcome == TwinsOutcome::correct;
    const char* outcome_name = correct ? "correct" : outcome == TwinsOutcome::twin ? "twin" : "other";
    out.response = {{"answer", reply->content},
                    {"outcome", outcome_name},
                    {"took", took},
                    {"prompt_n", answers->prompt.size()},
                    {"answer_tokens", answers->truth.size()},
                    {"margin", number_or_null(measured->margin.value)},
                    {"margin_bound", to_string(measured->margin.bound)},
                    {"best_rival", measured->rival},
                    {"diverge_at", measured->diverge_at},
                    {"true_token", measured->true_token},
                    {"rival_token", measured->rival_token},
                    {"token_distance", measured->token_distance},
                    {"bin", bin ? json(*bin) : json(nullptr)},
                    {"bin_label", bin ? json(margin_bin_label(*bin, m_config.bins)) : json(nullptr)}};
    out.metrics = {{"recalled", correct ? 1 : 0},
                   {"took_twin", outcome == TwinsOutcome::twin ? 1 : 0},
                   {"recalled_low", bin && *bin == 0 ? json(correct ? 1 : 0) : json(nullptr)},
                   {"margin", number_or_null(measured->margin.value)},
                   {"cell_margin", number_or_null(cell_margin)},
                   {"token_distance", measured->token_distance}};
    return out;
  }

 private:
  /// Tokens of `tail` + `answer` after those of `tail` alone: the answer as it continues the prompt's
  /// last line (the line is short, so each rival costs one small /tokenize).
  static core::Expected<Tokens> continuation(Context& ctx, const std::string& tail, const std::string& answer) {
    auto line = ctx.api.tokenize(tail, false);
    if (!line) return std::unexpected(line.error());
    auto both = ctx.api.tokenize(tail + answer, false);
    if (!both) return std::unexpected(both.error());
    if (both->size() <= line->size() || !std::equal(line->begin(), line->end(), both->begin()))
      return core::fail(core::ErrorKind::parse, "the tokens of the last line are not a prefix of the line with its answer");
    return Tokens(both->begin() + static_cast<std::ptrdiff_t>(line->size()), both->end());
  }

  core::Expected<Answers> tokens_of(Context& ctx, const TwinsRecord& query, const std::vector<std::size_t>& rivals) const {
    const std::string prompt = twins_prompt(m_set, query);
    Answers a;
    auto p = ctx.api.tokenize(prompt, true);
    if (!p) return std::unexpected(p.error());
    a.prompt = std::move(*p);
    auto full = ctx.api.tokenize(prompt + " " + query.value, true);
    if (!full) return std::unexpected(full.error());
    if (full->size() <= a.prompt.size() || !std::equal(a.prompt.begin(), a.prompt.end(), full->begin()))
      return core::fail(core::ErrorKind::parse, "the prompt's tokens are not a prefix of the prompt with its answer");
    a.truth.assign(full->begin() + static_cast<std::ptrdiff_t>(a.prompt.size()), full->end());
    const std::string tail = prompt.substr(prompt.rfind('\n') + 1);
    auto check = continuation(ctx, tail, " " + query.value);
    if (!check) return std::unexpected(check.error());
    if (*check != a.truth)
      return core::fail(core::ErrorKind::parse, "the answer tokenizes differently after the last line than after the "
                                                "whole prompt; twins cannot tell the rivals' tokens");
    for (const std::size_t j : rivals) {
      auto r = continuation(ctx, tail, " " + m_set.records[j].value);
      if (!r) return std::unexpected(r.error());
      a.rivals.push_back(std::move(*r));
    }
    return a;
  }

  /// The top-N lists after prompt + truth[0..d) for each d, one request.
  core::Expected<std::vector<std::vector<TwinsTop>>> tops_at(Context& ctx, const Answers& a,
                                                             const std::vector<std::size_t>& at,
                                                             server::Timings& sum) const {
    server::CompletionRequest req;
    req.n_predict = 1;
    req.n_probs = m_config.top_n;
    set_greedy(req);
    req.cache_prompt = true;
    std::vector<Tokens> prompts;
    for (const std::size_t d : at) {
      Tokens p = a.prompt;
      p.insert(p.end(), a.truth.begin(), a.truth.begin() + static_cast<std::ptrdiff_t>(d));
      prompts.push_back(std::move(p));
    }
    auto answers = ctx.api.complete_each(req, prompts);
    if (!answers) return std::unexpected(answers.error());
    if (answers->size() != prompts.size())
      return core::fail(core::ErrorKind::parse, std::to_string(prompts.size()) + " prompts got " +
                                                    std::to_string(answers->size()) + " answers");
    std::vector<std::vector<TwinsTop>> out;
    for (const auto& res : *answers) {
      sum += res.timings;
      auto top = top_of(res);
      if (!top) return std::unexpected(top.error());
      out.push_back(std::move(*top));
    }
    return out;
  }

  /// The reference: each rival's gap at its first differing token; the item's margin is the smallest.
  core::Expected<Measured> measure(Context& ctx, const TwinsRecord& query, const std::vector<std::size_t>& rivals,
                                   const Answers& a, server::Timings& sum) const {
    std::map<std::size_t, std::vector<std::size_t>> by_point;  // divergence point → rivals (indices into a.rivals)
    for (std::size_t r = 0; r < a.rivals.size(); ++r) {
      if (auto d = first_divergence(a.truth, a.rivals[r])) by_point[*d].push_back(r);
    }
    Measured best;
    best.margin = {std::numeric_limits<double>::quiet_NaN(), MarginBound::unknown};
    if (by_point.empty()) return best;
    std::vector<std::size_t> points;
    for (const auto& [d, _] : by_point) points.push_back(d);
    auto tops = tops_at(ctx, a, points, sum);
    if (!tops) return std::unexpected(tops.error());
    std::size_t best_r = a.rivals.size();
    for (std::size_t k = 0; k < points.size(); ++k) {
      const std::size_t d = points[k];
      for (const std::size_t r : by_point[d]) {
        const TwinsMargin m = margin_from_top((*tops)[k], a.truth[d], a.rivals[r][d]);
        if (m.bound == MarginBound::unknown) continue;
        if (best.margin.bound == MarginBound::unknown || m.value < best.margin.value) {
          best = {m, d, a.truth[d], a.rivals[r][d], twins_item_key(m_set.records[rivals[r]]), nullptr};
          best_r = r;
        }
      }
    }
    if (best_r < a.rivals.size()) {
      auto k1 = ctx.api.tokenize("- " + query.key + ":", false);
      if (!k1) return std::unexpected(k1.error());
      auto k2 = ctx.api.tokenize("- " + m_set.records[rivals[best_r]].key + ":", false);
      if (!k2) return std::unexpected(k2.error());
      best.token_distance = token_edit_distance(*k1, *k2);
    }
    return best;
  }

  static core::Expected<Measured> from_reference(const Context& ctx, const std::string& key) {
    if (ctx.reference_records) {
      for (const auto& r : *ctx.reference_records) {
        if (r.item != key || !r.ok()) continue;
        try {
          const json& resp = r.response;
          Measured m;
          const std::string bound = resp.at("margin_bound").get<std::string>();
          m.margin.bound = bound == "exact"      ? MarginBound::exact
                           : bound == "at_least" ? MarginBound::at_least
                           : bound == "at_most"  ? MarginBound::at_most
                                                 : MarginBound::unknown;
          m.margin.value = resp.at("margin").is_number() ? resp["margin"].get<double>()
                                                         : std::numeric_limits<double>::quiet_NaN();
          m.diverge_at = resp.at("diverge_at").get<std::size_t>();
          m.true_token = resp.at("true_token").get<std::int32_t>();
          m.rival_token = resp.at("rival_token").get<std::int32_t>();
          m.rival = resp.at("best_rival").get<std::string>();
          m.token_distance = resp.at("token_distance");
          return m;
        } catch (const std::exception& e) {
          return core::fail(core::ErrorKind::parse, "the reference record of " + key + " lacks its margin (" + e.what() + ")");
        }
      }
    }
    return core::fail(core::ErrorKind::invalid, "no ok record of the reference cell for item " + key +
                                                    " (did its twins item fail?); its margin is measured there");
  }

  TwinsConfig m_config;
  TwinsSet m_set;
};

}  // namespace

std::unique_ptr<Probe> make_twins_probe(const nlohmann::json& config, const ConfigSource& site) {
  return std::make_unique<TwinsProbe>(parse_twins_config(config, site));
}

}  // namespace kvsweep::probe
