#pragma once
/// The recall probe: positional verbatim recall as the published codeneedle harness runs it —
/// the whole corpus first, then "reproduce the first N body lines of function X" — scored
/// line by line against the function's real body.

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/corpus/extract.hpp"
#include "kvsweep/corpus/random_bodies.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/recall/shared_prefix.hpp"
#include "kvsweep/score/line_align.hpp"

namespace kvsweep::probe {

enum class RecallMode { chat, raw };

/// What the prompt ends with: nothing (codeneedle's task: the model must find the function by
/// name) or the target's own signature — a cued positional recall, where the answer is the
/// continuation of that line (raw mode: the end of the prompt; chat mode: an assistant prefill).
enum class RecallCue { none, signature };
std::string_view to_string(RecallCue cue);

/// The recall probe's config, defaults filled in, validated.
struct RecallConfig {
  std::string name = "recall";
  std::vector<std::string> files;                              // corpus.files, as written in the config
  std::optional<corpus::RandomBodiesOptions> random_bodies;    // corpus.random_bodies instead of files
  std::filesystem::path base_dir;                              // relative files resolve against it
  int sample_size = 16;          // targets sampled (config "sample_size", or its older name "k")
  std::int64_t seed = 42;        // the sampling seed (random.Random(seed))
  int lines = 20;                // primary lines asked for; also the minimum body length of a target
  int bonus_lines = 40;          // further body lines that count as bonus when produced
  int pass_lines = 8;            // "pass_lines": an integer, or a ratio in (0, 1) of `lines` (rounded up)
  bool relax_indent = false;
  score::Alignment align = score::Alignment::difflib;
  RecallMode mode = RecallMode::chat;
  RecallCue cue = RecallCue::none;
  int max_tokens = 6000;          // the hard cap (the published harness's only bound)
  bool bounded = true;           // bound each answer by the expected answer's size (below); false = max_tokens only
  double budget_factor = 1.25;   // n_predict = min(max_tokens, budget_factor × expected tokens + budget_plus),
  int budget_plus = 32;          //   expected = the item's primary + bonus lines, counted by the server's /tokenize
  int stop_extra_lines = 10;     // streamed: stop once the answer has this many lines more than primary + bonus
  bool prefill_no_think = true;  // chat mode: end the messages with an empty think block to continue
  std::uint32_t sampling_seed = 42;  // the server's sampler seed (greedy decoding makes it moot)
};

/// Reads and validates a `{"kind":"recall", …}` object. Throws core::FatalError
/// "<file>: <path>.<key>: what is wrong (did you mean …?)" on an unknown key (at any level),
/// a wrong type or a value out of range.
RecallConfig parse_recall_config(const nlohmann::json& config, const ConfigSource& site);

/// The file name a generated random-bodies corpus is shown under.
inline constexpr std::string_view random_bodies_file_name = "random-bodies.py";

/// The corpus a config names: the files read from disk, or the generated random bodies.
/// Throws core::FatalError (naming the config site) when a file cannot be read or the
/// files mix languages.
corpus::Corpus load_recall_corpus(const RecallConfig& config, const ConfigSource& site);

/// The question that follows the corpus: reproduce the first `n` body lines of `target`.
/// `multi_file` adds which file the function is in; with the signature cue it says that the
/// signature is given and the body follows it.
std::string recall_task_text(const corpus::Target& target, int n, bool multi_file, RecallCue cue = RecallCue::none);

/// The target's signature as it stands in the corpus: its lines from the `def` / `function` /
/// name line (start_line) to the line before the body (the `def …:` line, or the line with the
/// opening brace), joined with "\n", without a final newline.
std::string signature_text(const corpus::Corpus& corpus, const corpus::Target& target);

/// The whole prompt: corpus text, "\n\n---\n\n", the task. The corpus comes first so the
/// server's prefix cache serves every question after one prefill. With the signature cue in raw
/// mode the prompt then ends with the signature and a newline.
std::string recall_prompt(const corpus::Corpus& corpus, const corpus::Target& target, int n,
                          RecallCue cue = RecallCue::none);

/// The assistant prefill that skips thinking (the server continues this message).
inline constexpr std::string_view no_think_prefill = "<think>\n\n</think>\n\n";

/// Items: the codeneedle stratified sample of the corpus's targets (k, seed), key = function
/// name, spec = {name, file, start_line, body_start_line, body_lines}.
///
/// run() asks for the item's function with temperature 0, top_k 40, top_p 1, min_p 0, a
/// fixed sampler seed and cache_prompt. Bounded answers (the default): n_predict is the
/// budget min(max_tokens, budget_factor × tokens of the expected primary + bonus lines +
/// budget_plus) — max_tokens where the backend cannot tokenize — and the answer is streamed
/// and cancelled once it holds stop_extra_lines more lines (as scored: think block, fences and
/// edge blank lines removed) than primary + bonus; lines past that cannot match anything. Chat mode sends
/// [user: prompt] and, with prefill_no_think, a final assistant message `no_think_prefill`;
/// raw mode sends the prompt as is. With "cue": "signature" the target's signature follows
/// (raw: at the end of the prompt; chat: in the assistant prefill, after the no-think block).
/// Raw mode sends the prompt as token ids (SharedPrefix: the corpus tokenized once per model and
/// run, the question per item; text where ids would differ from the server's own tokens). When
/// the cell's n_ctx is known, a preflight counts the prompt's tokens with the server's tokenizer
/// (the corpus once per model, the question per item) and fails the item with an
/// `exceeds_context` error, before any generation, when prompt plus the budget exceed the context. The content is scored with score::score_recall.
///
/// Metrics: primary_matched, bonus_matched, hallucinated (lower is better), passed (0/1),
/// produced_lines, cut (1 when the answer was stopped before the model ended it; lower is better).
/// The response is {"text": the raw content, "budget": n_predict, "expected_tokens": tokens of
/// primary + bonus (null when unknown), "cut": null | "budget" (stopped at n_predict) |
/// "lines" (cancelled after enough lines), "corpus_tokens", "question_tokens": the preflight's
/// counts (null when n_ctx is unknown or the backend cannot tokenize), "cue": "none" | "signature",
/// "prompt_as": "ids" (raw mode, SharedPrefix) | "text"}.
class RecallProbe final : public Probe {
 public:
  RecallProbe(RecallConfig config, corpus::Corpus corpus);

