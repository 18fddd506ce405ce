// summary.json read back once, typed, for compare and the published comparison: every field they
// read, the optional variant, and errors that name the document and the key path.

#include "kvsweep/report/input/summary_document.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kvsweep/report/analysis/compare.hpp"
#include "kvsweep/report/output/summary_json.hpp"
#include "report_fixture.hpp"

using ::testing::HasSubstr;

namespace kvsweep::report {
namespace {

const Generator kGenerator{"0.0.0-test", "0000000test"};

nlohmann::json fixture_summary() {
  auto data = RunData::from(nlohmann::json::parse(testing::kManifest), testing::fixture_records());
  EXPECT_TRUE(data);
  return nlohmann::json::parse(summary_document(*data, summarize_run(*data), kGenerator).dump());
}

std::string read_error(const nlohmann::json& doc) {
  auto read = read_summary_document(doc, "base.json");
  return read ? "(no error)" : read.error().message;
}

TEST(SummaryDocument, ReadsCellsResultsProbesAndGridsTyped) {
  auto doc = read_summary_document(fixture_summary(), "summary.json");
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->schema_version, kReportSchemaVersion);
  ASSERT_EQ(doc->cells.size(), 4u);
  EXPECT_EQ(doc->cells[0].id, "tiny-f16-f16");
  EXPECT_EQ(doc->cells[2].outcome, "crashed");
  ASSERT_FALSE(doc->results.empty());
  const SummaryResult& r = doc->results.front();
  EXPECT_EQ(r.model, "tiny");
  EXPECT_EQ(r.variant, "");  // a run without variants writes none
  ASSERT_FALSE(r.metrics.empty());
  const SummaryMetric& m = r.metrics.front();
  EXPECT_EQ(r.metric(m.name), &m);
  EXPECT_EQ(r.metric("no_such_metric"), nullptr);
  EXPECT_EQ(m.values.size(), m.n);
  EXPECT_FALSE(doc->probes.empty());
  EXPECT_TRUE(doc->probe(doc->probes.front().name) != nullptr);
  EXPECT_FALSE(doc->grids.empty());
}

TEST(SummaryDocument, VariantIsReadWhereGivenAndPairsCellsInCompare) {
  nlohmann::json base = fixture_summary();
  nlohmann::json run = base;
  for (auto& r : run["results"]) r["variant"] = "long";
  for (auto& c : run["cells"]) c["variant"] = "long";
  for (auto& g : run["grids"]) g["variant"] = "long";
  for (auto& h : run["headlines"]) h["variant"] = "long";
  auto doc = read_summary_document(run, "run.json");
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->results.front().variant, "long");
  EXPECT_EQ(doc->cells.front().variant, "long");
  EXPECT_EQ(doc->grids.front().variant, "long");
  EXPECT_EQ(doc->headlines.front().variant, "long");
  // An absent variant is "": a run of variant "long" shares no cell with a run without variants.
  EXPECT_NE(doc->cells.front().key(), read_summary_document(base, "base.json")->cells.front().key());
  EXPECT_FALSE(compare_summaries(run, base, {}));
  auto same = compare_summaries(run, run, {});
  ASSERT_TRUE(same) << same.error().message;
  ASSERT_FALSE(same->checks.empty());
  EXPECT_EQ(same->checks.front().variant, "long");
}

TEST(SummaryDocument, ErrorsNameTheDocumentAndTheKeyPath) {
  const nlohmann::json good = fixture_summary();
  EXPECT_EQ(read_error(nlohmann::json::array()), "base.json: not a kvsweep summary (no \"results\" array)");
  nlohmann::json doc = good;
  doc["kind"] = "kvsweep-published";
  EXPECT_EQ(read_error(doc), "base.json: kind: not a kvsweep summary (expected \"kvsweep-summary\")");
  doc = good;
  doc["schema_version"] = kReportSchemaVersion + 1;
  EXPECT_THAT(read_error(doc), HasSubstr("base.json: schema_version: unsupported"));
  doc = good;
  doc["results"][1]["model"] = 3;
  EXPECT_EQ(read_error(doc), "base.json: results[1].model: expected a string, got number 3");
  doc = good;
  const std::string metric = good["results"][0]["metrics"].begin().key();
  doc["results"][0]["metrics"][metric]["values"]["item-x"] = "0.5";
  EXPECT_EQ(read_error(doc), "base.json: results[0].metrics." + metric + ".values.item-x: expected a number, got string \"0.5\"");
  doc = good;
  doc["cells"] = "all";
  EXPECT_EQ(read_error(doc), "base.json: cells: expected an array of objects, got string \"all\"");
}

TEST(SummaryDocument, NullsReadAsNaNAndAreNoValues) {
  nlohmann::json doc = fixture_summary();
  const std::string metric = doc["results"][0]["metrics"].begin().key();
  auto& m = doc["results"][0]["metrics"][metric];
  m["mean"] = nullptr;
  m["ci95"] = {nullptr, 1.0};
  const std::string item = m["values"].begin().key();
  m["values"][item] = nullptr;
  auto read = read_summary_document(doc, "s.json");
  ASSERT_TRUE(read) << read.error().message;
  const SummaryMetric* got = read->results[0].metric(metric);
  ASSERT_NE(got, nullptr);
  EXPECT_TRUE(std::isnan(got->mean));
  EXPECT_TRUE(std::isnan(got->ci_lower));
  EXPECT_EQ(got->ci_upper, 1.0);
  EXPECT_FALSE(got->values.contains(item));
}

}  // namespace
}  // namespace kvsweep::report
