// summary.json as one type, written and read by one field list: every golden summary reads back and
// writes the same bytes again, a run directory reads as its summary.json does, and a field of another
// type is an error that names the document and the key path.

#include "kvsweep/report/analysis/summary.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

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
  return nlohmann::json(summary_document(*data, summarize_run(*data), kGenerator));
}

core::Expected<Summary> read(const nlohmann::json& doc, std::string_view which) {
  return Summary::from_json(nlohmann::ordered_json(doc), which);
}

std::string read_error(const nlohmann::json& doc) {
  auto summary = read(doc, "base.json");
  return summary ? "(no error)" : summary.error().message;
}

/// The text read as summary.json and written again as the report writes it.
std::string rewritten(const std::string& text, const std::string& which) {
  auto summary = Summary::from_json(nlohmann::ordered_json::parse(text), which);
  EXPECT_TRUE(summary) << summary.error().message;
  return summary ? to_json(*summary).dump(2) + "\n" : "";
}

TEST(SummaryFields, EveryGoldenSummaryRoundTripsByteForByte) {
  std::vector<std::filesystem::path> golden{std::filesystem::path(KVSWEEP_TEST_DATA) / "report" / "summary.json"};
  for (const auto& host : std::filesystem::directory_iterator(std::filesystem::path(KVSWEEP_TEST_DATA) / "selfgate"))
    for (const char* name : {"summary.json", "copy-summary.json", "smollm2-summary.json"})
      if (std::filesystem::exists(host.path() / name)) golden.push_back(host.path() / name);
  ASSERT_GE(golden.size(), 4u);  // the report's golden run and each host class's self-gate baselines
  for (const auto& path : golden) {
    SCOPED_TRACE(path.string());
    const std::string text = testing::read_text(path);
    EXPECT_EQ(rewritten(text, path.string()), text);
  }
}

TEST(SummaryFields, ARunReadsAsItsSummaryJsonAndWritesTheSameBytes) {
  testing::TempDir dir("summary-fields");
  testing::write_fixture_run(dir.path() / "run");
  auto from_dir = load_summary(dir.path() / "run", kGenerator);
  ASSERT_TRUE(from_dir) << from_dir.error().message;
  const std::string text = to_json(*from_dir).dump(2) + "\n";
  testing::write_text(dir.path() / "summary.json", text);
  auto from_file = load_summary(dir.path() / "summary.json", kGenerator);
  ASSERT_TRUE(from_file) << from_file.error().message;
  EXPECT_EQ(to_json(*from_file).dump(2) + "\n", text);
  // What compare reads of either is the same: the same checks, verdicts and reasons.
  auto a = compare_summaries(*from_dir, *from_file, {});
  auto b = compare_summaries(*from_file, *from_dir, {});
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->checks.size(), b->checks.size());
  for (std::size_t i = 0; i < a->checks.size(); ++i) EXPECT_EQ(a->checks[i].reason, b->checks[i].reason);
}

TEST(SummaryFields, ReadsCellsResultsProbesAndGridsTyped) {
  auto doc = read(fixture_summary(), "summary.json");
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->schema_version, kReportSchemaVersion);
  ASSERT_EQ(doc->cells.size(), 4u);
  EXPECT_EQ(doc->cells[0].id, "tiny-f16-f16");
  EXPECT_TRUE(doc->cells[0].is_reference);
  EXPECT_EQ(doc->cells[2].outcome, "crashed");
  ASSERT_FALSE(doc->results.empty());
  const SummaryResult& r = doc->results.front();
  EXPECT_EQ(r.model, "tiny");
  EXPECT_EQ(r.variant, "");  // a run without variants writes none
  ASSERT_FALSE(r.metrics.empty());
  const SummaryMetric& m = r.metrics.front();
  EXPECT_EQ(r.metric(m.name), &m);
  EXPECT_EQ(r.metric("no_such_metric"), nullptr);
  EXPECT_EQ(m.finite_values().size(), m.n);
  EXPECT_FALSE(doc->probes.empty());
  EXPECT_TRUE(doc->probe(doc->probes.front().name) != nullptr);
  EXPECT_FALSE(doc->grids.empty());
  EXPECT_EQ(doc->run_name, "golden");
}

TEST(SummaryFields, VariantIsReadWhereGivenAndPairsCellsInCompare) {
  nlohmann::json base = fixture_summary();
  nlohmann::json run = base;
  for (auto& r : run["results"]) r["variant"] = "long";
  for (auto& c : run["cells"]) c["variant"] = "long";
  for (auto& g : run["grids"]) g["variant"] = "long";
  for (auto& h : run["headlines"]) h["variant"] = "long";
  auto doc = read(run, "run.json");
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ(doc->results.front().variant, "long");
  EXPECT_EQ(doc->cells.front().variant, "long");
  EXPECT_EQ(doc->grids.front().variant, "long");
  EXPECT_EQ(doc->headlines.front().variant, "long");
  // An absent variant is "": a run of variant "long" shares no cell with a run without variants.
  EXPECT_NE(doc->cells.front().key(), read(base, "base.json")->cells.front().key());
  EXPECT_FALSE(compare_summaries(run, base, {}));
  auto same = compare_summaries(run, run, {});
  ASSERT_TRUE(same) << same.error().message;
  ASSERT_FALSE(same->checks.empty());
  EXPECT_EQ(same->checks.front().variant, "long");
}

TEST(SummaryFields, ErrorsNameTheDocumentAndTheKeyPath) {
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
  doc["results"][0]["metrics"][metric]["mean"] = "x";
  EXPECT_EQ(read_error(doc), "base.json: results[0].metrics." + metric + ".mean: expected a number, got string \"x\"");
  doc = good;
  doc["cells"] = "all";
  EXPECT_EQ(read_error(doc), "base.json: cells: expected an array of objects, got string \"all\"");
  doc = good;
  doc["context"]["run"]["name"] = 3;
  EXPECT_EQ(read_error(doc), "base.json: context.run.name: expected a string, got number 3");
  doc = good;
  doc["grids"][0]["gradient"]["verdict"] = "maybe";
  EXPECT_EQ(read_error(doc), "base.json: grids[0].gradient.verdict: expected yes, no or reversed, got \"maybe\"");
}

TEST(SummaryFields, NullsReadAsNaNAndAreNoValues) {
  nlohmann::json doc = fixture_summary();
  const std::string metric = doc["results"][0]["metrics"].begin().key();
  auto& m = doc["results"][0]["metrics"][metric];
  m["mean"] = nullptr;
  m["ci95"] = {nullptr, 1.0};
  const std::string item = m["values"].begin().key();
  m["values"][item] = nullptr;
  auto summary = read(doc, "s.json");
  ASSERT_TRUE(summary) << summary.error().message;
  const SummaryMetric* got = summary->results[0].metric(metric);
  ASSERT_NE(got, nullptr);
  EXPECT_TRUE(std::isnan(got->mean));
  EXPECT_TRUE(std::isnan(got->ci_lower));
  EXPECT_EQ(got->ci_upper, 1.0);
  EXPECT_FALSE(got->finite_values().contains(item));
  // Written again as null, in its place.
  const auto written = nlohmann::json::parse(to_json(*summary).dump());
  EXPECT_TRUE(written["results"][0]["metrics"][metric]["values"][item].is_null());
}

}  // namespace
}  // namespace kvsweep::report
