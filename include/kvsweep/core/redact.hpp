#pragma once
/// The one redaction point: every text kvsweep writes (manifest, records, the cell outcome
/// journal, reports, log lines it writes, stderr, traces) passes through redact() first. Secrets
/// are registered as they become known (a configured api key, a URL's password, the value of a
/// secret flag); Authorization values, URL userinfo and secret flag values are recognised in
/// any text, registered or not.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvsweep::core {

inline constexpr std::string_view kRedacted = "<redacted>";

/// From now on redact() replaces `value` wherever it appears (values under 4 bytes are too
/// common to replace and are ignored). Thread-safe.
void add_secret(std::string_view value);

/// A server flag whose value is a secret: --api-key (--api_key), --hf-token (--hf_token, -hft), --token.
bool is_secret_flag(std::string_view flag);

/// An environment variable whose value is a secret: one of its '_'-separated words (any case) is
/// KEY, APIKEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL(S), AUTH or AUTHORIZATION
/// (OPENAI_API_KEY, HF_TOKEN, DB_PASSWORD; not MAX_TOKENS).
bool is_secret_env(std::string_view name);

/// Registers the values of secret flags in `args` ("--api-key K", "--api-key=K") and the key in
/// the file an --api-key-file names.
void add_secrets_from_args(const std::vector<std::string>& args);

/// Registers the values of the secret variables (is_secret_env) of `env`, and the credential of
/// an Authorization value ("Bearer K").
void add_secrets_from_env(const std::vector<std::pair<std::string, std::string>>& env);

/// `text` with registered secrets, Authorization header values (Bearer/Basic credentials), the
/// userinfo of URL-shaped strings (parsed or not), secret flag values and the values of secret
/// variables written NAME=value (is_secret_env) replaced by <redacted>.
std::string redact(std::string_view text);

/// A stream's text (a server's own output) redacted as it arrives, whole lines at a time, so that
/// a secret split across two chunks is still found: feed() returns the redacted lines the chunk
/// completes and holds the unfinished line; finish() returns that line redacted (end of stream).
/// A line longer than 1 MiB is let out in pieces.
class LineRedactor {
 public:
  std::string feed(std::string_view chunk);
  std::string finish();

 private:
  std::string m_pending;
};

/// Every string of `doc` redacted (keys too); in an array, the element after a secret flag.
nlohmann::json redact_json(const nlohmann::json& doc);

}  // namespace kvsweep::core
