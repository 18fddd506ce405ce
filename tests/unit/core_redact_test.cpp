// The one redaction point: registered secrets, Authorization values, URL
// userinfo (parsed or not) and secret flag values never survive; ordinary text does.

#include <gtest/gtest.h>

#include "kvsweep/core/redact.hpp"

using kvsweep::core::redact;
using kvsweep::core::redact_json;

TEST(Redact, RegisteredSecretsAndSecretFlagValuesGoWhereverTheyAppear) {
  kvsweep::core::add_secrets_from_args({"-t", "1", "--api-key", "sk-unit-a1b2c3,sk-unit-second"});
  EXPECT_EQ(redact("the key sk-unit-a1b2c3 was echoed"), "the key <redacted> was echoed");
  EXPECT_EQ(redact("second: sk-unit-second"), "second: <redacted>");
  EXPECT_EQ(redact("llama-server --api-key other-key-9 -t 1"), "llama-server --api-key <redacted> -t 1");
  EXPECT_EQ(redact("llama-server --hf-token=hf_abcdef"), "llama-server --hf-token=<redacted>");
  EXPECT_EQ(redact("--api-key-file keys.txt"), "--api-key-file keys.txt");  // a path, not the key
  const nlohmann::json args = {"-t", "1", "--api-key", "not-registered-7", "--hf-token"};
  EXPECT_EQ(redact_json(args), (nlohmann::json{"-t", "1", "--api-key", "<redacted>", "--hf-token"}));
}

TEST(Redact, AuthorizationValuesAndUrlUserinfoGoUnregistered) {
  EXPECT_EQ(redact(R"({"message":"bad Authorization: Bearer abcdefghijklmnop"})"),
            R"({"message":"bad Authorization: Bearer <redacted>"})");
  EXPECT_EQ(redact("upstream said Authorization: Basic YWxpY2U6c2VjcmV0LXB3)"),
            "upstream said Authorization: Basic <redacted>)");
  EXPECT_EQ(redact("got bearer tok_0123456789abcdef"), "got bearer <redacted>");
  EXPECT_EQ(redact("http://alice:pw@127.0.0.1:8080/x"), "http://<redacted>@127.0.0.1:8080/x");
  EXPECT_EQ(redact("url \"http://alice:se/cret@127.0.0.1:8080\" failed"), "url \"http://<redacted>@127.0.0.1:8080\" failed");
  // Prose and ordinary URLs stay as they are.
  for (const std::string text : {"Basic usage of the cache", "a bearer of news", "http://127.0.0.1:8080/a@b",
                                 "see https://example.org/path", "n_predict 16, Authorization not needed"})
    EXPECT_EQ(redact(text), text);
}
