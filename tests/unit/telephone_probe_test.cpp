// The telephone probe against a scripted fake server::Api (canned paraphrases; bag-of-letters
// embeddings through an ApiEmbedder) and a fake Embedder.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/telephone/embedder.hpp"
#include "kvsweep/probe/telephone/telephone.hpp"
#include "kvsweep/server/api.hpp"
#include "bag_of_letters.hpp"
#include "fake_api.hpp"
#include "metric_declarations.hpp"

using ::testing::HasSubstr;

namespace {

using kvsweep::core::ErrorKind;
using kvsweep::core::Expected;
using kvsweep::core::FatalError;
using kvsweep::probe::ApiEmbedder;
using kvsweep::probe::ConfigSource;
using kvsweep::probe::Context;
using kvsweep::probe::Embedder;
using kvsweep::probe::Item;
using kvsweep::probe::ItemResult;
using kvsweep::probe::TelephoneProbe;
using kvsweep::server::CompletionRequest;
using kvsweep::server::CompletionResponse;
using kvsweep::testing::bag_of_letters;
using kvsweep::testing::bag_of_letters_server;
using kvsweep::testing::FakeApi;
using kvsweep::testing::times_embedded;
using nlohmann::json;

constexpr std::string_view prefix = "Paraphrase this to the next agent: ";

/// The message inside a request made with the default template.
std::string message_of(const CompletionRequest& r) {
  std::string content = r.messages.empty() ? r.prompt : r.messages.back().content;
  if (content.starts_with(prefix)) content.erase(0, prefix.size());
  return content;
}

std::string drop_last_word(const std::string& s) {
  const auto space = s.rfind(' ');
  return space == std::string::npos ? std::string() : s.substr(0, space);
}

CompletionResponse answer(std::string content, std::string stop_type = "eos") {
  CompletionResponse r;
  r.content = std::move(content);
  r.stop_type = std::move(stop_type);
  r.timings.prompt_n = 10;
  r.timings.cache_n = 4;
  r.timings.prompt_ms = 1.5;
  r.timings.predicted_n = 3;
  r.timings.predicted_ms = 2.25;
  return r;
}

/// The scripted paraphraser: every agent drops the last word of what it is given.
Expected<CompletionResponse> drop_a_word(const CompletionRequest& r, int) {
  return answer(drop_last_word(message_of(r)));
}

/// A tokenizer: one token per space-separated word.
Expected<std::vector<std::int32_t>> words(const std::string& text, bool) {
  std::vector<std::int32_t> out;
  std::size_t pos = 0;
  while ((pos = text.find_first_not_of(' ', pos)) != std::string::npos) {
    out.push_back(static_cast<std::int32_t>(out.size()));
    pos = text.find(' ', pos);
  }
  return out;
}

std::vector<std::string> tokenized_texts(const FakeApi& api) {
  std::vector<std::string> out;
  for (const auto& [text, add_special] : api.tokenized) out.push_back(text);
  return out;
}

/// An embedder without a server: bag-of-letters, with an error or a zero vector on demand.
class FakeEmbedder final : public Embedder {
 public:
  Expected<std::vector<std::vector<float>>> embed(const std::vector<std::string>& texts) override {
    ++calls;
    if (fail_on_call == calls) return kvsweep::core::fail(ErrorKind::connect, "embedding server down");
    std::vector<std::vector<float>> out;
    for (const auto& t : texts) {
      out.push_back(zero_for == t ? std::vector<float>(26, 0.0f) : bag_of_letters(t));
      if (nan_for == t) out.back()[0] = std::nanf("");
    }
    return out;
  }
  json describe() const override { return {{"model", "fake"}}; }

  int calls = 0;
  int fail_on_call = 0;
  std::string zero_for;
  std::string nan_for;
};

ConfigSource site(std::filesystem::path base = {}) { return ConfigSource{{"cfg.json", "probes[0]"}, std::move(base)}; }

TelephoneProbe probe_from(json config) {
  config["kind"] = "telephone";
  return TelephoneProbe(kvsweep::probe::parse_telephone_config(config, site()));
}

/// Runs the first item of `probe` against `api`, embedding through a second fake server.
struct Harness {
  FakeApi embedding_server = bag_of_letters_server();
  ApiEmbedder embedder{embedding_server, json{{"model", "bag-of-letters"}}};
  kvsweep::probe::CellInfo cell;

