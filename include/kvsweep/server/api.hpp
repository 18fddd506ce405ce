#pragma once
/// What probes ask of a running server: completions, chat, tokenization and embeddings,
/// independent of which backend (llama-server, ollama, external) answers.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/server/capabilities.hpp"

namespace kvsweep::server {

/// Server-reported timings (llama-server `timings`; Ollama durations converted to ms). A server that
/// reports none (most OpenAI-API servers) gets the client's wall time of the request as predicted_ms
/// and its `usage` counts, with `client_measured` set: the record says so (`"measured_by": "client"`).
struct Timings {
  int prompt_n = 0;
  int cache_n = 0;
  double prompt_ms = 0;
  int predicted_n = 0;
  double predicted_ms = 0;
  /// How many requests these are the sum of (1 for one answer; 0 when nothing was asked), so that
  /// per-request sizes and depths can be told from an item made of several requests.
  int requests = 0;
  /// True when the times are kvsweep's own wall clock around the request, not the server's.
  bool client_measured = false;

  /// Adds another request's counts and times (an item made of several requests).
  Timings& operator+=(const Timings& t) {
    requests += t.requests;
    prompt_n += t.prompt_n;
    cache_n += t.cache_n;
    prompt_ms += t.prompt_ms;
    predicted_n += t.predicted_n;
    predicted_ms += t.predicted_ms;
    client_measured = client_measured || t.client_measured;
    return *this;
  }
};
nlohmann::json to_json(const Timings& t);

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
};

/// One generation request. Every sampling field is always sent, so server defaults
/// (GGUF metadata, CLI) never change a result.
struct CompletionRequest {
  std::string prompt;                  // raw completion text (used when messages is empty and tokens is empty)
  std::vector<std::int32_t> tokens;    // token-array prompt (no BOS added by the server)
  std::vector<ChatMessage> messages;   // chat mode when non-empty
  int n_predict = 128;
  double temperature = 0.0;
  std::uint32_t seed = 42;
  int top_k = 40;
  double top_p = 1.0;
  double min_p = 0.0;
  int n_probs = 0;
  bool cache_prompt = true;
  std::vector<std::string> stop;
  nlohmann::json extra = nlohmann::json::object();  // merged into the body last (e.g. chat_template_kwargs, tools)
  /// When set, the answer is streamed and this is called with the content so far after each
  /// piece; returning true ends the generation there (the server is told by closing the
  /// connection) and the response's stop_type is "cancel". Backends that cannot stream
  /// ignore it and generate up to n_predict.
  std::function<bool(std::string_view content)> stop_when;
};

struct TopLogprob {
  std::int32_t id = -1;  // -1 when the backend gives no ids (Ollama)
  std::string token;
  double logprob = 0;
};

struct TokenLogprob {
  std::int32_t id = -1;
  std::string token;
  double logprob = 0;
  std::vector<TopLogprob> top;
};

struct CompletionResponse {
  std::string content;
  std::string reasoning;               // chat: reasoning_content, when the server split it out
  std::vector<std::int32_t> tokens;    // generated token ids when the backend returns them
  std::vector<TokenLogprob> probs;     // per generated token, when n_probs > 0
  std::string stop_type;               // eos | limit | word | none | cancel (backend-normalised)
  Timings timings;
  nlohmann::json tool_calls = nullptr; // chat: message.tool_calls when present
};

/// Every prompt position's next-token distribution, asked in one request (Api::prompt_logprobs).
struct PromptLogprobsRequest {
  std::vector<std::int32_t> tokens;  // the prompt as ids; when empty, `text` (the server tokenizes it)
  std::string text;
  int top_n = 20;
};

struct PromptLogprobs {
  /// One per prompt position: positions[p] is the distribution of prompt token p given tokens [0, p) —
  /// its id and log-probability, and the server's top-n (most probable first). Position 0 has no
  /// distribution (empty `top`).
  std::vector<TokenLogprob> positions;
  Timings timings;
};

/// The HTTP face of one running server. Implementations: llama-server, Ollama and the OpenAI API.
class Api {
 public:
  virtual ~Api() = default;
  virtual core::Expected<CompletionResponse> complete(const CompletionRequest& request) = 0;
  /// `request` once for each of `prompts` (token arrays, in place of request.tokens), answered in
  /// order. This default asks one prompt at a time; a backend that takes several prompts in one
  /// request (llama-server's /completion) overrides it to save the round trips.
  virtual core::Expected<std::vector<CompletionResponse>> complete_each(
      const CompletionRequest& request, const std::vector<std::vector<std::int32_t>>& prompts) {
    std::vector<CompletionResponse> out;
    out.reserve(prompts.size());
    CompletionRequest one = request;
    for (const auto& prompt : prompts) {
      one.tokens = prompt;
      auto answer = complete(one);
      if (!answer) return std::unexpected(answer.error());
      out.push_back(std::move(*answer));
    }
    return out;
  }
  virtual core::Expected<std::vector<std::int32_t>> tokenize(const std::string& text, bool add_special) = 0;
  virtual core::Expected<std::string> detokenize(const std::vector<std::int32_t>& tokens) = 0;
  /// One embedding per input, in order.
  virtual core::Expected<std::vector<std::vector<float>>> embed(const std::vector<std::string>& inputs) = 0;
  /// Every position's top-n of one prompt in one request (Capability::prompt_logprobs: vLLM's
  /// prompt_logprobs, SGLang's logprob_start_len). No llama.cpp server offers it: unsupported by default.
  virtual core::Expected<PromptLogprobs> prompt_logprobs(const PromptLogprobsRequest& request) {
    (void)request;
    return core::fail(core::ErrorKind::unsupported, describe() + " gives no prompt log-probabilities");
  }
  /// A short description of what answers (for errors and the manifest).
  virtual std::string describe() const = 0;
  /// What this server can do beyond a text completion; a probe with a text-only form asks before using
  /// the rest (token-id prompts). Every backend but the OpenAI API's can do all that kvsweep asks.
  virtual Capabilities capabilities() const { return Capabilities::all(); }
};

}  // namespace kvsweep::server
