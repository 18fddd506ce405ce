#include "kvsweep/report/input/run_data.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "report_fixture.hpp"

namespace kvsweep::report {
namespace {

using testing::TempDir;

RunData load_fixture(const TempDir& dir) {
  testing::write_fixture_run(dir.path());
  auto data = RunData::load(dir.path());
  EXPECT_TRUE(data.has_value()) << (data ? "" : data.error().message);
  return std::move(*data);
}

TEST(RunData, ReadsProbesCellsAndAxes) {
  TempDir dir("rundata");
  const RunData d = load_fixture(dir);
  EXPECT_EQ(d.name(), "golden");
  ASSERT_EQ(d.probes().size(), 2u);
  EXPECT_EQ(d.probes()[0].name, "complete");
  EXPECT_TRUE(d.probes()[0].deterministic);    // greedy kind
  EXPECT_FALSE(d.probes()[1].deterministic);   // telephone samples at 0.7 by default
  EXPECT_FALSE(d.probes()[1].metrics[2].higher_is_better());  // empty_hops
  EXPECT_EQ(d.probes()[1].config.value("threshold", 0.0), 0.8);
  ASSERT_EQ(d.cells().size(), 4u);
  EXPECT_EQ(d.k_types(), (std::vector<std::string>{"f16", "q4_0"}));
  EXPECT_EQ(d.v_types(), (std::vector<std::string>{"f16", "q4_0"}));
  EXPECT_EQ(d.models(), (std::vector<std::string>{"tiny"}));
  ASSERT_TRUE(d.reference("tiny").has_value());
  EXPECT_EQ(d.cells()[*d.reference("tiny")].id, "tiny-f16-f16");
  EXPECT_EQ(d.cells()[3].outcome, "load_failed");
}

TEST(RunData, GreedyProbeKindsAreDeterministicUnlessTheConfigSaysOtherwise) {
  TempDir dir("rundata-det");
  nlohmann::json m = nlohmann::json::parse(testing::kManifest);
  for (const char* kind : {"toolcall", "recall", "divergence", "kld"}) {
    m["probes"].push_back({{"name", kind}, {"kind", kind}, {"items", 1}, {"metrics", nlohmann::json::array()}});
    m["config"]["probes"].push_back({{"kind", kind}});
  }
  m["probes"].push_back({{"name", "hot"}, {"kind", "complete"}, {"items", 1}, {"metrics", nlohmann::json::array()}});
  m["config"]["probes"].push_back({{"kind", "complete"}, {"name", "hot"}, {"temperature", 0.9}});
  testing::write_run(dir.path(), m, {});
  auto d = RunData::load(dir.path());
  ASSERT_TRUE(d.has_value()) << d.error().message;
  ASSERT_EQ(d->probes().size(), 7u);
  for (std::size_t i = 2; i < 6; ++i) EXPECT_TRUE(d->probes()[i].deterministic) << d->probes()[i].kind;
  EXPECT_FALSE(d->probes()[6].deterministic);  // sampled at 0.9
}

TEST(RunData, LastOkRecordCountsAndATripleWithoutOkIsFailed) {
  TempDir dir("rundata-ok");
  const RunData d = load_fixture(dir);
  const auto cell = d.find_cell("tiny", "f16", "q4_0");
  ASSERT_TRUE(cell);
  const auto& items = d.items(*cell, "complete");
  ASSERT_EQ(items.size(), 4u);
  // Natural order: p10 after p3.
  EXPECT_EQ(items[2].item, "p3");
  EXPECT_EQ(items[3].item, "p10");
  EXPECT_TRUE(items[2].ok);
  EXPECT_EQ(items[2].attempts, 2u);
  EXPECT_EQ(items[2].metrics.at("common_prefix_chars"), 40.0);
  // The timeout record (index 6) does not count; the retry (index 7) does.
  EXPECT_FALSE(d.counts(6));
  EXPECT_TRUE(d.counts(7));

  const auto crashed = d.find_cell("tiny", "q4_0", "f16");
  const auto& c_items = d.items(*crashed, "complete");
  ASSERT_EQ(c_items.size(), 4u);
  EXPECT_FALSE(c_items[3].ok);
  EXPECT_EQ(c_items[3].status, "crashed");
  EXPECT_EQ(c_items[3].error, "server died");
  const Values v = d.values(*crashed, "complete", "match_reference");
  EXPECT_EQ(v.items, (std::vector<std::string>{"p1", "p2", "p3"}));
  EXPECT_EQ(v.values, (std::vector<double>{0, 1, 0}));
}

TEST(RunData, ALaterOkRecordIsNotReplacedByALaterFailure) {
  auto records = testing::fixture_records();
  records.push_back(testing::make_record("f16", "f16", "complete", "p1", "timeout", nlohmann::json::object()));
  auto d = RunData::from(nlohmann::json::parse(testing::kManifest), records);
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->items(0, "complete")[0].ok);
  EXPECT_FALSE(d->counts(records.size() - 1));
}

TEST(RunData, FallsBackToConfigReferenceAndRecordsWithoutManifestEntries) {
  nlohmann::json manifest = nlohmann::json::parse(testing::kManifest);
  for (auto& c : manifest["cells"]) c.erase("is_reference");
  manifest.erase("probes");
  // A cell of the config's grid the manifest does not list (a crash before its outcome was written).
  manifest["cells"].erase(manifest["cells"].size() - 1);
  auto records = testing::fixture_records();
  records.push_back(testing::make_record("q4_0", "q4_0", "complete", "p1", "ok", testing::complete_metrics(1, 100)));
  auto d = RunData::from(manifest, records);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->cells()[*d->reference("tiny")].id, "tiny-f16-f16");
  ASSERT_EQ(d->cells().size(), 4u);
  EXPECT_EQ(d->cells()[3].id, "tiny-q4_0-q4_0");
  EXPECT_EQ(d->cells()[3].outcome, "unknown");
  EXPECT_TRUE(d->outside_grid().empty());
  EXPECT_EQ(d->k_types(), (std::vector<std::string>{"f16", "q4_0"}));
  // Probes and metrics learnt from the records.
  ASSERT_NE(d->probe("complete"), nullptr);
  EXPECT_EQ(d->probe("complete")->metrics.size(), 2u);
}

TEST(RunData, GridOrderFollowsTheConfigNotTheManifest) {
  nlohmann::json manifest = nlohmann::json::parse(testing::kManifest);
  std::reverse(manifest["cells"].begin(), manifest["cells"].end());
  auto d = RunData::from(manifest, testing::fixture_records());
  ASSERT_TRUE(d);
  std::vector<std::string> ids;
  for (auto i : d->grid_order()) ids.push_back(d->cells()[i].id);
  EXPECT_EQ(ids, (std::vector<std::string>{"tiny-f16-f16", "tiny-f16-q4_0", "tiny-q4_0-f16", "tiny-q4_0-q4_0"}));
}

TEST(RunData, MissingRunDirectoryIsAnError) {
  auto d = RunData::load("/nonexistent/kvsweep-run");
  ASSERT_FALSE(d);
}

}  // namespace
}  // namespace kvsweep::report