  Expected<ItemResult> run(TelephoneProbe& probe, FakeApi& api, std::size_t item = 0) {
    Context ctx{api, cell, &embedder, nullptr};
    return probe.run(probe.items().at(item), ctx);
  }
};

std::string config_error(const json& config, const ConfigSource& where = site()) {
  try {
    (void)kvsweep::probe::parse_telephone_config(config, where);
  } catch (const FatalError& e) {
    return e.message;
  }
  return "(no error)";
}

const double r2 = std::sqrt(2.0);
const double r3 = std::sqrt(3.0);

// ---------------------------------------------------------------------------------------
// Chains
// ---------------------------------------------------------------------------------------

// "a b c d" → "a b c" → "a b" → "a". With one count per letter, cos(x, y) = |x∩y| / √(|x||y|):
// to the original 3/√12 = √3/2, 2/√8 = √2/2, 1/√4 = 1/2; to the previous hop √3/2,
// 2/√6 = √(2/3), 1/√2.
// A response read back: a hop without a score is left out, an unnumbered one takes its place in the chain.
TEST(TelephoneHops, AreReadBackLenientlyAndNumbered) {
  const json response = {{"hops", json::array({{{"hop", 1}, {"sim_original", 0.9}},
                                               {{"sim_original", "x"}},
                                               {{"sim_original", 0.5}},
                                               {{"hop", 7}, {"sim_original", 0.25}}})}};
  const auto hops = kvsweep::probe::telephone_hops(response);
  ASSERT_EQ(hops.size(), 3u);
  EXPECT_EQ(hops[0].hop, 1);
  EXPECT_EQ(hops[1].hop, 3);
  EXPECT_DOUBLE_EQ(hops[1].sim_original, 0.5);
  EXPECT_EQ(hops[2].hop, 7);
  EXPECT_TRUE(kvsweep::probe::telephone_hops(json{{"hops", "none"}}).empty());
  EXPECT_TRUE(kvsweep::probe::telephone_hops(json()).empty());
}

TEST(TelephoneProbe, ThreeHopChainScoresEveryHopByHand) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {42}}, {"threshold", 0.8}});
  FakeApi api(drop_a_word);
  Harness h;
  auto result = h.run(probe, api);
  ASSERT_TRUE(result.has_value()) << result.error().message;

  const json& hops = result->response["hops"];
  ASSERT_EQ(hops.size(), 3u);
  EXPECT_EQ(hops[0]["text"], "a b c");
  EXPECT_EQ(hops[1]["text"], "a b");
  EXPECT_EQ(hops[2]["text"], "a");
  EXPECT_NEAR(hops[0]["sim_original"].get<double>(), r3 / 2, 1e-9);
  EXPECT_NEAR(hops[1]["sim_original"].get<double>(), r2 / 2, 1e-9);
  EXPECT_NEAR(hops[2]["sim_original"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(hops[0]["sim_previous"].get<double>(), r3 / 2, 1e-9);
  EXPECT_NEAR(hops[1]["sim_previous"].get<double>(), std::sqrt(2.0 / 3.0), 1e-9);
  EXPECT_NEAR(hops[2]["sim_previous"].get<double>(), 1 / r2, 1e-9);
  for (const auto& hop : hops) {
    EXPECT_FALSE(hop["empty"].get<bool>());
    EXPECT_FALSE(hop["cut"].get<bool>());
  }
  EXPECT_EQ(result->response["completed_hops"], 3);
  EXPECT_FALSE(result->response.contains("failed_at_hop"));
  // What the report reads back: every hop numbered, with its similarity to the original.
  const auto read = kvsweep::probe::telephone_hops(result->response);
  ASSERT_EQ(read.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(read[i].hop, i + 1);
    EXPECT_DOUBLE_EQ(read[i].sim_original, hops[i]["sim_original"].get<double>());
  }

  const json& m = result->metrics;
  EXPECT_NEAR(m["final_similarity"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(m["mean_similarity"].get<double>(), (r3 / 2 + r2 / 2 + 0.5) / 3, 1e-9);
  EXPECT_NEAR(m["min_similarity"].get<double>(), 0.5, 1e-9);
  EXPECT_EQ(m["first_below_threshold"], 2);  // 0.707 < 0.8 at hop 2
  EXPECT_EQ(m["empty_hops"], 0);
  EXPECT_EQ(m["cut_hops"], 0);

  // Timings summed over the three hops.
  EXPECT_EQ(result->timings.prompt_n, 30);
  EXPECT_EQ(result->timings.cache_n, 12);
  EXPECT_DOUBLE_EQ(result->timings.prompt_ms, 4.5);
  EXPECT_EQ(result->timings.predicted_n, 9);
  EXPECT_DOUBLE_EQ(result->timings.predicted_ms, 6.75);

  // The original went to the embedding server once, each hop's output once.
  ASSERT_EQ(h.embedding_server.embedded.size(), 4u);
  EXPECT_EQ(h.embedding_server.embedded[0], std::vector<std::string>{"a b c d"});
  EXPECT_EQ(h.embedding_server.embedded[3], std::vector<std::string>{"a"});
}

TEST(TelephoneProbe, NeverBelowThresholdIsHopsPlusOne) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {42}}, {"threshold", 0.4}});
  FakeApi api(drop_a_word);
  Harness h;
  auto result = h.run(probe, api);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->metrics["first_below_threshold"], 4);
}

