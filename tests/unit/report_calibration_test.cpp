// The calibration line: the probe's declared calibration metric on the reference cell.
#include "kvsweep/report/calibration.hpp"

#include <gtest/gtest.h>

#include "report_fixture.hpp"

namespace kvsweep::report {
namespace {

using testing::kManifest;
using testing::make_record;

/// The fixture's manifest with the telephone probe declaring final_similarity in [lo, hi].
RunData with_calibration(double lo, double hi, const std::vector<double>& reference_values) {
  auto manifest = nlohmann::json::parse(kManifest);
  manifest["probes"][1]["calibration"] = {{"metric", "final_similarity"}, {"lo", lo}, {"hi", hi}};
  std::vector<nlohmann::json> records;
  int i = 0;
  for (double v : reference_values) {
    records.push_back(make_record("f16", "f16", "telephone", "c" + std::to_string(i++), "ok",
                                  {{"final_similarity", v}, {"mean_similarity", v}, {"empty_hops", 0}}));
  }
  auto data = RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data) << data.error().message;
  return std::move(*data);
}

std::vector<std::string> lines_for(const RunData& data) {
  return calibration_lines(data, summarize_run(data), data.probes()[1]);
}

TEST(Calibration, FlooredReferenceIsAWarningThatNamesTheProbe) {
  const RunData data = with_calibration(0, 20, {0, 0, 0});
  const auto lines = lines_for(data);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("final_similarity is 0.00 of 0–20 on the reference cell tiny/f16/f16 (3 items)"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("Warning: floored — telephone is at 0.00/20"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("cannot show a difference"), std::string::npos);
}

TEST(Calibration, MidRangeIsPlainAndCeilingIsSaturated) {
  const auto mid = lines_for(with_calibration(0, 1, {0.5, 0.6}));
  ASSERT_EQ(mid.size(), 1u);
  EXPECT_EQ(mid[0].find("Warning"), std::string::npos) << mid[0];
  EXPECT_EQ(mid[0].find("Saturated"), std::string::npos) << mid[0];
  const auto top = lines_for(with_calibration(0, 1, {1.0, 0.99}));
  ASSERT_EQ(top.size(), 1u);
  EXPECT_NE(top[0].find("Saturated"), std::string::npos) << top[0];
}

TEST(Calibration, NoDeclarationNoLineAndNoReferenceItemsSaysSo) {
  auto data = RunData::from(nlohmann::json::parse(kManifest), {});
  ASSERT_TRUE(data);
  EXPECT_TRUE(calibration_lines(*data, summarize_run(*data), data->probes()[1]).empty());
  const auto none = lines_for(with_calibration(0, 1, {}));
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].find("no ok item on the reference cell"), std::string::npos) << none[0];
}

}  // namespace
}  // namespace kvsweep::report
