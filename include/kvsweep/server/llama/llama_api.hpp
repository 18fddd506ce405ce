#pragma once
/// server::Api spoken to llama-server's native endpoints (/completion, /v1/chat/completions,
/// /tokenize, /detokenize, /v1/embeddings).

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kvsweep/http/client.hpp"
#include "kvsweep/server/api.hpp"
#include "kvsweep/server/llama/ids_json.hpp"

namespace kvsweep::server {

class LlamaApi final : public Api {
 public:
  explicit LlamaApi(std::shared_ptr<http::Client> client) : m_client(std::move(client)) {}

  core::Expected<CompletionResponse> complete(const CompletionRequest& request) override;
  /// All prompts in one multi-prompt /completion request (token prompts, no streaming, not chat;
  /// otherwise one request per prompt). llama-server makes one task per prompt, queued in order;
  /// on a server with one slot (-np 1, as kvsweep starts it) they run one after the other, each
  /// reusing what the previous one left in the slot when cache_prompt is set.
  core::Expected<std::vector<CompletionResponse>> complete_each(
      const CompletionRequest& request, const std::vector<std::vector<std::int32_t>>& prompts) override;
  core::Expected<std::vector<std::int32_t>> tokenize(const std::string& text, bool add_special) override;
  core::Expected<std::string> detokenize(const std::vector<std::int32_t>& tokens) override;
  core::Expected<std::vector<std::vector<float>>> embed(const std::vector<std::string>& inputs) override;
  std::string describe() const override { return "llama-server at " + m_client->base_url(); }

  http::Client& client() { return *m_client; }

 private:
  std::shared_ptr<http::Client> m_client;
  std::mutex m_ids_mutex;  // m_ids: complete() may be called from more than one thread
  IdsJsonWriter m_ids;     // the last token prompt's text: the next one copies the ids they share
};

/// The fields a raw /completion asks the server to answer with (its `response_fields`): those the
/// parsers below read, never the echoed prompt.
const std::vector<std::string>& completion_response_fields();
/// The request body LlamaApi sends for `request` (exposed for tests).
nlohmann::json completion_body(const CompletionRequest& request);
/// completion_body(request) as the text sent, a token prompt written by `ids` (the ids it shares with
/// the previous prompt copied as text, not built as JSON again): byte for byte the compact dump.
std::string completion_body_text(const CompletionRequest& request, IdsJsonWriter& ids);
/// The body of a multi-prompt /completion (LlamaApi::complete_each): `request`'s settings with `prompts`
/// as its "prompt", an array of id arrays, each written from the text of the one before it where they
/// share ids; byte for byte the compact dump of completion_body(request) with that "prompt".
std::string completion_body_text(const CompletionRequest& request, const std::vector<std::vector<std::int32_t>>& prompts);
/// The most bytes an answer to `request` can need (`body_bytes`: the request body's size; `answers`:
/// prompts answered in one request): its max tokens times a generous size per token, plus the
/// prompt it may echo. More is a server gone wrong: the client stops reading (ErrorKind::oversize).
std::size_t answer_limit(const CompletionRequest& request, std::size_t body_bytes, std::size_t answers);
/// A server's `timings` object (llama-server's, also on its /v1 endpoints): counts and times checked
/// finite and non-negative; `requests` is 1. Not an object: all zero.
core::Expected<Timings> parse_server_timings(const nlohmann::json& timings);
/// Parses a /completion or /v1/chat/completions answer (exposed for tests).
core::Expected<CompletionResponse> parse_completion(const nlohmann::json& body, bool chat);

/// Builds a CompletionResponse from the chunks of a streamed /completion (chat = false) or
/// /v1/chat/completions (chat = true) answer: content and reasoning deltas appended, token ids
/// and probabilities collected, the newest `timings` kept (sent with every chunk when the
/// request asks for timings_per_token), stop_type from the final chunk.
class CompletionStream {
 public:
  explicit CompletionStream(bool chat) : m_chat(chat) {}
  /// One event's data; "[DONE]" is accepted and ignored. A chunk of an unexpected shape is a parse error.
  core::Expected<void> add(std::string_view data);
  const CompletionResponse& response() const { return m_response; }
  CompletionResponse take() { return std::move(m_response); }

 private:
  bool m_chat;
  CompletionResponse m_response;
};

}  // namespace kvsweep::server
