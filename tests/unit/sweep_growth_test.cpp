// sweep::compare_for_growth: what a resumed config may add to a run's,
// and each change that is not growth named with its path.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/sweep/store/growth.hpp"

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using nlohmann::json;
using kvsweep::sweep::compare_for_growth;

namespace {

/// A config in the manifest's form, as config::to_json writes it.
json recorded() {
  return {{"name", "it"},
          {"server", {{"backend", "llama-server"}, {"args", {"-fa", "on"}}, {"ctx", 2048}, {"env", json::object()}}},
          {"models", {{{"name", "tiny"}, {"path", "/m/tiny.gguf"}}}},
          {"grid",
           {{"k", {"f16", "q8_0"}}, {"v", {"f16"}}, {"tied", false}, {"include", json::array()},
            {"exclude", {"q8_0/f16"}}, {"reference", "f16/f16"}, {"order", "as-listed"}, {"seed", 7}}},
          {"probes",
           {{{"kind", "complete"}, {"prompts", {"a", "b"}}, {"max_tokens", 16}},
            {{"kind", "recall"}, {"name", "code"}, {"k", 4}, {"lines", 10}}}},
          {"output_dir", "runs"}};
}

std::string all(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace

TEST(Growth, TheSameConfigAddsAndChangesNothingWhereverItsRunsGo) {
  json now = recorded();
  now["output_dir"] = "elsewhere";
  now["sweep"] = {{"parallel_cells", 2}};
  const auto g = compare_for_growth(recorded(), now);
  EXPECT_THAT(g.added, IsEmpty());
  EXPECT_THAT(g.changed, IsEmpty());
}

TEST(Growth, MoreItemsCellsModelsAndProbesAreGrowth) {
  json now = recorded();
  now["probes"][0]["prompts"].push_back("c");
  now["probes"][1]["sample_size"] = 6;  // recall's "k" by its newer name, raised
  now["probes"][1].erase("k");
  now["probes"].push_back({{"kind", "speed"}, {"depths", {0}}});
  now["grid"]["k"].push_back("q4_0");
  now["grid"]["exclude"] = json::array();
  now["models"].push_back({{"name", "other"}, {"path", "/m/other.gguf"}});
  const auto g = compare_for_growth(recorded(), now);
  EXPECT_THAT(g.changed, IsEmpty()) << all(g.changed);
  const std::string added = all(g.added);
  EXPECT_THAT(added, HasSubstr("probes[complete].prompts: 1 more (2 → 3)"));
  EXPECT_THAT(added, HasSubstr("probes[code].sample_size: 4 → 6"));
  EXPECT_THAT(added, HasSubstr("probes[speed]: new (speed)"));
  EXPECT_THAT(added, HasSubstr("grid.k: 1 more"));
  EXPECT_THAT(added, HasSubstr("grid.exclude: 1 fewer left out"));
  EXPECT_THAT(added, HasSubstr("models[other]: new"));
}

TEST(Growth, WhatChangesAnAnswerIsNamedWithItsPathAndBothValues) {
  json now = recorded();
  now["probes"][0]["max_tokens"] = 32;
  now["server"]["args"] = {"-fa", "off"};
  now["models"][0]["path"] = "/m/tiny2.gguf";
  const auto g = compare_for_growth(recorded(), now);
  EXPECT_THAT(g.changed, ElementsAre("models[tiny].path: \"/m/tiny.gguf\" → \"/m/tiny2.gguf\"",
                                     "probes[complete].max_tokens: 16 → 32", "server.args: [\"-fa\",\"on\"] → [\"-fa\",\"off\"]"));
}

TEST(Growth, FewerItemsOrCellsOrAnotherReferenceAreNotGrowth) {
  json now = recorded();
  now["probes"][0]["prompts"] = {"a", "c"};
  now["probes"][1]["k"] = 3;
  now["grid"]["k"] = {"f16"};
  now["grid"]["exclude"] = {"q8_0/f16", "f16/f16"};
  now["grid"]["reference"] = "q8_0/q8_0";
  now["probes"].erase(1);
  const auto g = compare_for_growth(recorded(), now);
  const std::string changed = all(g.changed);
  EXPECT_THAT(changed, HasSubstr("probes[complete].prompts: no longer lists \"b\""));
  EXPECT_THAT(changed, HasSubstr("probes[code]: removed"));
  EXPECT_THAT(changed, HasSubstr("grid.k: no longer lists \"q8_0\""));
  EXPECT_THAT(changed, HasSubstr("grid.exclude: now leaves out \"f16/f16\""));
  EXPECT_THAT(changed, HasSubstr("grid.reference: \"f16/f16\" → \"q8_0/q8_0\""));
}

TEST(Growth, ACountThatFallsOrAProbeOfAnotherKindIsAChange) {
  json fewer = recorded();
  fewer["probes"][1]["k"] = 3;
  EXPECT_THAT(compare_for_growth(recorded(), fewer).changed, ElementsAre("probes[code].sample_size: 4 → 3"));
  json other = recorded();
  other["probes"][1]["kind"] = "divergence";
  EXPECT_THAT(compare_for_growth(recorded(), other).changed,
              ElementsAre("probes[code].kind: \"recall\" → \"divergence\""));
}
