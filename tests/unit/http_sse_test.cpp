#include "kvsweep/http/sse.hpp"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/server/llama/llama_api.hpp"

using ::testing::HasSubstr;

namespace kvsweep {
namespace {

using Strings = std::vector<std::string>;

TEST(SseDecoder, EventsSplitAnywhereComeOutWhole) {
  const std::string body = "data: {\"a\":1}\n\ndata: {\"b\":2}\r\n\r\n: keep-alive\n\ndata: [DONE]\n\n";
  for (std::size_t piece = 1; piece <= body.size(); ++piece) {
    http::SseDecoder d;
    Strings got;
    for (std::size_t i = 0; i < body.size(); i += piece) {
      for (auto& e : d.feed(std::string_view(body).substr(i, piece))) got.push_back(e);
    }
    for (auto& e : d.finish()) got.push_back(e);
    EXPECT_EQ(got, (Strings{"{\"a\":1}", "{\"b\":2}", "[DONE]"})) << "piece " << piece;
  }
}

TEST(SseDecoder, MultiLineDataIsJoinedAndOtherFieldsIgnored) {
  http::SseDecoder d;
  EXPECT_EQ(d.feed("event: x\nid: 3\ndata: one\ndata:two\n\n"), (Strings{"one\ntwo"}));
  EXPECT_TRUE(d.feed("data: unfinished").empty());
  EXPECT_EQ(d.finish(), (Strings{"unfinished"}));
  EXPECT_TRUE(d.finish().empty());
}

TEST(CompletionStream, RawChunksAddUpWithTheLastTimings) {
  server::CompletionStream s(false);
  ASSERT_TRUE(s.add(R"({"content":"Hel","tokens":[1,2],"stop":false,"timings":{"prompt_n":5,"predicted_n":2}})"));
  ASSERT_TRUE(s.add(R"({"content":"lo\n","tokens":[3],"stop":false,"timings":{"prompt_n":5,"predicted_n":3}})"));
  EXPECT_TRUE(s.response().stop_type.empty());
  ASSERT_TRUE(s.add(R"({"content":"","tokens":[],"stop":true,"stop_type":"limit","timings":{"prompt_n":5,"cache_n":2,"predicted_n":3}})"));
  const auto& r = s.response();
  EXPECT_EQ(r.content, "Hello\n");
  EXPECT_EQ(r.tokens, (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(r.stop_type, "limit");
  EXPECT_EQ(r.timings.prompt_n, 5);
  EXPECT_EQ(r.timings.cache_n, 2);
  EXPECT_EQ(r.timings.predicted_n, 3);
}

TEST(CompletionStream, ChatDeltasAndFinishReason) {
  server::CompletionStream s(true);
  ASSERT_TRUE(s.add(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]})"));
  ASSERT_TRUE(s.add(R"({"choices":[{"index":0,"delta":{"reasoning_content":"hm"},"finish_reason":null}]})"));
  ASSERT_TRUE(s.add(R"({"choices":[{"index":0,"delta":{"content":"def f"},"finish_reason":null}]})"));
  ASSERT_TRUE(s.add(R"({"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"timings":{"predicted_n":9}})"));
  ASSERT_TRUE(s.add("[DONE]"));
  EXPECT_EQ(s.response().content, "def f");
  EXPECT_EQ(s.response().reasoning, "hm");
  EXPECT_EQ(s.response().stop_type, "limit");
  EXPECT_EQ(s.response().timings.predicted_n, 9);
}

TEST(CompletionStream, ErrorsAndBadChunksAreErrors) {
  server::CompletionStream s(false);
  auto e = s.add(R"({"error":{"code":500,"message":"context shift disabled"}})");
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message, HasSubstr("context shift disabled"));
  auto bad = s.add("{not json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, core::ErrorKind::parse);
  server::CompletionStream chat(true);
  EXPECT_FALSE(chat.add(R"({"content":"raw shape on the chat route"})"));
}

TEST(CompletionBody, StreamingOnlyWithStopWhen) {
  server::CompletionRequest r;
  EXPECT_EQ(server::completion_body(r)["stream"], false);
  EXPECT_FALSE(server::completion_body(r).contains("timings_per_token"));
  r.stop_when = [](std::string_view) { return false; };
  EXPECT_EQ(server::completion_body(r)["stream"], true);
  EXPECT_EQ(server::completion_body(r)["timings_per_token"], true);
}

TEST(CompletionBody, RawCompletionsAskForTheFieldsTheParsersReadNotTheEchoedPrompt) {
  server::CompletionRequest r;
  r.tokens = {1, 2, 3};
  const auto body = server::completion_body(r);
  EXPECT_EQ(body["prompt"], nlohmann::json({1, 2, 3}));
  const auto fields = body["response_fields"].get<std::vector<std::string>>();
  for (const char* read : {"content", "tokens", "stop", "stop_type", "timings", "completion_probabilities", "index"})
    EXPECT_NE(std::find(fields.begin(), fields.end(), read), fields.end()) << read;
  EXPECT_EQ(std::find(fields.begin(), fields.end(), "prompt"), fields.end());
  r.messages = {{"user", "hi"}};  // chat answers have their own shape
  EXPECT_FALSE(server::completion_body(r).contains("response_fields"));
}

}  // namespace
}  // namespace kvsweep
