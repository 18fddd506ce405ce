#pragma once
/// The one redaction point: every text kvsweep writes (manifest, records, the cell outcome
/// journal, reports, log lines it writes, stderr, traces) passes through redact() first. Secrets
/// are registered as they become known (a configured api key, a URL's password, the value of a
/// secret flag); Authorization values, URL userinfo and secret flag values are recognised in
/// any text, registered or not.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvsweep::core {

inline constexpr std::string_view kRedacted = "<redacted>";

/// From now on redact() replaces `value` wherever it appears (values under 4 bytes are too
/// common to replace and are ignored). Thread-safe.
void add_secret(std::string_view value);

/// A server flag whose value is a secret: --api-key, --hf-token (-hft).
bool is_secret_flag(std::string_view flag);

/// Registers the values of secret flags in `args` ("--api-key K", "--api-key=K") and the key in
/// the file an --api-key-file names.
void add_secrets_from_args(const std::vector<std::string>& args);

/// `text` with registered secrets, Authorization header values (Bearer/Basic credentials), the
/// userinfo of URL-shaped strings (parsed or not) and secret flag values replaced by <redacted>.
std::string redact(std::string_view text);

/// Every string of `doc` redacted (keys too); in an array, the element after a secret flag.
nlohmann::json redact_json(const nlohmann::json& doc);

}  // namespace kvsweep::core
