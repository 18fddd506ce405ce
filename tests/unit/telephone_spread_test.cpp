// How much of a telephone cell's spread is sampling: the reference's spread across
// seeds of the same text, beside each cell's mean paired difference; greedy chains have none.

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/report/analysis/telephone_spread.hpp"
#include "kvsweep/report/document/document.hpp"
#include "report_fixture.hpp"

using ::testing::HasSubstr;
using nlohmann::json;

namespace kvsweep::report {
namespace {

/// Two texts × two seeds on f16/f16 and q4_0/f16 of the golden manifest: on f16, text t0 gives 0.9 and
/// 0.7 (variance 0.02), t1 gives 0.5 and 0.5 (variance 0); q4_0 is 0.1 lower on every chain.
RunData run(double temperature) {
  json manifest = json::parse(testing::kManifest);
  manifest["config"]["probes"][1]["temperature"] = temperature;
  std::vector<json> records;
  const std::vector<std::pair<std::string, double>> f16 = {{"t0-s1", 0.9}, {"t0-s2", 0.7}, {"t1-s1", 0.5}, {"t1-s2", 0.5}};
  for (const auto& [item, value] : f16) {
    records.push_back(testing::telephone_record("f16", "f16", item, {0.95, value}));
    records.push_back(testing::telephone_record("q4_0", "f16", item, {0.95, value - 0.1}));
  }
  auto data = RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data) << (data ? "" : data.error().message);
  return std::move(*data);
}

const ProbeDef& telephone(const RunData& data) {
  for (const auto& p : data.probes())
    if (p.kind == "telephone") return p;
  throw std::runtime_error("no telephone probe");
}

/// The section's words on one line (the text renderer wraps them).
std::string spread_text(const RunData& data) {
  Document doc("t");
  telephone_spread_section(doc, data, telephone(data));
  std::string text = render_text(doc);
  for (auto at = text.find('\n'); at != std::string::npos; at = text.find('\n', at)) text.replace(at, 1, " ");
  return text;
}

TEST(TelephoneSpread, TheTextOfAnItemIsItsKeyBeforeTheSeed) {
  EXPECT_EQ(telephone_text_key("t3-s42"), "t3");
  EXPECT_EQ(telephone_text_key("t12-s4294967294"), "t12");
  EXPECT_EQ(telephone_text_key("chain"), "chain");
}

TEST(TelephoneSpread, SamplingIsTheSpreadAcrossSeedsOfOneTextPooledOverTexts) {
  const RunData data = run(0.7);
  const auto spread = telephone_spread(data, telephone(data));
  ASSERT_EQ(spread.size(), 1u);
  const TelephoneSpread& s = spread[0];
  EXPECT_FALSE(s.greedy);
  EXPECT_EQ(s.chains, 4u);
  EXPECT_EQ(s.texts, 2u);
  EXPECT_EQ(s.seeded_texts, 2u);
  // Pooled: (1 × 0.02 + 1 × 0) ÷ 2 = 0.01 → sd 0.1; across all four chains: var of {0.9, 0.7, 0.5, 0.5} = 0.0367.
  EXPECT_NEAR(s.sampling_sd, 0.1, 1e-12);
  EXPECT_NEAR(s.overall_sd, std::sqrt(0.11 / 3.0), 1e-12);
  ASSERT_EQ(s.cells.size(), 1u);
  EXPECT_EQ(data.cells()[s.cells[0].cell].type_k, "q4_0");
  EXPECT_NEAR(s.cells[0].delta, -0.1, 1e-12);
  EXPECT_EQ(s.cells[0].pairs, 4u);

  const std::string text = spread_text(data);
  // ±2 × 0.1 / √4 = ±0.100 from sampling alone; q4_0's −0.100 sits at its edge.
  EXPECT_THAT(text, HasSubstr("chains of the same text spread by sd 0.100 in final_similarity")) << text;
  EXPECT_THAT(text, HasSubstr("moves by about ±0.100 (2 sd/√n)")) << text;
  EXPECT_THAT(text, HasSubstr("q4_0/f16 -0.100 (4 pairs)")) << text;
}

TEST(TelephoneSpread, GreedyChainsHaveNoSamplingSpread) {
  const RunData data = run(0.0);
  const auto spread = telephone_spread(data, telephone(data));
  ASSERT_EQ(spread.size(), 1u);
  EXPECT_TRUE(spread[0].greedy);
  const std::string text = spread_text(data);
  EXPECT_THAT(text, HasSubstr("Sampling: none")) << text;
  EXPECT_THAT(text, HasSubstr("is the texts' own")) << text;
}

}  // namespace
}  // namespace kvsweep::report
