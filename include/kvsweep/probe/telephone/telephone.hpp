#pragma once
/// The telephone probe: chains of paraphrases (each output the next input), every hop
/// scored by the embedding cosine of its message to the original text and to the previous hop.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

/// The seed text of seed 000 (the published telephone-game experiment).
inline constexpr std::string_view telephone_default_text =
    "Step 1: Boil water. Step 2: Add pasta for 8 minutes. Step 3: Drain and serve with sauce.";
/// The published harness's template; `{message}` is replaced by the current message.
inline constexpr std::string_view telephone_default_template = "Paraphrase this to the next agent: {message}";

enum class TelephoneMode { chat, raw };

/// The telephone probe's config, defaults filled in, validated.
struct TelephoneConfig {
  std::string name = "telephone";
  std::vector<std::string> texts{std::string(telephone_default_text)};
  std::string template_text{telephone_default_template};
  std::string preset;  // the preset the template came from, empty for "template" or the default
  int hops = 30;
  double temperature = 0.7;
  std::vector<std::uint32_t> seeds{42, 137, 256, 512, 1024};
  int max_tokens = 2048;       // the cap on a hop's answer
  // A hop's budget is relative to its input: min(max_tokens, budget_factor × input tokens +
  // budget_plus), so a model that runs on cannot turn one hop into minutes (the published
  // harness allowed 16384). budget_factor 0 turns it off (max_tokens for every hop). When the
  // backend cannot tokenize, max_tokens is used.
  double budget_factor = 4.0;
  int budget_plus = 64;
  TelephoneMode mode = TelephoneMode::chat;
  std::optional<std::string> system;
  bool suppress_thinking = true;
  double threshold = 0.8;
  int top_k = 40;
  double top_p = 1.0;
  double min_p = 0.0;
  std::vector<InputFile> inputs;  // texts_file, when given
};

/// Reads and validates a `{"kind":"telephone", …}` object. Throws core::FatalError
/// "<file>: <path>.<key>: what is wrong (did you mean …?)" on an unknown key, a wrong type,
/// a value out of range or an unreadable texts_file (resolved against site.base_dir).
TelephoneConfig parse_telephone_config(const nlohmann::json& config, const ConfigSource& site);

/// The template of a named preset ("published", "perez2025", "mohamed2025"), or nullopt.
std::optional<std::string> telephone_preset(std::string_view name);
/// The names of all presets, for messages.
std::vector<std::string> telephone_preset_names();

/// Every `{message}` in `tmpl` replaced by `message` (nothing else in the template is special).
std::string render_template(std::string_view tmpl, std::string_view message);

/// The sampling seed of hop `hop` (1-based) of a chain sampled with `chain_seed`:
/// (chain_seed + hop − 1) mod (2^32 − 1). Hop 1 uses the chain seed itself; later hops get
/// fresh seeds, so a message that comes back unchanged is not forced to repeat forever by
/// an identical sampler state. The modulus skips 0xFFFFFFFF, which llama-server reads as
/// "random seed" (-1).
std::uint32_t telephone_hop_seed(std::uint32_t chain_seed, int hop);

/// `text` without a leading `<think>…</think>` block (after leading whitespace) and with
/// surrounding whitespace trimmed. An unterminated leading `<think>` (a hop cut mid-thought)
/// leaves nothing.
std::string strip_think_block(std::string_view text);

/// Items: one chain per (text index, seed), key "t<index>-s<seed>", spec {text, seed}.
///
/// run() embeds the original text (the embedder caches it), then for hop = 1..hops sends the
/// template around the current message with seed telephone_hop_seed(seed, hop) and every
/// sampling field set. In chat mode the request is [system?][user]; with suppress_thinking it
/// carries chat_template_kwargs {"enable_thinking": false}. In raw mode the rendered template
/// is the prompt. A leading think block is always stripped from the output — it is never the
/// message meant for the next agent — and the output is trimmed.
///
/// An empty output keeps the previous message (its similarities are those of the kept
/// message) and is counted in empty_hops. A hop whose generation hit the token limit is
/// flagged `cut` and counted in cut_hops.
///
/// A failed request: on hop 1 the item fails with the error. On a later hop the hops done so
/// far are kept, the record holds failed_at_hop and the error, and the metrics cover the
/// successful hops only — except connect, timeout and cancelled errors, which are always
/// returned as errors: they say something about the server (down, wedged) or the user
/// (interrupt) that the runner must act on, and a chain cut short by them is rerun on resume.
/// An embedder failure or an unusable vector also fails the item: without it the chain
/// cannot be scored.
///
/// Metrics (over successful hops): final_similarity (last hop's similarity to the original),
/// mean_similarity, min_similarity, first_below_threshold (the first hop, 1-based, whose
/// similarity to the original is strictly below `threshold`; completed hops + 1 when none is,
/// so it stays numeric and averages as "survived the whole chain"), empty_hops, cut_hops.
class TelephoneProbe final : public Probe {
 public:
  explicit TelephoneProbe(TelephoneConfig config);

  std::string kind() const override { return "telephone"; }
  std::string name() const override { return m_config.name; }
  std::vector<Item> items() const override;
  std::vector<InputFile> inputs() const override { return m_config.inputs; }
  bool needs_embedder() const override { return true; }
  /// An upper bound in tokens (bytes bound the tokens of a byte-level BPE): template, the
  /// longest message a hop can see, the answer budget, and room for a chat template.
  int min_context() const override;
  core::Expected<ItemResult> run(const Item& item, Context& ctx) override;
  std::vector<MetricSpec> metrics() const override;
  bool deterministic() const override;

  const TelephoneConfig& config() const { return m_config; }

 private:
  /// Token counts of the texts whose budget was worked out, by model: a text (the original of
  /// every seed and cell, or a repeated answer) is tokenized once per run, not once per hop.
  struct TokenCounts;
  TelephoneConfig m_config;
  std::shared_ptr<TokenCounts> m_counts;
};

/// Builds the telephone probe from its config object (see parse_telephone_config).
std::unique_ptr<Probe> make_telephone_probe(const nlohmann::json& config, const ConfigSource& site);

/// One hop of a chain as an ok record's response holds it (`"hops": [{hop, sim_original, …}]`): the
/// probe writes these fields and the report reads them back through `telephone_hops`.
struct TelephoneHop {
  int hop = 0;                // 1-based; 0 when the record does not say
  double sim_original = 0.0;  // cosine of the hop's message to the original text

  /// nullopt when `j` is not an object with a numeric "sim_original" (a hop that did not score).
  static std::optional<TelephoneHop> from_json(const nlohmann::json& j);
};

/// The scored hops of a telephone record's response, in order, each numbered (a hop the record does
/// not number by its place in the array); none when the response holds no "hops" array.
std::vector<TelephoneHop> telephone_hops(const nlohmann::json& response);

}  // namespace kvsweep::probe
