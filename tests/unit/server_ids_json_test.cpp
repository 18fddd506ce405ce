// A raw recall request's body is written as text, its corpus ids copied from the previous
// request's text rather than built as JSON again. The text must be the very bytes the JSON body dumps to.

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/server/llama/ids_json.hpp"
#include "kvsweep/server/llama/llama_api.hpp"

namespace {

using namespace kvsweep::server;
using Ids = std::vector<std::int32_t>;

std::string dumped(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

std::string written(IdsJsonWriter& writer, const Ids& ids) {
  std::string out = "x";  // append, never overwrite
  writer.append(out, ids);
  return out.substr(1);
}

Ids counting(std::size_t n, std::int32_t from) {
  Ids ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = from + static_cast<std::int32_t>(i) * 37;
  return ids;
}

Ids joined(Ids head, const Ids& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

CompletionRequest raw_request(Ids tokens) {
  CompletionRequest r;
  r.tokens = std::move(tokens);
  r.n_predict = 32;
  r.stop = {"\n\n", "caf\xc3\xa9", "bad \xff byte"};  // invalid UTF-8 is replaced, as the dump does
  r.extra = {{"id_slot", 0}, {"zz_last", {{"nested", {1, 2}}}}};
  return r;
}

}  // namespace

TEST(IdsJson, AnArrayIsWrittenAsTheJsonDumpWritesIt) {
  for (const Ids& ids : {Ids{}, Ids{0}, Ids{1, 15043, 29871}, Ids{-1, INT32_MIN, INT32_MAX, 7}, counting(1000, 1)}) {
    IdsJsonWriter fresh;
    EXPECT_EQ(written(fresh, ids), dumped(nlohmann::json(ids)));
    EXPECT_EQ(fresh.reused(), 0u);
  }
}

TEST(IdsJson, TheIdsSharedWithThePreviousArrayAreCopiedAndTheTextIsTheSame) {
  const Ids corpus = counting(5000, 1);
  const Ids first = joined(corpus, {9, 8, 7});
  const Ids second = joined(corpus, {9, 6, 5, 4});  // shares the corpus and one question id
  const Ids other = {3, 2, 1};
  IdsJsonWriter writer;
  EXPECT_EQ(written(writer, first), dumped(nlohmann::json(first)));
  EXPECT_EQ(writer.reused(), 0u);
  EXPECT_EQ(written(writer, second), dumped(nlohmann::json(second)));
  EXPECT_EQ(writer.reused(), corpus.size() + 1);
  EXPECT_EQ(written(writer, corpus), dumped(nlohmann::json(corpus)));  // a prefix of the last one
  EXPECT_EQ(writer.reused(), corpus.size());
  EXPECT_EQ(written(writer, other), dumped(nlohmann::json(other)));  // nothing shared: written afresh
  EXPECT_EQ(writer.reused(), 0u);
  EXPECT_EQ(written(writer, Ids{}), "[]");
  EXPECT_EQ(written(writer, first), dumped(nlohmann::json(first)));
}

TEST(IdsJson, TheBodyTextIsTheDumpOfTheJsonBodyForEveryKindOfRequest) {
  const Ids corpus = counting(3000, 2);
  IdsJsonWriter writer;
  // Two raw requests on one writer: the second copies the corpus's text.
  for (const Ids& question : {Ids{11, 12}, Ids{13}}) {
    const CompletionRequest r = raw_request(joined(corpus, question));
    EXPECT_EQ(completion_body_text(r, writer), dumped(completion_body(r)));
  }
  EXPECT_EQ(writer.reused(), corpus.size());

  CompletionRequest streamed = raw_request(corpus);
  streamed.stop_when = [](std::string_view) { return false; };
  streamed.n_probs = 3;
  EXPECT_EQ(completion_body_text(streamed, writer), dumped(completion_body(streamed)));

  CompletionRequest text;
  text.prompt = "def f():\n    return \"x\"\n";
  EXPECT_EQ(completion_body_text(text, writer), dumped(completion_body(text)));

  CompletionRequest chat;
  chat.messages = {{"system", "be brief"}, {"user", "hi"}};
  chat.tokens = {1, 2};  // ignored by a chat request
  EXPECT_EQ(completion_body_text(chat, writer), dumped(completion_body(chat)));

  CompletionRequest overridden = raw_request(corpus);
  overridden.extra["prompt"] = "the extra's prompt wins";
  EXPECT_EQ(completion_body_text(overridden, writer), dumped(completion_body(overridden)));
}

TEST(IdsJson, AMultiPromptBodyIsTheDumpOfTheJsonBodyWithThePromptsAsItsPrompt) {
  // LlamaApi::complete_each (the divergence probe's teacher-forced steps): each prompt is the one
  // before it and one more id, and an empty or unrelated prompt starts afresh.
  const Ids prompt = counting(2000, 3);
  const std::vector<Ids> prompts = {prompt, joined(prompt, {5}), joined(prompt, {5, 6}), Ids{}, Ids{4, 3}, prompt};
  CompletionRequest overridden = raw_request({});
  overridden.extra["prompt"] = "the prompts replace it";
  for (CompletionRequest r : {CompletionRequest{}, raw_request({}), overridden}) {
    r.n_predict = 1;
    r.cache_prompt = true;
    nlohmann::json expected = completion_body(r);
    expected["prompt"] = prompts;
    EXPECT_EQ(completion_body_text(r, prompts), dumped(expected));
  }
}