TEST(TelephoneProbe, IdenticalOutputHasSimilarityOneToPreviousHop) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {42}}});
  FakeApi echo([](const CompletionRequest& r, int) -> Expected<CompletionResponse> { return answer(message_of(r)); });
  Harness h;
  auto result = h.run(probe, echo);
  ASSERT_TRUE(result.has_value());
  for (const auto& hop : result->response["hops"]) {
    EXPECT_EQ(hop["text"], "a b c d");
    EXPECT_NEAR(hop["sim_previous"].get<double>(), 1.0, 1e-12);
    EXPECT_NEAR(hop["sim_original"].get<double>(), 1.0, 1e-12);
  }
  EXPECT_EQ(result->metrics["first_below_threshold"], 4);
  // A message seen again comes from the cache.
  EXPECT_EQ(times_embedded(h.embedding_server, "a b c d"), 1);
}

TEST(TelephoneProbe, EmptyOutputKeepsPreviousMessageAndIsCounted) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {42}}});
  FakeApi api([](const CompletionRequest& r, int call) -> Expected<CompletionResponse> {
    if (call == 2) return answer(" \n\t");  // whitespace only counts as empty
    return answer(drop_last_word(message_of(r)));
  });
  Harness h;
  auto result = h.run(probe, api);
  ASSERT_TRUE(result.has_value()) << result.error().message;

  const json& hops = result->response["hops"];
  ASSERT_EQ(hops.size(), 3u);
  EXPECT_TRUE(hops[1]["empty"].get<bool>());
  EXPECT_EQ(hops[1]["text"], "");
  EXPECT_NEAR(hops[1]["sim_original"].get<double>(), r3 / 2, 1e-9);  // the kept message "a b c"
  EXPECT_NEAR(hops[1]["sim_previous"].get<double>(), 1.0, 1e-12);
  // Hop 3 was asked to paraphrase the kept message.
  ASSERT_EQ(api.requests.size(), 3u);
  EXPECT_EQ(message_of(api.requests[2]), "a b c");
  EXPECT_EQ(hops[2]["text"], "a b");
  EXPECT_EQ(result->metrics["empty_hops"], 1);
  EXPECT_EQ(result->response["empty_hops"], 1);
  EXPECT_NEAR(result->metrics["final_similarity"].get<double>(), r2 / 2, 1e-9);
}

TEST(TelephoneProbe, EmptyFirstHopKeepsTheOriginal) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 2}, {"seeds", {42}}});
  FakeApi api([](const CompletionRequest& r, int call) -> Expected<CompletionResponse> {
    if (call == 1) return answer("");
    return answer(drop_last_word(message_of(r)));
  });
  Harness h;
  auto result = h.run(probe, api);
  ASSERT_TRUE(result.has_value());
  EXPECT_NEAR(result->response["hops"][0]["sim_original"].get<double>(), 1.0, 1e-12);
  EXPECT_EQ(message_of(api.requests[1]), "a b c d");
}

TEST(TelephoneProbe, LeadingThinkBlockIsStrippedAndRawKept) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 1}, {"seeds", {42}}});
  FakeApi api([](const CompletionRequest&, int) -> Expected<CompletionResponse> {
    return answer("<think>\nlet me think\n</think>\n\na b c\n");
  });
  Harness h;
  auto result = h.run(probe, api);
  ASSERT_TRUE(result.has_value());
  const json& hop = result->response["hops"][0];
  EXPECT_EQ(hop["text"], "a b c");
  EXPECT_EQ(hop["raw"], "<think>\nlet me think\n</think>\n\na b c\n");
  EXPECT_EQ(times_embedded(h.embedding_server, "a b c"), 1);
}

TEST(TelephoneProbe, StripThinkBlock) {
  using kvsweep::probe::strip_think_block;
  EXPECT_EQ(strip_think_block("<think>\n\n</think>\n\nHello."), "Hello.");
  EXPECT_EQ(strip_think_block("  Hello <think>x</think>"), "Hello <think>x</think>");
  EXPECT_EQ(strip_think_block("<think>cut off mid-thought"), "");
  EXPECT_EQ(strip_think_block("\n plain \n"), "plain");
}

TEST(TelephoneProbe, HopAtTokenLimitIsFlaggedCut) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 2}, {"seeds", {42}}});
  FakeApi api([](const CompletionRequest& r, int call) -> Expected<CompletionResponse> {
    return answer(drop_last_word(message_of(r)), call == 1 ? "limit" : "eos");
  });
  Harness h;
  auto result = h.run(probe, api);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->response["hops"][0]["cut"].get<bool>());
  EXPECT_FALSE(result->response["hops"][1]["cut"].get<bool>());
  EXPECT_EQ(result->metrics["cut_hops"], 1);
}

// ---------------------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------------------

