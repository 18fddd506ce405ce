// A probe as the manifest lists it (probe::ProbeEntry): the runner's entry reads back as the same entry
// and writes the same JSON; an older manifest's metrics, named without declarations, read as names for
// the report to infer; a metric of an entry that declares them all and is not a declaration is an error
// naming it.

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/probe/probe_entry.hpp"
#include "kvsweep/probe/complete/complete.hpp"

using ::testing::HasSubstr;
using json = nlohmann::json;
namespace probe = kvsweep::probe;

namespace {

probe::ConfigSource site() { return {{"sweep.json", "probes[0]"}, "."}; }

TEST(ProbeEntry, TheRunnersEntryReadsBackAsItselfAndWritesTheSameJson) {
  for (const json& cfg : {json{{"kind", "complete"}, {"name", "short"}}, json{{"kind", "complete"}, {"max_tokens", 8}}}) {
    const auto made = probe::make_complete_probe(cfg, site());
    const json written = probe::manifest_entry(*made);
    const auto read = probe::ProbeEntry::from_json(written, "manifest.json: probes");
    ASSERT_TRUE(read) << read.error().message;
    ASSERT_TRUE(*read);
    const probe::ProbeEntry& e = **read;
    EXPECT_EQ(e.name, made->name());
    EXPECT_EQ(e.kind, made->kind());
    EXPECT_EQ(e.items, made->items().size());
    EXPECT_EQ(e.deterministic, made->deterministic());
    EXPECT_TRUE(e.declared);
    ASSERT_EQ(e.metrics.size(), made->metrics().size());
    for (std::size_t i = 0; i < e.metrics.size(); ++i) EXPECT_EQ(e.metrics[i].name, made->metrics()[i].name);
    EXPECT_EQ(probe::to_json(e), written) << cfg.dump();
  }
}

TEST(ProbeEntry, AnOlderManifestsNamedMetricsReadAsNamesAndTheKindNamesAnUnnamedProbe) {
  const json older = {{"kind", "telephone"},
                      {"items", 4},
                      {"metrics", {"final_similarity", {{"name", "drift"}, {"higher_is_better", false}}}},
                      {"calibration", {{"metric", "final_similarity"}, {"lo", 0.2}}}};
  const auto read = probe::ProbeEntry::from_json(older, "manifest.json: probes");
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_TRUE(*read);
  const probe::ProbeEntry& e = **read;
  EXPECT_EQ(e.name, "telephone");
  EXPECT_EQ(e.items, 4u);
  EXPECT_FALSE(e.deterministic);
  EXPECT_FALSE(e.declared);
  EXPECT_TRUE(e.metrics.empty());
  EXPECT_EQ(e.named, (std::vector<std::pair<std::string, bool>>{{"final_similarity", true}, {"drift", false}}));
  ASSERT_TRUE(e.calibration);
  EXPECT_EQ(e.calibration->lo, 0.2);
  EXPECT_TRUE(std::isnan(e.calibration->hi));
  // Not an entry: not an object, or naming no probe.
  EXPECT_FALSE(*probe::ProbeEntry::from_json(json::array(), "p"));
  EXPECT_FALSE(*probe::ProbeEntry::from_json(json{{"items", 3}}, "p"));
}

TEST(ProbeEntry, ADeclaredMetricThatIsNotADeclarationIsAnErrorNamingIt) {
  json entry = probe::manifest_entry(*probe::make_complete_probe({{"kind", "complete"}}, site()));
  ASSERT_GE(entry["metrics"].size(), 2u);
  entry["metrics"][1]["direction"] = "sideways";
  const auto read = probe::ProbeEntry::from_json(entry, "manifest.json: probes");
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message, HasSubstr("manifest.json: probes.complete.metrics[1]"));
}

}  // namespace
