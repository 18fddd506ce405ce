// A server's own output reaches its log redacted: a child that echoes its
// --api-key, logs an Authorization header and writes a registered key in pieces leaves none of them
// in the log, and the log is complete once the child has ended.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "kvsweep/core/read_file.hpp"
#include "kvsweep/core/redact.hpp"
#include "kvsweep/process/child.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

TEST(LogRedaction, AChildsEchoedKeyAndRequestLogAreRedactedInItsLog) {
  kvsweep::core::add_secret("sk-child-echo-31337");
  const auto log = std::filesystem::temp_directory_path() / ("kvsweep-log-redaction-" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(log);
  kvsweep::process::LaunchSpec spec;
  // The key in two writes with a pause between them: a chunk boundary inside the secret.
  spec.argv = {"/bin/sh", "-c",
               "echo 'main: args: --api-key sk-child-echo-31337'; printf 'request: key sk-child-'; sleep 0.2; "
               "printf 'echo-31337\\n'; echo 'Authorization: Bearer abcdefghijklmnopq' >&2; printf 'last line no newline'"};
  spec.log_path = log;
  auto child = kvsweep::process::Child::spawn(spec);
  ASSERT_TRUE(child) << child.error().message;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!child->poll() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(child->poll());
  const std::string text = kvsweep::core::read_file(log, kvsweep::core::Links::refuse).value_or("");
  EXPECT_THAT(text, Not(HasSubstr("sk-child")));
  EXPECT_THAT(text, Not(HasSubstr("abcdefghijklmnopq")));
  EXPECT_THAT(text, HasSubstr("main: args: --api-key <redacted>\n"));
  EXPECT_THAT(text, HasSubstr("request: key <redacted>\n"));
  EXPECT_THAT(text, HasSubstr("Authorization: Bearer <redacted>\n"));
  EXPECT_THAT(text, HasSubstr("last line no newline"));  // written once the child ended
  std::filesystem::remove(log);
}