TEST(TelephoneProbe, ErrorAtHopTwoIsRecordedNotScoredAsZero) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {42}}, {"threshold", 0.8}});
  FakeApi api([](const CompletionRequest& r, int call) -> Expected<CompletionResponse> {
    if (call == 2) return kvsweep::core::fail(ErrorKind::http_status, "500 Internal Server Error", 500);
    return answer(drop_last_word(message_of(r)));
  });
  Harness h;
  auto result = h.run(probe, api);
  ASSERT_TRUE(result.has_value()) << result.error().message;

  const json& r = result->response;
  EXPECT_EQ(r["hops"].size(), 1u);
  EXPECT_EQ(r["failed_at_hop"], 2);
  EXPECT_EQ(r["completed_hops"], 1);
  EXPECT_EQ(r["error"]["kind"], "http_status");
  EXPECT_EQ(r["error"]["http_status"], 500);
  EXPECT_THAT(r["error"]["message"].get<std::string>(), HasSubstr("500 Internal Server Error"));
  EXPECT_EQ(api.requests.size(), 2u);  // the chain stopped

  // Metrics over hop 1 only: nothing is 0.
  EXPECT_NEAR(result->metrics["final_similarity"].get<double>(), r3 / 2, 1e-9);
  EXPECT_NEAR(result->metrics["mean_similarity"].get<double>(), r3 / 2, 1e-9);
  EXPECT_NEAR(result->metrics["min_similarity"].get<double>(), r3 / 2, 1e-9);
  EXPECT_EQ(result->metrics["first_below_threshold"], 2);  // completed hops + 1
  EXPECT_EQ(result->timings.prompt_n, 10);
}

TEST(TelephoneProbe, ErrorAtHopOneFailsTheItem) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {42}}});
  FakeApi api([](const CompletionRequest&, int) -> Expected<CompletionResponse> {
    return kvsweep::core::fail(ErrorKind::http_status, "400 bad request", 400);
  });
  Harness h;
  auto result = h.run(probe, api);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::http_status);
  EXPECT_EQ(result.error().http_status, 400);
  EXPECT_THAT(result.error().message, HasSubstr("hop 1/3"));
}

TEST(TelephoneProbe, ConnectAndTimeoutErrorsAreReturnedEvenMidChain) {
  for (ErrorKind kind : {ErrorKind::connect, ErrorKind::timeout, ErrorKind::cancelled}) {
    auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {42}}});
    FakeApi api([kind](const CompletionRequest& r, int call) -> Expected<CompletionResponse> {
      if (call == 2) return kvsweep::core::fail(kind, "server gone");
      return answer(drop_last_word(message_of(r)));
    });
    Harness h;
    auto result = h.run(probe, api);
    ASSERT_FALSE(result.has_value()) << kvsweep::core::to_string(kind);
    EXPECT_EQ(result.error().kind, kind);
    EXPECT_THAT(result.error().message, HasSubstr("hop 2/3: server gone"));
  }
}

TEST(TelephoneProbe, EmbedderFailureFailsTheItem) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {42}}});
  FakeApi api(drop_a_word);
  FakeEmbedder embedder;
  embedder.fail_on_call = 2;  // the first hop's output
  kvsweep::probe::CellInfo cell;
  Context ctx{api, cell, &embedder, nullptr};
  auto result = probe.run(probe.items()[0], ctx);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::connect);
  EXPECT_THAT(result.error().message, HasSubstr("embedder: embedding server down"));
}

TEST(TelephoneProbe, ZeroNormEmbeddingIsAnErrorNotASimilarity) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {42}}});
  FakeApi api(drop_a_word);
  FakeEmbedder embedder;
  embedder.zero_for = "a b";
  kvsweep::probe::CellInfo cell;
  Context ctx{api, cell, &embedder, nullptr};
  auto result = probe.run(probe.items()[0], ctx);
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, HasSubstr("zero-norm"));
  EXPECT_THAT(result.error().message, HasSubstr("hop 2/3"));
}

TEST(TelephoneProbe, NonFiniteEmbeddingIsAnError) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {42}}});
  FakeApi api(drop_a_word);
  FakeEmbedder embedder;
  embedder.nan_for = "a b c";
  kvsweep::probe::CellInfo cell;
  Context ctx{api, cell, &embedder, nullptr};
  auto result = probe.run(probe.items()[0], ctx);
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, HasSubstr("hop 1/3: cannot score: embedding holds a NaN"))
      << result.error().message;
}

TEST(TelephoneProbe, NoEmbedderIsAnError) {
  auto probe = probe_from({{"hops", 1}});
  FakeApi api(drop_a_word);
  kvsweep::probe::CellInfo cell;
  Context ctx{api, cell, nullptr, nullptr};
  auto result = probe.run(probe.items()[0], ctx);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::invalid);
}

// ---------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------

TEST(TelephoneProbe, HopSeedRule) {
  using kvsweep::probe::telephone_hop_seed;
  EXPECT_EQ(telephone_hop_seed(42, 1), 42u);
  EXPECT_EQ(telephone_hop_seed(42, 2), 43u);
  EXPECT_EQ(telephone_hop_seed(42, 30), 71u);
  EXPECT_EQ(telephone_hop_seed(0xFFFFFFFEu, 1), 0xFFFFFFFEu);
  EXPECT_EQ(telephone_hop_seed(0xFFFFFFFEu, 2), 0u);  // skips 0xFFFFFFFF ("random" to llama-server)
}

