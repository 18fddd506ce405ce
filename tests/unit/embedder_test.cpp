// The ApiEmbedder over a scripted embedding server (bag-of-letters vectors): batches of distinct
// misses, a cache that keeps what is asked for twice, and server faults as errors.

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/telephone/embedder.hpp"
#include "bag_of_letters.hpp"
#include "fake_api.hpp"

using ::testing::HasSubstr;

namespace {

using kvsweep::core::ErrorKind;
using kvsweep::core::Expected;
using kvsweep::probe::ApiEmbedder;
using kvsweep::testing::bag_of_letters;
using kvsweep::testing::bag_of_letters_server;
using kvsweep::testing::FakeApi;
using kvsweep::testing::letters;
using kvsweep::testing::times_embedded;
using nlohmann::json;

TEST(ApiEmbedder, BatchesDistinctMissesInOrderAndDescribes) {
  FakeApi server = bag_of_letters_server();
  ApiEmbedder embedder(server, json{{"model", "/m/embed.gguf"}, {"sha256", "abc"}, {"backend", "llama-server"}});
  auto first = embedder.embed({"ab", "b", "ab"});
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(server.embedded.size(), 1u);
  EXPECT_EQ(server.embedded[0], (std::vector<std::string>{"ab", "b"}));
  ASSERT_EQ(first->size(), 3u);
  EXPECT_EQ((*first)[0], bag_of_letters("ab"));
  EXPECT_EQ((*first)[1], bag_of_letters("b"));
  EXPECT_EQ((*first)[2], bag_of_letters("ab"));

  auto second = embedder.embed({"b", "c"});
  ASSERT_TRUE(second.has_value());
  ASSERT_EQ(server.embedded.size(), 2u);
  EXPECT_EQ(server.embedded[1], std::vector<std::string>{"c"});
  EXPECT_EQ((*second)[0], bag_of_letters("b"));
  EXPECT_EQ(embedder.requests_sent(), 2u);
  EXPECT_EQ(embedder.texts_sent(), 3u);
  EXPECT_EQ(embedder.describe()["sha256"], "abc");
}

TEST(ApiEmbedder, TextAskedForTwiceSurvivesAStreamOfOneOffs) {
  FakeApi server = bag_of_letters_server();
  ApiEmbedder embedder(server, json::object(), /*capacity=*/8);  // 2 protected, 6 probation
  ASSERT_TRUE(embedder.embed({"original"}).has_value());
  ASSERT_TRUE(embedder.embed({"original"}).has_value());  // promoted
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(embedder.embed({"hop " + std::to_string(i)}).has_value());
  ASSERT_TRUE(embedder.embed({"original"}).has_value());
  EXPECT_EQ(times_embedded(server, "original"), 1);
  EXPECT_LE(embedder.cached(), 8u);
  // A one-off from long ago was evicted and is fetched again.
  ASSERT_TRUE(embedder.embed({"hop 0"}).has_value());
  EXPECT_EQ(times_embedded(server, "hop 0"), 2);
}

TEST(ApiEmbedder, ServerErrorsAndMalformedRepliesAreErrors) {
  FakeApi server = bag_of_letters_server();
  ApiEmbedder embedder(server, json::object());
  server.on_embed = [](const std::vector<std::string>&) -> Expected<std::vector<std::vector<float>>> {
    return kvsweep::core::fail(ErrorKind::connect, "refused");
  };
  auto down = embedder.embed({"a"});
  ASSERT_FALSE(down.has_value());
  EXPECT_EQ(down.error().kind, ErrorKind::connect);

  server.on_embed = [](const std::vector<std::string>& inputs) {  // one vector too many
    auto out = letters(inputs);
    out->push_back(bag_of_letters("x"));
    return out;
  };
  auto too_many = embedder.embed({"a"});
  ASSERT_FALSE(too_many.has_value());
  EXPECT_EQ(too_many.error().kind, ErrorKind::parse);

  server.on_embed = letters;
  ASSERT_TRUE(embedder.embed({"a"}).has_value());  // 26 dimensions from now on
  server.on_embed = [](const std::vector<std::string>& inputs) {  // 10 dimensions
    auto out = letters(inputs);
    out->back().resize(10, 1.0f);
    return out;
  };
  auto other_dims = embedder.embed({"b"});
  ASSERT_FALSE(other_dims.has_value());
  EXPECT_THAT(other_dims.error().message, HasSubstr("10 dimensions after 26"));
  EXPECT_EQ(embedder.cached(), 1u);  // nothing from a bad reply is cached
}

}  // namespace
