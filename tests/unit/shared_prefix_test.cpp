// Token-id prompts: the prefix tokenized once per model, the rest as it continues it, and the
// check that the ids equal the server's own tokens of the whole text (fake tokenizers below).
#include "kvsweep/probe/recall/shared_prefix.hpp"

#include <cctype>

#include <gtest/gtest.h>

#include "fake_api.hpp"

namespace kvsweep::probe {
namespace {

using kvsweep::testing::FakeApi;

/// How the fake tokenizes, each like a family of real tokenizers at the split.
enum class Style {
  bytes,         // one token per byte: a split anywhere is safe
  space_prefix,  // llama's SPM: every text it is given starts with a space token
  merging,       // a letter and the newline after it are one token: a token straddles the split
};

/// A server whose tokenizer works in `style`.
FakeApi tokenizing(Style style) {
  FakeApi api;
  api.on_tokenize = [style](const std::string& text, bool add_special) -> core::Expected<std::vector<std::int32_t>> {
    std::vector<std::int32_t> ids;
    if (add_special) ids.push_back(1);  // BOS
    if (style == Style::space_prefix) ids.push_back(' ');
    for (std::size_t i = 0; i < text.size(); ++i) {
      const bool letter = std::isalpha(static_cast<unsigned char>(text[i])) != 0;
      if (style == Style::merging && letter && i + 1 < text.size() && text[i + 1] == '\n') {
        ids.push_back(1000 + text[i]);
        ++i;
        continue;
      }
      ids.push_back(static_cast<unsigned char>(text[i]));
    }
    return ids;
  };
  return api;
}

const std::string k_corpus = "def a():\n    return 1\n\ndef b():\n    return 2\n";
const std::string k_rest1 = "\n\n---\n\nTask: reproduce a\n";
const std::string k_rest2 = "\n\n---\n\nTask: reproduce b\n";

/// The server's tokens of the whole text, as /completion makes them of a string prompt.
std::vector<std::int32_t> whole(Style style, const std::string& text) {
  FakeApi api = tokenizing(style);
  return *api.tokenize(text, true);
}

std::size_t long_texts(const FakeApi& api) {
  std::size_t n = 0;
  for (const auto& [text, add_special] : api.tokenized) n += text.size() >= k_corpus.size() - 1;
  return n;
}

TEST(SharedPrefix, SplitsAfterTheLastNonBlankByte) {
  const SharedPrefix p(k_corpus + "\n");
  EXPECT_EQ(p.head(), k_corpus.substr(0, k_corpus.size() - 1));
  EXPECT_EQ(p.tail(), "\n\n");
}

TEST(SharedPrefix, IdsEqualTheWholeTextsTokensAndThePrefixIsTokenizedOncePerModel) {
  for (const Style style : {Style::bytes, Style::space_prefix}) {
    SharedPrefix prefix(k_corpus);
    FakeApi api = tokenizing(style);
    const auto first = prefix.prompt_ids(api, "m", k_rest1);
    ASSERT_TRUE(first && *first);
    EXPECT_EQ(**first, whole(style, k_corpus + k_rest1));
    EXPECT_EQ(prefix.mode("m"), style == Style::bytes ? RestTokens::plain : RestTokens::after_newline);
    const auto second = prefix.prompt_ids(api, "m", k_rest2);
    ASSERT_TRUE(second && *second);
    EXPECT_EQ(**second, whole(style, k_corpus + k_rest2));
    // The corpus once for its own tokens, once for the check; never again for this model.
    EXPECT_EQ(long_texts(api), 2u);
    const auto count = prefix.head_tokens(api, "m");
    ASSERT_TRUE(count && *count);
    EXPECT_EQ(**count, static_cast<int>(whole(style, prefix.head()).size()));
    EXPECT_EQ(long_texts(api), 2u);
    // Another model has its own tokenizer: asked again.
    ASSERT_TRUE(prefix.prompt_ids(api, "other", k_rest1));
    EXPECT_EQ(long_texts(api), 4u);
  }
}

TEST(SharedPrefix, WhereNoIdsEqualTheTextsTokensItSaysToSendText) {
  SharedPrefix prefix("x = 1\ny\n");
  FakeApi api = tokenizing(Style::merging);
  const auto ids = prefix.prompt_ids(api, "m", "z\n");
  ASSERT_TRUE(ids);
  EXPECT_FALSE(*ids);
  EXPECT_EQ(prefix.mode("m"), RestTokens::text);
  // Decided once: the next prompt neither checks again nor tokenizes the rest.
  const std::size_t asked = api.tokenized.size();
  ASSERT_TRUE(prefix.prompt_ids(api, "m", "w\n"));
  EXPECT_EQ(api.tokenized.size(), asked);
}

TEST(SharedPrefix, ABackendWithoutATokenizerGetsText) {
  SharedPrefix prefix(k_corpus);
  FakeApi api;  // no tokenizer
  const auto ids = prefix.prompt_ids(api, "m", k_rest1);
  ASSERT_TRUE(ids);
  EXPECT_FALSE(*ids);
  const auto count = prefix.head_tokens(api, "m");
  ASSERT_TRUE(count);
  EXPECT_FALSE(*count);
}

}  // namespace
}  // namespace kvsweep::probe