TEST(TelephoneProbe, HopBudgetIsRelativeToTheInputAndCappedByMaxTokens) {
  // Fake tokens = words; the chain drops a word per hop: inputs of 4, 3, 2 words.
  auto relative = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {7}}, {"max_tokens", 64},
                              {"budget_factor", 2}, {"budget_plus", 1}});
  FakeApi api(drop_a_word);
  api.on_tokenize = words;
  Harness h;
  ASSERT_TRUE(h.run(relative, api, 0).has_value());
  ASSERT_EQ(api.requests.size(), 3u);
  EXPECT_EQ(api.requests[0].n_predict, 9);  // 2 * 4 + 1
  EXPECT_EQ(api.requests[1].n_predict, 7);
  EXPECT_EQ(api.requests[2].n_predict, 5);

  auto capped = probe_from({{"texts", {"a b c d"}}, {"hops", 2}, {"seeds", {7}}, {"max_tokens", 6},
                            {"budget_factor", 2}, {"budget_plus", 1}});
  FakeApi api2(drop_a_word);
  api2.on_tokenize = words;
  ASSERT_TRUE(h.run(capped, api2, 0).has_value());
  EXPECT_EQ(api2.requests[0].n_predict, 6);  // min(6, 9)
  EXPECT_EQ(api2.requests[1].n_predict, 6);  // min(6, 7)
}

TEST(TelephoneProbe, ATextIsTokenizedOnceForItsBudget) {
  // Two seeds of one text: the same chain of inputs ("a b c d", "a b c", "a b"); the second chain
  // asks the server to count nothing, and its budgets are the same.
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {7, 9}}, {"max_tokens", 64},
                           {"budget_factor", 2}, {"budget_plus", 1}});
  FakeApi api(drop_a_word);
  api.on_tokenize = words;
  Harness h;
  ASSERT_TRUE(h.run(probe, api, 0).has_value());
  EXPECT_EQ(tokenized_texts(api), (std::vector<std::string>{"a b c d", "a b c", "a b"}));
  ASSERT_TRUE(h.run(probe, api, 1).has_value());
  EXPECT_EQ(api.tokenized.size(), 3u);
  ASSERT_EQ(api.requests.size(), 6u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(api.requests[3 + i].n_predict, api.requests[i].n_predict) << i;
  EXPECT_EQ(api.requests[3].n_predict, 9);  // 2 * 4 + 1

  // A failed count is not remembered: the next hop asks again, and the budget falls back to max_tokens.
  FakeApi failing(drop_a_word);
  auto fresh = probe_from({{"texts", {"a b c d"}}, {"hops", 2}, {"seeds", {7}}, {"max_tokens", 64},
                           {"budget_factor", 2}, {"budget_plus", 1}});
  ASSERT_TRUE(h.run(fresh, failing, 0).has_value());
  EXPECT_EQ(failing.tokenized.size(), 2u);
  EXPECT_EQ(failing.requests[0].n_predict, 64);
}

TEST(TelephoneProbe, ChatRequestSetsEverySamplingFieldAndPerHopSeed) {
  auto probe = probe_from({{"texts", {"a b c d"}},
                           {"hops", 3},
                           {"seeds", {7, 9}},
                           {"temperature", 0.5},
                           {"top_k", 20},
                           {"top_p", 0.9},
                           {"min_p", 0.05},
                           {"max_tokens", 64},
                           {"system", "Be brief."}});
  FakeApi api(drop_a_word);
  Harness h;
  auto result = h.run(probe, api, 1);  // item t0-s9
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(api.requests.size(), 3u);
  const std::vector<std::string> messages{"a b c d", "a b c", "a b"};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& r = api.requests[i];
    EXPECT_EQ(r.seed, 9u + i);
    EXPECT_EQ(r.n_predict, 64);
    EXPECT_DOUBLE_EQ(r.temperature, 0.5);
    EXPECT_EQ(r.top_k, 20);
    EXPECT_DOUBLE_EQ(r.top_p, 0.9);
    EXPECT_DOUBLE_EQ(r.min_p, 0.05);
    EXPECT_EQ(r.n_probs, 0);
    EXPECT_TRUE(r.cache_prompt);
    EXPECT_TRUE(r.prompt.empty());
    ASSERT_EQ(r.messages.size(), 2u);
    EXPECT_EQ(r.messages[0].role, "system");
    EXPECT_EQ(r.messages[0].content, "Be brief.");
    EXPECT_EQ(r.messages[1].role, "user");
    EXPECT_EQ(r.messages[1].content, "Paraphrase this to the next agent: " + messages[i]);
    // A JSON boolean: llama-server rejects the string "false".
    EXPECT_EQ(r.extra, (json{{"chat_template_kwargs", {{"enable_thinking", false}}}}));
    EXPECT_EQ(result->response["hops"][i]["seed"], r.seed);
  }
}

TEST(TelephoneProbe, ChatWithoutSystemOrThinkingSuppression) {
  auto probe = probe_from({{"texts", {"a b"}}, {"hops", 1}, {"seeds", {42}}, {"suppress_thinking", false}});
  FakeApi api(drop_a_word);
  Harness h;
  ASSERT_TRUE(h.run(probe, api).has_value());
  ASSERT_EQ(api.requests[0].messages.size(), 1u);
  EXPECT_EQ(api.requests[0].messages[0].role, "user");
  EXPECT_FALSE(api.requests[0].extra.contains("chat_template_kwargs"));
}

