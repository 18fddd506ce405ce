// The message that stops a grid whose prompts cannot fit the context, and the counts it reads.
#include "kvsweep/sweep/plan/context_fit.hpp"

#include <gtest/gtest.h>

namespace kvsweep::sweep {
namespace {

TEST(ContextFit, MessageNamesTheTokensNeededAndARoundContextThatHoldsThem) {
  const ContextShortfall s{"recall", "recall", 137621, 131072, false};
  EXPECT_EQ(shortfall_message(s),
            "recall needs 137,621 tokens of context; raise server.ctx to at least 139,264 or shrink the corpus");
  const ContextShortfall v{"tools", "toolcall", 4128, 2048, true};
  EXPECT_EQ(shortfall_message(v),
            "tools needs 4,128 tokens of context; raise the variant's ctx to at least 6,144 or shorten its prompts");
  const ContextShortfall unknown{"recall", "recall", 0, 1024, false};
  EXPECT_EQ(shortfall_message(unknown),
            "recall does not fit a context of 1,024 tokens; raise server.ctx or shrink the corpus");
}

TEST(ContextFit, SuggestedContextIsTheNextMultipleOf2048) {
  EXPECT_EQ(suggested_ctx(2048), 2048);
  EXPECT_EQ(suggested_ctx(2049), 4096);
  EXPECT_EQ(suggested_ctx(1), 2048);
}

TEST(ContextFit, TokensNeededFromTheProbesOrTheServersMessage) {
  core::Error recall{core::ErrorKind::exceeds_context,
                     "recall prompt needs about 5000 tokens (corpus 4800 + question 40 + answer budget 160) but the "
                     "context holds 1024; raise the server's -c or shrink the corpus",
                     0, 5000};
  EXPECT_EQ(tokens_needed(recall), 5000);
  core::Error toolcall{core::ErrorKind::exceeds_context,
                       "exceeds context: L8192-s1 needs 8192 prompt + 64 answer tokens but the server's context is 2048",
                       0, 8256};
  EXPECT_EQ(tokens_needed(toolcall), 8256);
  core::Error server{core::ErrorKind::exceeds_context,
                     "HTTP 400: request (137621 tokens) exceeds the available context size (131072 tokens), try "
                     "increasing it",
                     400};
  EXPECT_EQ(tokens_needed(server), 137621);
  core::Error other{core::ErrorKind::exceeds_context, "request (many tokens) exceeds", 400};
  EXPECT_EQ(tokens_needed(other), 0);
}

TEST(ContextFit, AShortfallKeepsTheLargestNeed) {
  std::optional<ContextShortfall> s;
  note_shortfall(s, {"recall", "recall", 900, 512, false});
  note_shortfall(s, {"recall", "recall", 1200, 512, false});
  note_shortfall(s, {"recall", "recall", 1000, 512, false});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->needed, 1200);
  EXPECT_EQ(with_thousands(1234567), "1,234,567");
  EXPECT_EQ(with_thousands(999), "999");
}

}  // namespace
}  // namespace kvsweep::sweep
