#pragma once
/// server::Api spoken to the OpenAI HTTP API that vLLM, SGLang, TabbyAPI, llama-cpp-python and
/// llama-server all serve: /v1/completions (text or token ids, per-token top logprobs),
/// /v1/chat/completions (messages, tools, logprobs), /v1/embeddings, /v1/models, and the server's
/// own tokenizer endpoints where it has them.
//
// Requests always carry every sampling field kvsweep decides (temperature, top_p, top_k, min_p, seed,
// presence_penalty, frequency_penalty), then the server's own neutral fields (OpenAiOptions::extra,
// e.g. llama.cpp's repeat_penalty, vLLM's repetition_penalty), then the request's extra (tools, …).
// Logprobs are read in both shapes servers answer with: `logprobs.content[]` ({token, logprob,
// top_logprobs[{token, logprob, id?}]}: llama-server, chat everywhere) and the legacy completions shape
// (`tokens`, `token_logprobs`, `top_logprobs[{text: logprob}]`); a token written "token_id:N" (vLLM's
// return_tokens_as_token_ids) gives its id. Timings are the server's `timings` when it sends them
// (llama-server), else kvsweep's wall clock and the `usage` counts, marked Timings::client_measured.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/http/client.hpp"
#include "kvsweep/server/api.hpp"
#include "kvsweep/server/capabilities.hpp"

namespace kvsweep::server {

/// Which tokenizer endpoints a server has (none of them is part of the OpenAI API).
enum class TokenizerApi {
  none,          // no tokenizer over HTTP: tokenize/detokenize are ErrorKind::unsupported
  llama_server,  // POST /tokenize {content, add_special} → {tokens}; /detokenize {tokens} → {content}
  vllm,          // POST /tokenize {model, prompt, add_special_tokens} → {tokens}; /detokenize {model, tokens} → {prompt}
  tabbyapi,      // POST /v1/token/encode {text, add_bos_token} → {tokens}; /v1/token/decode {tokens} → {text}
};
std::optional<TokenizerApi> parse_tokenizer_api(std::string_view name);
std::string_view to_string(TokenizerApi api);

/// How a server answers every prompt position's top-n (Api::prompt_logprobs); none of it is the OpenAI API.
enum class PromptLogprobsApi {
  none,    // unsupported
  vllm,    // POST /v1/completions {prompt, max_tokens 1, prompt_logprobs: n} → choices[0].prompt_logprobs:
           // [null, {"<id>": {logprob, rank, decoded_token}, …}, …] (the prompt's own token among them)
  sglang,  // POST /generate {input_ids | text, sampling_params, return_logprob, logprob_start_len 0,
           // top_logprobs_num: n} → meta_info.input_token_logprobs [[logprob, id, text], …] and
           // meta_info.input_top_logprobs [null, [[logprob, id, text], …], …]
};
std::optional<PromptLogprobsApi> parse_prompt_logprobs_api(std::string_view name);

/// The prompt log-probabilities of a vLLM /v1/completions answer to `tokens` (their ids name each
/// position's own token) or of an SGLang /generate answer; fails (parse) naming what is missing or impossible.
core::Expected<PromptLogprobs> parse_vllm_prompt_logprobs(const nlohmann::json& body, const std::vector<std::int32_t>& tokens);
core::Expected<PromptLogprobs> parse_sglang_prompt_logprobs(const nlohmann::json& body);

struct OpenAiOptions {
  /// The request's "model"; empty: chosen from what /v1/models lists (choose_model, asked once).
  std::string model;
  /// The launched model (a launch template's {model}: a path or a served name).
  std::string fallback_model;
  Capabilities capabilities = Capabilities::all();
  TokenizerApi tokenizer = TokenizerApi::none;
  PromptLogprobsApi prompt_logprobs = PromptLogprobsApi::none;
  /// Send llama.cpp's `cache_prompt` (llama-server, which reads it on /v1 too); other servers have no such
  /// field and turn their prefix cache off at launch instead.
  bool cache_prompt = false;
  /// Merged into every generation body after kvsweep's sampling fields (the server's neutral settings).
  nlohmann::json extra = nlohmann::json::object();
};

/// The /v1/completions (no messages) or /v1/chat/completions body for `request`; `model` is the "model".
/// A token prompt without Capability::token_prompts, or log-probabilities without Capability::logprobs,
/// is ErrorKind::unsupported (the request would be answered as something else).
core::Expected<nlohmann::json> openai_body(const CompletionRequest& request, const OpenAiOptions& options,
                                           const std::string& model);
/// Parses a non-streamed /v1/completions (chat = false) or /v1/chat/completions answer. `wall_ms` is the
/// request's wall time, used (with `usage`) when the answer carries no `timings`.
core::Expected<CompletionResponse> parse_openai_completion(const nlohmann::json& body, bool chat, double wall_ms);
/// The answer's `usage` counts as timings the client measured around the request (`first_ms`: the first
/// byte's arrival, `wall_ms`: the whole request); absent or impossible counts are an error, never 0.
core::Expected<Timings> client_timings(const nlohmann::json& usage, double first_ms, double wall_ms);
/// Per-token log-probabilities from a choice's `logprobs` in either shape (see the top of this file).
core::Expected<std::vector<TokenLogprob>> parse_openai_logprobs(const nlohmann::json& logprobs);

/// The "model" to ask for when the config names none (`options.model` empty), from the ids `/v1/models`
/// lists: the one that names the launched model (`options.fallback_model`, whole or by its file name
/// without .gguf), else the only one listed; nothing listed: fallback_model itself. Several ids and
/// none of them the launched model is an error naming them (set openai.model).
core::Expected<std::string> choose_model(const std::vector<std::string>& ids, const OpenAiOptions& options);

/// A served model id or path as a file name without ".gguf" ("/models/Qwen3-8B.gguf", "org/Qwen3-8B" →
/// "Qwen3-8B"): how choose_model and an attached server's check match an id to the configured model.
std::string model_stem(std::string_view id);

/// Builds a CompletionResponse from the chunks of a streamed OpenAI answer (`data: {…}` events):
/// text or delta content appended, logprobs collected, finish_reason as the stop type, the newest
/// `timings` or `usage` kept.
class OpenAiStream {
 public:
  explicit OpenAiStream(bool chat) : m_chat(chat) {}
  core::Expected<void> add(std::string_view data);
  const CompletionResponse& response() const { return m_response; }
  /// The response with its timings: the server's, else the client's (`first_ms`: the first chunk's
  /// arrival after the request, `wall_ms`: the whole request) with the `usage` counts; an answer with
  /// neither, or impossible counts, is an error.
  core::Expected<CompletionResponse> take(double first_ms, double wall_ms);
  bool finished() const { return m_finished; }