TEST(TelephoneProbe, RawModeSendsTheRenderedTemplateAsPrompt) {
  auto probe = probe_from({{"texts", {"a b c"}},
                           {"hops", 2},
                           {"seeds", {5}},
                           {"mode", "raw"},
                           {"template", "Q: say it again: {message}\nA:"}});
  FakeApi api([](const CompletionRequest& r, int) -> Expected<CompletionResponse> {
    const std::string body = r.prompt.substr(std::string("Q: say it again: ").size());
    return answer(drop_last_word(body.substr(0, body.size() - std::string("\nA:").size())));
  });
  Harness h;
  auto result = h.run(probe, api);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(api.requests.size(), 2u);
  EXPECT_EQ(api.requests[0].prompt, "Q: say it again: a b c\nA:");
  EXPECT_EQ(api.requests[1].prompt, "Q: say it again: a b\nA:");
  EXPECT_TRUE(api.requests[0].messages.empty());
  EXPECT_FALSE(api.requests[0].extra.contains("chat_template_kwargs"));
  EXPECT_EQ(api.requests[1].seed, 6u);
}

TEST(TelephoneProbe, TemplateSubstitution) {
  using kvsweep::probe::render_template;
  EXPECT_EQ(render_template("<{message}|{message}>", "x"), "<x|x>");
  EXPECT_EQ(render_template("no placeholder", "x"), "no placeholder");
  // The message is inserted verbatim, never expanded again.
  EXPECT_EQ(render_template("A {message}", "{message} {other}"), "A {message} {other}");
  EXPECT_EQ(render_template("{message}", ""), "");
}

TEST(TelephoneProbe, PresetsRenderAroundTheMessage) {
  auto names = kvsweep::probe::telephone_preset_names();
  EXPECT_EQ(names, (std::vector<std::string>{"published", "perez2025", "mohamed2025"}));
  for (const auto& name : names) {
    auto text = kvsweep::probe::telephone_preset(name);
    ASSERT_TRUE(text.has_value());
    EXPECT_THAT(*text, HasSubstr("{message}")) << name;
  }
  EXPECT_EQ(*kvsweep::probe::telephone_preset("published"), "Paraphrase this to the next agent: {message}");

  auto probe = probe_from({{"texts", {"a b"}}, {"hops", 1}, {"seeds", {42}}, {"preset", "mohamed2025"}});
  FakeApi api([](const CompletionRequest&, int) -> Expected<CompletionResponse> { return answer("a"); });
  Harness h;
  ASSERT_TRUE(h.run(probe, api).has_value());
  const std::string& content = api.requests[0].messages.back().content;
  EXPECT_TRUE(content.starts_with("Given a passage, rephrase it")) << content;
  EXPECT_TRUE(content.ends_with("Rephrase the following text: a b")) << content;
  EXPECT_EQ(probe.config().preset, "mohamed2025");
}

// ---------------------------------------------------------------------------------------
// Config
// ---------------------------------------------------------------------------------------

TEST(TelephoneConfig, DefaultsReproduceSeed000) {
  auto config = kvsweep::probe::parse_telephone_config(json{{"kind", "telephone"}}, site());
  ASSERT_EQ(config.texts.size(), 1u);
  EXPECT_EQ(config.texts[0], "Step 1: Boil water. Step 2: Add pasta for 8 minutes. Step 3: Drain and serve with sauce.");
  EXPECT_EQ(config.template_text, "Paraphrase this to the next agent: {message}");
  EXPECT_EQ(config.hops, 30);
  EXPECT_DOUBLE_EQ(config.temperature, 0.7);
  EXPECT_EQ(config.seeds, (std::vector<std::uint32_t>{42, 137, 256, 512, 1024}));
  EXPECT_EQ(config.max_tokens, 2048);
  EXPECT_DOUBLE_EQ(config.budget_factor, 4.0);
  EXPECT_EQ(config.budget_plus, 64);
  EXPECT_EQ(config.mode, kvsweep::probe::TelephoneMode::chat);
  EXPECT_FALSE(config.system.has_value());
  EXPECT_TRUE(config.suppress_thinking);
  EXPECT_DOUBLE_EQ(config.threshold, 0.8);
  EXPECT_EQ(config.top_k, 40);
  EXPECT_DOUBLE_EQ(config.top_p, 1.0);
  EXPECT_DOUBLE_EQ(config.min_p, 0.0);
  EXPECT_EQ(config.name, "telephone");
}

