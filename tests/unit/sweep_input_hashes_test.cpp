// A changed prompts file is noticed: a resume and a merge compare the input files the
// manifests' probes recorded, by content, and name what changed.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/sweep/store/input_hashes.hpp"

using ::testing::HasSubstr;
using json = nlohmann::json;
namespace sweep = kvsweep::sweep;

namespace {

json probes(const std::string& path, const std::string& sha) {
  return json::array({{{"name", "complete"}, {"kind", "complete"}, {"inputs", {{{"key", "prompts_file"}, {"path", path}, {"sha256", sha}}}}},
                      {{"name", "toolcall"}, {"kind", "toolcall"}}});
}

}  // namespace

TEST(InputHashes, AChangedPromptsFileIsNamedWithBothHashes) {
  const auto changes = sweep::changed_inputs(probes("/cfg/p.txt", "aaa"), probes("/cfg/p.txt", "bbb"));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].probe, "complete");
  EXPECT_EQ(changes[0].key, "prompts_file");
  const std::string text = sweep::describe_input_changes(changes, "when the run started", "now");
  EXPECT_EQ(text, "probe 'complete' prompts_file /cfg/p.txt: sha256 aaa when the run started, sha256 bbb now");
}

TEST(InputHashes, TheContentDecidesNotThePath) {
  // A shard that read the same file under another folder read the same input.
  EXPECT_TRUE(sweep::changed_inputs(probes("/a/p.txt", "aaa"), probes("/b/p.txt", "aaa")).empty());
  EXPECT_TRUE(sweep::changed_inputs(probes("/a/p.txt", "aaa"), probes("/a/p.txt", "aaa")).empty());
}

TEST(InputHashes, AFileMoreOrLessIsAChangeAndARunFromBeforeInputsIsNotCompared) {
  json more = probes("/a/p.txt", "aaa");
  more[0]["inputs"].push_back({{"key", "prompts_file"}, {"path", "/a/q.txt"}, {"sha256", "ccc"}});
  const auto changes = sweep::changed_inputs(probes("/a/p.txt", "aaa"), more);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_THAT(sweep::describe_input_changes(changes, "then", "now"), HasSubstr("/a/q.txt: not read then, sha256 ccc now"));

  json old = probes("/a/p.txt", "aaa");
  old[0].erase("inputs");
  EXPECT_TRUE(sweep::changed_inputs(old, probes("/a/p.txt", "bbb")).empty());
  EXPECT_TRUE(sweep::changed_inputs(json(), probes("/a/p.txt", "bbb")).empty());
  EXPECT_TRUE(sweep::changed_inputs(json::array({"not an object", 3}), json::object()).empty());
}
