// Streamed completions with early cancel against the real llama-server (the recall probe's
// bounded answers rest on this): the server stops when the connection is closed and serves
// the next request normally.
#include <atomic>

#include <gtest/gtest.h>

#include "harness.hpp"
#include "kvsweep/server/llama/llama_server.hpp"

namespace kt = kvsweep::testing;
using namespace kvsweep;

namespace {

std::unique_ptr<server::Instance> start_tiny(const kt::TempDir& dir) {
  server::LlamaServerBackend backend({kt::llama_bin_dir() + "/llama-server"});
  server::CellSpec spec;
  spec.model = "tiny";
  spec.model_path = kt::tiny_model().string();
  spec.n_ctx = 2048;
  spec.log_path = dir / "server.log";
  spec.extra_args = {"-t", "1"};
  spec.ready_timeout = std::chrono::seconds(kt::scaled_s(60));
  spec.request_timeout = std::chrono::seconds(kt::scaled_s(60));
  spec.stop_grace = std::chrono::seconds(2);
  std::atomic<bool> cancel{false};
  auto started = backend.start(spec, cancel);
  if (!started) ADD_FAILURE() << started.error().message;
  return started ? std::move(*started) : nullptr;
}

server::CompletionRequest request(int n_predict) {
  server::CompletionRequest r;
  r.prompt = "The lighthouse keeper climbed the stairs one last time and";
  r.n_predict = n_predict;
  r.temperature = 0.0;
  return r;
}

}  // namespace

TEST(Stream, RawAndChatStreamsMatchTheUnstreamedAnswerAndCancelEarly) {
  kt::TempDir dir;
  auto server = start_tiny(dir);
  ASSERT_TRUE(server);
  server::Api& api = server->api();

  // Streamed to the end: the same greedy text and tokens as one JSON answer.
  auto whole = api.complete(request(40));
  ASSERT_TRUE(whole.has_value()) << whole.error().message;
  int calls = 0;
  auto streamed_req = request(40);
  streamed_req.stop_when = [&calls](std::string_view) {
    ++calls;
    return false;
  };
  auto streamed = api.complete(streamed_req);
  ASSERT_TRUE(streamed.has_value()) << streamed.error().message;
  EXPECT_EQ(streamed->content, whole->content);
  EXPECT_EQ(streamed->tokens, whole->tokens);
  EXPECT_EQ(streamed->stop_type, "limit");
  EXPECT_EQ(streamed->timings.predicted_n, 40);
  EXPECT_GT(calls, 1);

  // Cancelled after a few pieces: a prefix of the full answer, timings of what was done.
  auto cancel_req = request(400);
  cancel_req.stop_when = [](std::string_view content) { return content.size() >= 10; };
  auto cut = api.complete(cancel_req);
  ASSERT_TRUE(cut.has_value()) << cut.error().message;
  EXPECT_EQ(cut->stop_type, "cancel");
  EXPECT_GE(cut->content.size(), 10u);
  EXPECT_TRUE(whole->content.starts_with(cut->content)) << cut->content;
  EXPECT_GT(cut->timings.prompt_n + cut->timings.cache_n, 0);
  EXPECT_LT(cut->timings.predicted_n, 40);

  // The server is free again: the next request is answered in full.
  auto after = api.complete(request(40));
  ASSERT_TRUE(after.has_value()) << after.error().message;
  EXPECT_EQ(after->content, whole->content);

  // Chat streaming: content deltas add up to the unstreamed message.
  server::CompletionRequest chat;
  chat.messages = {{"user", "Say something."}};
  chat.n_predict = 24;
  auto chat_whole = api.complete(chat);
  ASSERT_TRUE(chat_whole.has_value()) << chat_whole.error().message;
  chat.stop_when = [](std::string_view) { return false; };
  auto chat_streamed = api.complete(chat);
  ASSERT_TRUE(chat_streamed.has_value()) << chat_streamed.error().message;
  EXPECT_EQ(chat_streamed->content + chat_streamed->reasoning, chat_whole->content + chat_whole->reasoning);
  EXPECT_EQ(chat_streamed->stop_type, chat_whole->stop_type);
  server->stop();
}