TEST(TelephoneConfig, UnknownKeySuggestsTheNearest) {
  const std::string e = config_error({{"kind", "telephone"}, {"hopz", 3}});
  EXPECT_THAT(e, HasSubstr("cfg.json: probes[0]: unknown key 'hopz'")) << e;
  EXPECT_THAT(e, HasSubstr("(did you mean 'hops'?)")) << e;
  EXPECT_THAT(config_error({{"kind", "telephone"}, {"temprature", 0.1}}), HasSubstr("did you mean 'temperature'"));
  EXPECT_THAT(config_error({{"kind", "telephone"}, {"suppress_think", true}}),
              HasSubstr("did you mean 'suppress_thinking'"));
  // Nothing close: the valid keys are listed instead.
  const std::string far = config_error({{"kind", "telephone"}, {"zzzzzzzzzz", 1}});
  EXPECT_THAT(far, HasSubstr("one of: kind, name, texts")) << far;
}

TEST(TelephoneConfig, WrongTypesNameTheKey) {
  const std::string e = config_error({{"kind", "telephone"}, {"hops", "30"}});
  EXPECT_THAT(e, HasSubstr("cfg.json: probes[0].hops: expected an integer, got string \"30\"")) << e;
  EXPECT_THAT(config_error({{"kind", "telephone"}, {"hops", 2.5}}), HasSubstr("probes[0].hops: expected an integer"));
  EXPECT_THAT(config_error({{"kind", "telephone"}, {"temperature", "hot"}}),
              HasSubstr("probes[0].temperature: expected a number"));
  EXPECT_THAT(config_error({{"kind", "telephone"}, {"texts", "one"}}), HasSubstr("probes[0].texts: expected an array"));
  EXPECT_THAT(config_error({{"kind", "telephone"}, {"texts", {"ok", 1}}}),
              HasSubstr("probes[0].texts[1]: expected a string"));
  EXPECT_THAT(config_error({{"kind", "telephone"}, {"suppress_thinking", "false"}}),
              HasSubstr("probes[0].suppress_thinking: expected true or false"));
  EXPECT_THAT(config_error({{"kind", "telephone"}, {"system", 3}}), HasSubstr("probes[0].system: expected a string"));
  EXPECT_THAT(config_error({{"kind", "telephone"}, {"seeds", {42, "x"}}}), HasSubstr("probes[0].seeds[1]"));
}

TEST(TelephoneConfig, ValuesOutOfRangeOrInConflict) {
  auto has = [](const json& config, std::string_view what) {
    json c = config;
    c["kind"] = "telephone";
    const std::string e = config_error(c);
    return e.find(what) != std::string::npos ? ::testing::AssertionSuccess()
                                             : ::testing::AssertionFailure() << e;
  };
  EXPECT_TRUE(has({{"hops", 0}}, "probes[0].hops: must be between 1"));
  EXPECT_TRUE(has({{"seeds", json::array()}}, "probes[0].seeds: must hold at least one seed"));
  EXPECT_TRUE(has({{"seeds", {42, 42}}}, "probes[0].seeds[1]: seed 42 is listed twice"));
  EXPECT_TRUE(has({{"seeds", {-1}}}, "probes[0].seeds[0]: expected an integer from 0 to 4294967294"));
  EXPECT_TRUE(has({{"seeds", {4294967295u}}}, "probes[0].seeds[0]"));
  EXPECT_TRUE(has({{"template", "Paraphrase: {msg}"}}, "probes[0].template: must contain {message}"));
  EXPECT_TRUE(has({{"template", "{message}"}, {"preset", "published"}}, "not both"));
  EXPECT_TRUE(has({{"preset", "perez"}}, "probes[0].preset: unknown preset 'perez' (did you mean 'perez2025'?)"));
  EXPECT_TRUE(has({{"mode", "chta"}}, "probes[0].mode: unknown value 'chta' (did you mean 'chat'?)"));
  EXPECT_TRUE(has({{"mode", "raw"}, {"system", "x"}}, "probes[0].system: applies to \"mode\": \"chat\" only"));
  EXPECT_TRUE(has({{"top_p", 0.0}}, "probes[0].top_p: must be greater than 0"));
  EXPECT_TRUE(has({{"threshold", 1.5}}, "probes[0].threshold"));
  EXPECT_TRUE(has({{"texts", json::array()}}, "probes[0].texts: must hold at least one text"));
  EXPECT_TRUE(has({{"texts", {""}}}, "probes[0].texts[0]: must not be empty"));
  EXPECT_TRUE(has({{"texts", {"a"}}, {"texts_file", "t.txt"}}, "not both"));
  EXPECT_TRUE(has({{"max_tokens", 0}}, "probes[0].max_tokens"));
  EXPECT_THAT(config_error({{"kind", "recall"}}), HasSubstr("probes[0].kind: expected \"telephone\""));
  EXPECT_THAT(config_error(json::array()), HasSubstr("cfg.json: probes[0]: expected an object, got array []"));
}

