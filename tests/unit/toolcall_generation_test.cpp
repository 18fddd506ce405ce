// The toolcall generation, seeded: golden prompt hashes, values that appear once deep in the
// filler and never in the question, and expected arguments the scorer accepts.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/corpus/filler.hpp"
#include "kvsweep/probe/toolcall/toolcall.hpp"
#include "kvsweep/score/toolcall_score.hpp"
#include "generated_text.hpp"

namespace {

using kvsweep::corpus::FillerKind;
using kvsweep::probe::ToolcallMode;
using kvsweep::score::parse_json_call;
using kvsweep::score::score_toolcall;
using kvsweep::testing::count;
using kvsweep::testing::mixed_words;
using nlohmann::json;

TEST(ToolcallGeneration, GoldenHashes) {
  using kvsweep::probe::build_toolcall_prompt;
  using kvsweep::probe::make_toolcall_task;
  using kvsweep::probe::toolcall_prompt_hash;
  auto hash = [](std::uint64_t seed, int tools, ToolcallMode mode, FillerKind kind, std::size_t chars) {
    return toolcall_prompt_hash(build_toolcall_prompt(make_toolcall_task(seed, tools), mode, kind, chars, seed));
  };
  // If these change, every published toolcall number changes with them: bump on purpose only.
  EXPECT_EQ(hash(1, 0, ToolcallMode::json, FillerKind::code, 7000), "dae36f9db2a22512");
  EXPECT_EQ(hash(2, 4, ToolcallMode::json, FillerKind::prose, 3000), "316c5768e61c54a3");
  EXPECT_EQ(hash(3, 6, ToolcallMode::native, FillerKind::logs, 5000), "eafbdeef956db7aa");
  // Same seed, same prompt; another seed, another prompt.
  EXPECT_EQ(hash(1, 0, ToolcallMode::json, FillerKind::code, 7000), hash(1, 0, ToolcallMode::json, FillerKind::code, 7000));
  EXPECT_NE(hash(1, 0, ToolcallMode::json, FillerKind::code, 7000), hash(4, 0, ToolcallMode::json, FillerKind::code, 7000));
}

TEST(ToolcallGeneration, SameSeedSameTaskAtEveryLength) {
  auto a = kvsweep::probe::make_toolcall_task(7, 5);
  auto b = kvsweep::probe::make_toolcall_task(7, 5);
  EXPECT_EQ(a.tools, b.tools);
  EXPECT_EQ(a.expected_arguments, b.expected_arguments);
  EXPECT_EQ(a.note, b.note);
  auto p1 = kvsweep::probe::build_toolcall_prompt(a, ToolcallMode::json, FillerKind::code, 4000, 7);
  auto p2 = kvsweep::probe::build_toolcall_prompt(a, ToolcallMode::json, FillerKind::code, 16000, 7);
  EXPECT_EQ(p1.system, p2.system);
  EXPECT_GT(p2.user.size(), 3 * p1.user.size());
}

TEST(ToolcallGeneration, ValuesAppearOnceDeepInTheFillerAndNeverInTheQuestion) {
  std::set<std::string> targets;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    auto task = kvsweep::probe::make_toolcall_task(seed, 0);
    targets.insert(task.expected_tool);
    EXPECT_EQ(task.tools.size(), kvsweep::probe::toolcall_catalogue().size());
    EXPECT_GE(task.depth, 0.1);
    EXPECT_LE(task.depth, 0.5);
    for (FillerKind kind : {FillerKind::code, FillerKind::prose, FillerKind::logs}) {
      const std::size_t chars = 2000 + 500 * (seed % 7);
      for (ToolcallMode mode : {ToolcallMode::json, ToolcallMode::native}) {
        auto p = kvsweep::probe::build_toolcall_prompt(task, mode, kind, chars, seed);
        const std::string all = p.system + p.user;
        EXPECT_LE(p.filler_chars, chars);
        EXPECT_GT(p.filler_chars, chars / 2);
        for (auto it = task.expected_arguments.begin(); it != task.expected_arguments.end(); ++it) {
          // Values carrying a seeded word such as 7f2a are unique; enum words (warn) and numbers are not.
          if (!it.value().is_string() || mixed_words(it.value().get<std::string>()).empty()) continue;
          const std::string v = it.value().get<std::string>();
          EXPECT_EQ(count(all, v), 1u) << "seed " << seed << " " << kvsweep::corpus::to_string(kind) << " " << v;
          EXPECT_EQ(count(task.question, v), 0u);
          EXPECT_GE(p.user.find(v), p.note_offset);
        }
        // The note is named by the question and sits in the first half of the filler.
        EXPECT_EQ(count(all, task.note_id), 2u) << seed;
        const double at = static_cast<double>(p.note_offset) / static_cast<double>(p.user.size());
        EXPECT_GT(at, 0.02) << seed;
        EXPECT_LT(at, 0.65) << seed << " " << kvsweep::corpus::to_string(kind);
      }
    }
  }
  // Every task template is reached.
  EXPECT_EQ(targets, (std::set<std::string>{"search_files", "search_file", "grep_repo", "read_file", "get_log_entries",
                                            "list_directory"}));
}

TEST(ToolcallGeneration, ExpectedArgumentsValidateAgainstTheTargetSchema) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    auto task = kvsweep::probe::make_toolcall_task(seed, 3);
    ASSERT_EQ(task.tools.size(), 3u);
    std::set<std::string> names;
    for (const auto& t : task.tools) names.insert(t["name"].get<std::string>());
    EXPECT_EQ(names.size(), 3u);
    EXPECT_TRUE(names.contains(task.expected_tool));
    // The expected call scores 1 everywhere: the generator and the scorer agree.
    json answer = {{"tool", task.expected_tool}, {"arguments", task.expected_arguments}};
    auto s = score_toolcall(parse_json_call(answer.dump()), task.tools, task.expected_tool, task.expected_arguments);
    EXPECT_TRUE(s.all_correct) << seed << " " << answer.dump();
  }
  for (const auto& t : kvsweep::probe::toolcall_catalogue())
    for (const auto& r : t["parameters"]["required"]) EXPECT_TRUE(t["parameters"]["properties"].contains(r)) << t.dump();
}

}  // namespace