 private:
  bool m_chat;
  bool m_finished = false;
  bool m_server_timings = false;
  nlohmann::json m_usage;
  CompletionResponse m_response;
};

class OpenAiApi final : public Api {
 public:
  OpenAiApi(std::shared_ptr<http::Client> client, OpenAiOptions options)
      : m_client(std::move(client)), m_options(std::move(options)) {}

  core::Expected<CompletionResponse> complete(const CompletionRequest& request) override;
  core::Expected<std::vector<std::int32_t>> tokenize(const std::string& text, bool add_special) override;
  core::Expected<std::string> detokenize(const std::vector<std::int32_t>& tokens) override;
  core::Expected<std::vector<std::vector<float>>> embed(const std::vector<std::string>& inputs) override;
  core::Expected<PromptLogprobs> prompt_logprobs(const PromptLogprobsRequest& request) override;
  std::string describe() const override { return "OpenAI API at " + m_client->base_url(); }
  Capabilities capabilities() const override { return m_options.capabilities; }

  /// The model ids GET /v1/models lists.
  core::Expected<std::vector<std::string>> models();
  /// The "model" every request carries: OpenAiOptions::model, else choose_model over models()
  /// (asked once; a server without /v1/models is asked for fallback_model).
  core::Expected<std::string> model();

 private:

  std::shared_ptr<http::Client> m_client;
  OpenAiOptions m_options;
  std::mutex m_model_mutex;
  std::optional<core::Expected<std::string>> m_model;
};

}  // namespace kvsweep::server