TEST(TelephoneConfig, TextsFileLinesAndJsonlResolveAgainstBaseDir) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kvsweep_telephone_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "texts.txt") << "first text\n\n  \nsecond text\r\n";
    std::ofstream(dir / "texts.jsonl") << "{\"text\": \"one\"}\n\n{\"text\": \"two\", \"id\": 7}\n";
    std::ofstream(dir / "bad.jsonl") << "{\"text\": \"one\"}\n{\"body\": \"two\"}\n";
  }
  auto lines = kvsweep::probe::parse_telephone_config({{"kind", "telephone"}, {"texts_file", "texts.txt"}}, site(dir));
  EXPECT_EQ(lines.texts, (std::vector<std::string>{"first text", "second text"}));
  auto jsonl = kvsweep::probe::parse_telephone_config({{"kind", "telephone"}, {"texts_file", "texts.jsonl"}}, site(dir));
  EXPECT_EQ(jsonl.texts, (std::vector<std::string>{"one", "two"}));

  const std::string bad = config_error({{"kind", "telephone"}, {"texts_file", "bad.jsonl"}}, site(dir));
  EXPECT_THAT(bad, HasSubstr("probes[0].texts_file: ")) << bad;
  EXPECT_THAT(bad, HasSubstr("bad.jsonl:2: expected an object with a string \"text\"")) << bad;
  const std::string missing = config_error({{"kind", "telephone"}, {"texts_file", "nope.txt"}}, site(dir));
  EXPECT_THAT(missing, HasSubstr("probes[0].texts_file: " + (dir / "nope.txt").string() + ": no such file")) << missing;
  std::filesystem::remove_all(dir);
}

TEST(TelephoneProbe, ItemKeysAreStable) {
  const json config{{"kind", "telephone"}, {"texts", {"first", "second"}}, {"seeds", {42, 137}}, {"name", "tel-a"}};
  auto a = kvsweep::probe::make_telephone_probe(config, site());
  auto b = kvsweep::probe::make_telephone_probe(config, site());
  std::vector<std::string> keys;
  for (const auto& item : a->items()) keys.push_back(item.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"t0-s42", "t0-s137", "t1-s42", "t1-s137"}));
  ASSERT_EQ(b->items().size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a->items()[i].key, b->items()[i].key);
    EXPECT_EQ(a->items()[i].spec, b->items()[i].spec);
  }
  EXPECT_EQ(a->items()[3].spec, (json{{"text", "second"}, {"seed", 137}}));
  EXPECT_EQ(a->kind(), "telephone");
  EXPECT_EQ(a->name(), "tel-a");
  EXPECT_TRUE(a->needs_embedder());
  EXPECT_GT(a->min_context(), 2 * 256);
}

TEST(TelephoneProbe, MetricsAndTheirDirections) {
  auto probe = probe_from({});
  std::vector<std::pair<std::string, bool>> got;
  for (const auto& m : probe.metrics()) got.emplace_back(m.name, m.higher_is_better());
  EXPECT_EQ(got, (std::vector<std::pair<std::string, bool>>{{"final_similarity", true},
                                                            {"mean_similarity", true},
                                                            {"min_similarity", true},
                                                            {"first_below_threshold", true},
                                                            {"empty_hops", false},
                                                            {"cut_hops", false}}));
}

TEST(TelephoneProbe, TheSimilaritiesToTheOriginalGateAndTheRestIsReported) {
  auto probe = probe_from({});
  std::vector<std::string> gated, reported;
  for (const auto& m : probe.metrics()) (m.gated_by_default() ? gated : reported).push_back(m.name);
  EXPECT_EQ(gated, (std::vector<std::string>{"final_similarity", "mean_similarity"}));
  EXPECT_EQ(reported, (std::vector<std::string>{"min_similarity", "first_below_threshold", "empty_hops", "cut_hops"}));
  for (const auto& m : probe.metrics()) {
    if (m.gated_by_default()) {
      EXPECT_EQ(m.role, kvsweep::probe::MetricRole::quality) << m.name << ": scored against the original text";
    }
  }
}

// ---------------------------------------------------------------------------------------
// ApiEmbedder in a chain (the embedder alone: embedder_test.cpp)
// ---------------------------------------------------------------------------------------

TEST(ApiEmbedder, OriginalTextIsEmbeddedOncePerRun) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 2}, {"seeds", {42, 137}}});
  FakeApi api(drop_a_word);
  Harness h;
  ASSERT_TRUE(h.run(probe, api, 0).has_value());
  ASSERT_TRUE(h.run(probe, api, 1).has_value());
  EXPECT_EQ(times_embedded(h.embedding_server, "a b c d"), 1);
  EXPECT_GE(h.embedder.cache_hits(), 1u);
}

}  // namespace

TEST(TelephoneProbe, DeclaresExactlyTheMetricsAChainEmits) {
  auto probe = probe_from({{"texts", {"a b c d"}}, {"hops", 3}, {"seeds", {42}}, {"threshold", 0.8}});
  FakeApi api(drop_a_word);
  Harness h;
  auto result = h.run(probe, api);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  kvsweep::probe::testing::expect_declarations_match(probe, result->metrics);
  // Sampled at temperature 0.7 (the default): not deterministic; greedy chains are.
  EXPECT_FALSE(probe.deterministic());
  EXPECT_TRUE(probe_from({{"texts", {"a b"}}, {"temperature", 0.0}}).deterministic());
}