  std::string kind() const override { return "recall"; }
  std::string name() const override { return m_config.name; }
  std::vector<Item> items() const override;
  /// corpus.files as expanded, each hashed as the corpus was read (random bodies: none).
  std::vector<InputFile> inputs() const override { return m_inputs; }
  std::optional<std::size_t> items_max() const override { return m_corpus.targets.size(); }
  /// corpus bytes / 3 (bytes × 3/4 for random bodies, which tokenize at ~1.5 bytes a token)
  /// + the largest answer budget (estimated the same way; max_tokens when not bounded)
  /// + 256 for the question and the chat template.
  int min_context() const override;
  /// Chat mode: chat. Raw mode sends token ids and counts the prompt with the model's tokenizer; without
  /// them it sends the prompt as text and leaves the length to the server.
  std::vector<server::Need> needs() const override;
  core::Expected<ItemResult> run(const Item& item, Context& ctx) override;
  std::vector<MetricSpec> metrics() const override;
  bool deterministic() const override;
  /// primary_matched, 0 … lines.
  std::optional<Calibration> calibration() const override;

  const RecallConfig& config() const { return m_config; }
  const corpus::Corpus& corpus() const { return m_corpus; }
  /// The sampled targets, in sampling order.
  const std::vector<corpus::Target>& sampled() const { return m_sampled; }
  /// The request run() sends for a target, generating at most n_predict tokens (max_tokens
  /// when not given); without stop_when (run() adds it for bounded answers).
  server::CompletionRequest request_for(const corpus::Target& target, int n_predict = 0) const;

 private:
  struct PromptTokens {
    int corpus = -1;    // the corpus text with BOS; -1 when not counted
    int question = -1;  // "\n\n---\n\n" + the task
  };
  /// Raw mode: puts the prompt's token ids in `request` where they equal the server's own tokens of
  /// its text (SharedPrefix). Then the preflight, when the cell's n_ctx is known: counts the
  /// prompt's tokens (the corpus once per model, the question per item) and fails with
  /// exceeds_context when prompt plus `budget` exceed the context.
  core::Expected<PromptTokens> prepare(const corpus::Target& target, int budget, Context& ctx,
                                       server::CompletionRequest& request);

  RecallConfig m_config;
  corpus::Corpus m_corpus;
  std::vector<corpus::Target> m_sampled;
  std::vector<InputFile> m_inputs;
  SharedPrefix m_prefix;  // the corpus, tokenized once per model
};

/// Builds the recall probe from its config object (parse_recall_config, then the corpus).
std::unique_ptr<Probe> make_recall_probe(const nlohmann::json& config, const ConfigSource& site);

}  // namespace kvsweep::probe
