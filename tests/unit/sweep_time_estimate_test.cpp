// The dry run's time estimate: a previous run's rates from its manifest and records, the
// plan's seconds from them (hand-worked), the run chosen among several, and the line that says it.

#include <filesystem>
#include <fstream>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/report/analysis/plan_time.hpp"
#include "kvsweep/sweep/estimate/previous_run.hpp"
#include "kvsweep/sweep/estimate/time_estimate.hpp"
#include "temp_file.hpp"

namespace {

using namespace kvsweep;
using nlohmann::json;

json cell(const std::string& model, double ready_s, double stop_s) {
  return {{"model", model}, {"type_k", "f16"}, {"type_v", "f16"}, {"ready_s", ready_s}, {"stop_s", stop_s}};
}

json record(const std::string& model, const std::string& probe, const std::string& status, double wall_s) {
  return {{"cell", {{"model", model}, {"type_k", "f16"}, {"type_v", "f16"}}},
          {"probe", probe},
          {"status", status},
          {"wall_s", wall_s}};
}

json manifest_of(const std::string& path, std::uintmax_t size, const std::string& status, const std::string& finished) {
  return {{"status", status},
          {"finished_at", finished},
          {"config_hash", "abc"},
          {"models", {{{"name", "m"}, {"path", path}, {"size", size}}}},
          {"cells", {cell("m", 4.0, 1.0)}}};
}

void write_run(const std::filesystem::path& dir, const json& manifest, const std::vector<json>& records) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "manifest.json") << manifest.dump();
  std::ofstream out(dir / "records.jsonl");
  for (const auto& r : records) out << r.dump() << "\n";
}

}  // namespace

TEST(TimeEstimate, RatesCountOkItemsAndStartedCellsOfTheModelOnly) {
  const json manifest = {{"config_hash", "abc"},
                         {"cells",
                          {cell("m", 5.0, 1.0), cell("m", 3.0, 1.0),
                           cell("m", 0.0, 0.0),  // skipped: every item recorded, no server
                           cell("other", 50.0, 1.0)}}};
  const std::vector<json> records = {record("m", "recall", "ok", 2.0),      record("m", "recall", "ok", 4.0),
                                     record("m", "recall", "timeout", 60.0), record("m", "complete", "ok", 0.5),
                                     record("m", "recall", "skipped", 0.0),  record("other", "recall", "ok", 100.0)};
  const auto rates = sweep::rates_from_run("run-1", manifest, records, "m");
  EXPECT_EQ(rates.run, "run-1");
  EXPECT_EQ(rates.config_hash, "abc");
  EXPECT_EQ(rates.cells, 2u);
  EXPECT_DOUBLE_EQ(rates.server_s, 5.0);  // ((5 + 1) + (3 + 1)) / 2
  ASSERT_EQ(rates.item_s.size(), 2u);
  EXPECT_DOUBLE_EQ(rates.item_s.at("recall"), 3.0);  // (2 + 4) / 2: the timeout and the skip are not rates
  EXPECT_DOUBLE_EQ(rates.item_s.at("complete"), 0.5);
}

TEST(TimeEstimate, ANegativeDurationInAPreviousRunIsNoRateAndNoEstimateIsNegative) {
  const json manifest = {{"config_hash", "abc"},
                         {"cells", {cell("m", 5.0, 1.0), cell("m", 3.0, -100.0), cell("m", -2.0, 1.0)}}};
  const std::vector<json> records = {record("m", "recall", "ok", 2.0), record("m", "recall", "ok", -500.0)};
  const auto rates = sweep::rates_from_run("run-1", manifest, records, "m");
  EXPECT_EQ(rates.cells, 1u);  // only the cell whose durations are durations
  EXPECT_DOUBLE_EQ(rates.server_s, 6.0);
  EXPECT_DOUBLE_EQ(rates.item_s.at("recall"), 2.0);
  const std::vector<sweep::PlannedProbe> planned = {{"recall", 10}};
  EXPECT_GE(sweep::estimate_time(rates, 3, planned).seconds, 0.0);
}

