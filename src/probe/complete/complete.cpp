#include "kvsweep/probe/complete/complete.hpp"

#include "kvsweep/config/keys.hpp"
#include "kvsweep/probe/prompts.hpp"
#include "kvsweep/probe/greedy.hpp"
#include "kvsweep/score/answer_key.hpp"

namespace kvsweep::probe {

namespace {

const std::vector<std::string> kDefaultPrompts = {
    "Once upon a time",
    "The capital of France is",
    "def fibonacci(n):",
    "Step 1: Boil water. Step 2:",
};

class CompleteProbe final : public Probe {
 public:
  CompleteProbe(std::string name, Prompts prompts, int max_tokens, bool chat)
      : m_name(std::move(name)), m_prompts(std::move(prompts)), m_max_tokens(max_tokens), m_chat(chat) {}

  std::string kind() const override { return "complete"; }
  std::string name() const override { return m_name; }
  int min_context() const override { return 512 + m_max_tokens; }
  std::vector<server::Need> needs() const override {
    if (m_chat) return {{server::Capability::chat, ""}};
    return {};
  }
  bool compares_with_reference() const override { return true; }  // match_reference

  std::vector<Item> items() const override { return prompt_items(m_prompts.prompts); }
  std::vector<InputFile> inputs() const override { return m_prompts.inputs; }

  std::vector<MetricSpec> metrics() const override {
    // Both compare the answer with the reference cell's: a change, not a loss (a rewording counts).
    std::vector<MetricSpec> out = {change("match_reference", Direction::higher_better, MetricKind::binary),
                                   change("common_prefix_chars", Direction::higher_better, MetricKind::count),
                                   diagnostic("predicted_n", MetricKind::count)};
    // Against ground truth, where the prompts carry it: the answer key, gated by default. Declared
    // only then (a probe without an answer key has no quality to judge); an item without `expect`
    // among those with records `correct` as null: it has no answer to be scored against.
    if (m_prompts.any_expect()) out.push_back(quality("correct", Direction::higher_better, MetricKind::binary));
    return out;
  }
  bool deterministic() const override { return true; }  // greedy, seed fixed

  core::Expected<ItemResult> run(const Item& item, Context& ctx) override {
    // A cell's answer is recorded only beside the reference's: an item the reference did not answer
    // fails (and runs again on resume once it has), never an ok record without match_reference.
    const Record* reference = nullptr;
    if (!ctx.cell.is_reference) {
      if (ctx.reference_records)
        for (const auto& r : *ctx.reference_records)
          if (r.item == item.key && r.ok()) reference = &r;
      if (!reference || !reference->response.is_object() || !reference->response.contains("content") ||
          !reference->response["content"].is_string())
        return core::fail(core::ErrorKind::invalid,
                          "no ok answer of the reference cell for item " + item.key +
                              " (did its complete item fail?); nothing to compare with: it runs again on resume "
                              "once the reference has one");
    }
    server::CompletionRequest req;
    std::string prompt = item.spec.at("prompt").get<std::string>();
    if (m_chat) req.messages = {{"user", prompt}};
    else req.prompt = prompt;
    req.n_predict = m_max_tokens;
    set_greedy(req);
    req.cache_prompt = false;
    auto res = ctx.api.complete(req);
    if (!res) return std::unexpected(res.error());
    ItemResult out;
    out.response = {{"content", res->content}, {"stop_type", res->stop_type}};
    out.timings = res->timings;
    out.metrics["predicted_n"] = res->timings.predicted_n;
    if (m_prompts.any_expect()) {
      if (item.spec.contains("expect")) {
        auto expect = score::parse_expect(item.spec["expect"]);
        if (!expect) return core::fail(core::ErrorKind::invalid, "item " + item.key + ": " + expect.error());
        out.metrics["correct"] = score::answer_correct(res->content, *expect) ? 1 : 0;
      } else {
        out.metrics["correct"] = nullptr;
      }
    }
    // Against the reference cell's answer to the same prompt (absent on the reference itself
    // until it has run; the reference trivially matches itself).
    if (ctx.cell.is_reference) {
      out.metrics["match_reference"] = 1;
      out.metrics["common_prefix_chars"] = res->content.size();
    } else {
      const std::string ref = reference->response["content"].get<std::string>();
      out.metrics["match_reference"] = ref == res->content ? 1 : 0;
      out.metrics["common_prefix_chars"] = common_prefix(ref, res->content);
    }
    return out;
  }

 private:
  std::string m_name;
  Prompts m_prompts;
  int m_max_tokens;
  bool m_chat;
};

}  // namespace

std::size_t common_prefix(std::string_view a, std::string_view b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

std::unique_ptr<Probe> make_complete_probe(const nlohmann::json& cfg, const ConfigSource& site) {
  const config::Site& s = site.site;
  config::check_keys(cfg, {"kind", "name", "prompts", "prompts_file", "limit", "max_tokens", "mode"}, s);
  Prompts prompts = read_prompts(cfg, site, kDefaultPrompts);
  // The first `limit` prompts (inline ones, then the file's): a shipped answer key at the size a run
  // can afford; raising it later grows the run by the next items, keeping those already recorded.
  if (cfg.contains("limit")) {
    const auto limit = static_cast<std::size_t>(config::get_int_in(cfg, "limit", 0, 1, 1 << 24, s));
    if (prompts.prompts.size() > limit) prompts.prompts.resize(limit);
  }
  int max_tokens = static_cast<int>(config::get_int(cfg, "max_tokens", 32, s));
  if (max_tokens < 1) s.child("max_tokens").fail("must be >= 1");
  std::string mode = config::get_string(cfg, "mode", "raw", s);
  if (mode != "raw" && mode != "chat") s.child("mode").fail("expected \"raw\" or \"chat\", got \"" + mode + "\"");
  return std::make_unique<CompleteProbe>(config::get_string(cfg, "name", "complete", s), std::move(prompts), max_tokens,
                                         mode == "chat");
}

}  // namespace kvsweep::probe
