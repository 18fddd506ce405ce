#pragma once
/// What a server's API can do beyond a text completion (token-id prompts, per-token log-probabilities,
/// tool calls, …): a backend says what it has, a probe what it needs, and a grid whose server lacks
/// something a probe cannot do without is refused before its first cell.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::server {

enum class Capability {
  chat,              // /v1/chat/completions (or the backend's chat endpoint) with messages
  token_prompts,     // a prompt given as token ids
  logprobs,          // per generated token, its log-probability and the top alternatives
  logprob_ids,       // those alternatives with their token ids (not only their text)
  tool_calls,        // native tool calls (`tools`, `tool_choice`, `message.tool_calls`)
  embeddings,        // /v1/embeddings
  tokenize,          // the model's tokenizer over HTTP: text → ids and ids → text
  llama_cpp_tools,   // the model is a GGUF file llama.cpp's own tools (llama-perplexity, llama-bench) can load
  prompt_logprobs,   // every prompt position's top log-probabilities in one request (vLLM's prompt_logprobs,
                     // SGLang's logprob_start_len); no llama.cpp server has it, so Capabilities::all() does not
};

inline constexpr std::array<Capability, 8> kAllCapabilities = {
    Capability::chat,       Capability::token_prompts, Capability::logprobs, Capability::logprob_ids,
    Capability::tool_calls, Capability::embeddings,    Capability::tokenize, Capability::llama_cpp_tools};

/// Every capability, in the order configs list them.
inline constexpr std::array<Capability, 9> kCapabilityList = {
    Capability::chat,       Capability::token_prompts, Capability::logprobs, Capability::logprob_ids,
    Capability::tool_calls, Capability::embeddings,    Capability::tokenize, Capability::llama_cpp_tools,
    Capability::prompt_logprobs};

/// The name configs and messages use ("token_prompts", "logprob_ids", …).
std::string_view to_string(Capability capability);
std::optional<Capability> parse_capability(std::string_view name);
/// Every capability's name, in kCapabilityList's order (for did-you-mean and lists).
std::vector<std::string> capability_names();

/// A set of capabilities (a bit each).
class Capabilities {
 public:
  Capabilities() = default;
  /// What llama-server offers: kAllCapabilities (every capability but prompt_logprobs).
  static Capabilities all();
  bool has(Capability c) const { return (m_bits >> static_cast<unsigned>(c)) & 1U; }
  Capabilities& set(Capability c, bool on = true) {
    const unsigned bit = 1U << static_cast<unsigned>(c);
    m_bits = on ? (m_bits | bit) : (m_bits & ~bit);
    return *this;
  }
  bool operator==(const Capabilities&) const = default;

 private:
  unsigned m_bits = 0;
};

/// What Ollama's native API offers kvsweep: no token-id prompts, no tokenizer endpoint, alternatives
/// without ids.
Capabilities ollama_capabilities();

/// What a probe needs of the server. `fallback` says what the probe does without it (its text-only
/// form); empty when the probe cannot run at all without it.
struct Need {
  Capability capability;
  std::string fallback;
  /// Met as well when the server has every one of these instead (longkl: token-id prompts with their
  /// answers' log-probabilities, or prompt_logprobs).
  std::vector<Capability> instead = {};
};

/// One need the server cannot meet.
struct Unmet {
  std::string probe;  // the probe's name in the run
  Need need;
};

/// The needs of `needs` that `have` lacks.
std::vector<Need> unmet(const std::vector<Need>& needs, const Capabilities& have);

}  // namespace kvsweep::server