TEST(TimeEstimate, SecondsAreCellsTimesServerAndItemsWithTheBusiestSlot) {
  sweep::RunRates rates;
  rates.server_s = 6.0;
  rates.item_s = {{"recall", 2.0}, {"complete", 0.5}};
  const std::vector<sweep::PlannedProbe> probes = {{"recall", 10}, {"complete", 4}, {"toolcall", 3}};
  // A cell: 6 + 10 × 2 + 4 × 0.5 = 28 s; toolcall has no rate and counts nothing.
  const auto one = sweep::estimate_time(rates, 9, probes);
  EXPECT_DOUBLE_EQ(one.seconds, 9 * 28.0);
  EXPECT_EQ(one.unrated, std::vector<std::string>{"toolcall"});
  // 9 cells on 2 slots: the busier slot runs 5 of them.
  EXPECT_DOUBLE_EQ(sweep::estimate_time(rates, 9, probes, 2).seconds, 5 * 28.0);
  EXPECT_DOUBLE_EQ(sweep::estimate_time(rates, 0, probes).seconds, 0.0);
}

TEST(TimeEstimate, TheModelIsFoundByPathAndARecordedSizeMustAgree) {
  const json manifest = {{"models", {{{"name", "a"}, {"path", "/m/a.gguf"}, {"size", 100}},
                                     {{"name", "b"}, {"path", "/m/b.gguf"}}}}};
  EXPECT_EQ(sweep::model_name_in(manifest, "/m/a.gguf", 100), "a");
  EXPECT_EQ(sweep::model_name_in(manifest, "/m/a.gguf", 101), "");  // another file at the same path
  EXPECT_EQ(sweep::model_name_in(manifest, "/m/a.gguf", std::nullopt), "a");
  EXPECT_EQ(sweep::model_name_in(manifest, "/m/b.gguf", 7), "b");  // no size recorded (not a llama-server run)
  EXPECT_EQ(sweep::model_name_in(manifest, "/m/c.gguf", 100), "");
  EXPECT_EQ(sweep::model_name_in(json::array(), "/m/a.gguf", 100), "");
}

TEST(TimeEstimate, ThePreviousRunIsTheCompleteOneOfTheModelThatFinishedLast) {
  const auto runs = kvsweep::testing::temp_file("-runs");
  std::filesystem::remove_all(runs);
  const auto model = runs / "model.gguf";
  std::filesystem::create_directories(runs);
  std::ofstream(model) << "12345678";  // 8 bytes
  EXPECT_FALSE(sweep::previous_rates(runs, model.string()));
  const std::string path = model.string();
  write_run(runs / "old", manifest_of(path, 8, "complete", "2026-11-20T10:00:00Z"), {record("m", "recall", "ok", 1.0)});
  write_run(runs / "new", manifest_of(path, 8, "complete", "2026-11-25T05:12:00Z"), {record("m", "recall", "ok", 2.0)});
  write_run(runs / "going", manifest_of(path, 8, "running", "2026-11-26T00:00:00Z"), {record("m", "recall", "ok", 9.0)});
  write_run(runs / "resized", manifest_of(path, 9, "complete", "2026-11-27T00:00:00Z"), {record("m", "recall", "ok", 9.0)});
  const auto rates = sweep::previous_rates(runs, path);
  ASSERT_TRUE(rates);
  EXPECT_EQ(rates->run, "new");
  EXPECT_DOUBLE_EQ(rates->item_s.at("recall"), 2.0);
  EXPECT_DOUBLE_EQ(rates->server_s, 5.0);
  EXPECT_FALSE(sweep::previous_rates(runs / "absent", path));
  std::filesystem::remove_all(runs);
}

TEST(TimeEstimate, TheLineNamesTheRunTheRatesAndWhatItLeftOut) {
  sweep::RunRates rates;
  rates.run = "it-20261125T051200Z";
  rates.server_s = 6.0;
  rates.item_s = {{"recall", 2.1}, {"complete", 0.043}};
  const std::vector<sweep::PlannedProbe> probes = {{"recall", 10}, {"complete", 4}, {"toolcall", 3}};
  const sweep::TimeEstimate estimate{250.0, {"toolcall"}};
  EXPECT_EQ(report::time_line(estimate, rates, probes, {}),
            "time: ~4m10s (from run it-20261125T051200Z: 2.1 s/item for recall, 0.043 s/item for complete, 6.0 s to "
            "start and stop a server); not counted, no rate in that run: toolcall");
  EXPECT_EQ(report::time_line({7500.0, {}}, rates, std::vector<sweep::PlannedProbe>{{"recall", 1}}, {false, true, 2}),
            "time: at most ~2h05m (from run it-20261125T051200Z, another config: 2.1 s/item for recall, 6.0 s to start "
            "and stop a server; 2 cells at once)");
}
