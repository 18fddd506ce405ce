#pragma once
/// Token-id prompts: a long text that begins every prompt of a probe (the recall corpus),
/// tokenized once per model with the server's own tokenizer, and each request's own text
/// tokenized as it reads after that text, so that a raw /completion carries token ids and the
/// server tokenizes only what is new.
///
/// Which probes send ids: recall in raw mode only (the one probe whose every request repeats a
/// long prefix as raw text). Chat requests (recall's chat mode, toolcall, telephone) go through
/// the server's template and stay text; their preflight still counts the prefix once per model.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvsweep/core/error.hpp"
#include "kvsweep/server/api.hpp"

namespace kvsweep::probe {

/// How the tokens of a request's own text are made so that they continue the prefix's tokens.
enum class RestTokens {
  unchecked,      // not yet compared with the tokens of the whole text
  plain,          // tokenize(rest): the tokenizer starts afresh at the split (BPE pre-tokenizers)
  after_newline,  // tokenize("\n" + rest) less tokenize("\n"): a tokenizer that adds a space
                  // prefix to every text it is given (llama's SPM) starts after a newline instead
  text,           // neither equals the whole text's tokens: send text
};

class SharedPrefix {
 public:
  /// `text` begins every prompt. It is split after its last byte that is not whitespace: the head
  /// is tokenized once per model; the tail (the trailing newlines) goes with each request's rest,
  /// so that no token can straddle the split (a newline run is one token for many tokenizers).
  explicit SharedPrefix(const std::string& text);

  const std::string& head() const { return m_head; }
  const std::string& tail() const { return m_tail; }

  /// Tokens of the head with BOS (as /completion counts a string prompt) for `model`, asked of the
  /// server once per model; nullopt when the backend cannot tokenize.
  core::Expected<std::optional<int>> head_tokens(server::Api& api, const std::string& model);

  /// The prompt head + tail + `rest` as the token ids the server itself makes of that text (BOS
  /// first), or nullopt when ids that equal them cannot be made here (send the text; also when the
  /// backend cannot tokenize). The first call for a model checks ids(head) + ids(tail + rest) ==
  /// ids(head + tail + rest) once, trying RestTokens::plain then after_newline; every prompt of a
  /// probe starts its rest the same way (the tail, then the probe's fixed separator), so the check
  /// on the first holds for the others. Thread-safe (cells may run in parallel).
  core::Expected<std::optional<std::vector<std::int32_t>>> prompt_ids(server::Api& api, const std::string& model,
                                                                       std::string_view rest);

  /// How `model`'s rests are tokenized (unchecked before the first prompt_ids).
  RestTokens mode(const std::string& model) const;

 private:
  struct ModelTokens {
    std::optional<std::vector<std::int32_t>> head;  // with BOS; empty optional: not asked yet
    bool unsupported = false;                       // the backend cannot tokenize
    RestTokens mode = RestTokens::unchecked;
    std::vector<std::int32_t> newline;              // tokenize("\n"), for after_newline
  };
  /// The head's tokens for `model`, asked once; m_mutex held.
  core::Expected<ModelTokens*> model_tokens(server::Api& api, const std::string& model);
  /// The tokens of `tail + rest` as they continue the head, made the way `mode` says; nullopt when
  /// the tokenizer does not begin "\n" + rest with the tokens of "\n" (after_newline).
  core::Expected<std::optional<std::vector<std::int32_t>>> rest_tokens(server::Api& api, ModelTokens& m,
                                                                        RestTokens mode, std::string_view rest);

  std::string m_head;
  std::string m_tail;
  mutable std::mutex m_mutex;
  std::map<std::string, ModelTokens> m_models;
};

}  // namespace kvsweep::probe
