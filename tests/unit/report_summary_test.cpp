#include "kvsweep/report/analysis/run_summary.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "report_fixture.hpp"

namespace kvsweep::report {
namespace {

RunData fixture() {
  auto d = RunData::from(nlohmann::json::parse(testing::kManifest), testing::fixture_records());
  EXPECT_TRUE(d);
  return std::move(*d);
}

/// A 3 × 3 grid over f16, q8_0, q4_0 with one `complete` probe of `n` items; `score(k, v, item)`
/// gives common_prefix_chars, and match_reference is 1 when the score is at least 100.
template <class Score>
RunData grid_run(int n, Score score) {
  nlohmann::json manifest = nlohmann::json::parse(testing::kManifest);
  manifest["cells"] = nlohmann::json::array();
  const std::vector<std::string> types{"f16", "q8_0", "q4_0"};
  for (const auto& k : types) {
    for (const auto& v : types) {
      manifest["cells"].push_back({{"model", "tiny"}, {"type_k", k}, {"type_v", v}, {"id", "tiny-" + k + "-" + v},
                                   {"is_reference", k == "f16" && v == "f16"}, {"outcome", "ok"}});
    }
  }
  manifest["config"]["grid"] = {{"k", types}, {"v", types}, {"reference", "f16/f16"}};
  manifest["probes"].erase(1);
  std::vector<nlohmann::json> records;
  for (std::size_t ki = 0; ki < types.size(); ++ki) {
    for (std::size_t vi = 0; vi < types.size(); ++vi) {
      for (int i = 0; i < n; ++i) {
        const double s = score(ki, vi, i);
        records.push_back(testing::make_record(types[ki], types[vi], "complete", "p" + std::to_string(i), "ok",
                                               {{"match_reference", s >= 100 ? 1 : 0}, {"common_prefix_chars", s}}));
      }
    }
  }
  auto d = RunData::from(manifest, records);
  EXPECT_TRUE(d);
  return std::move(*d);
}

TEST(Summary, CellStatisticsOfTheFixture) {
  const RunData d = fixture();
  const RunSummary s = summarize_run(d);
  const auto ref = *d.reference("tiny");
  const MetricStats* m = s.find(ref, "complete", "common_prefix_chars");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->summary.n, 4u);
  EXPECT_DOUBLE_EQ(m->summary.mean, 105.0);
  EXPECT_LE(m->ci.lower, 105.0);
  EXPECT_GE(m->ci.upper, 105.0);
  EXPECT_FALSE(m->vs_reference.has_value());  // the reference is not tested against itself

  const auto crashed = *d.find_cell("tiny", "q4_0", "f16");
  const CellProbeStats* r = s.find(crashed, "complete");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->items_ok, 3u);
  EXPECT_EQ(r->failed_items, (std::vector<std::string>{"p10"}));
  // The load_failed cell has no records and so no statistics.
  EXPECT_EQ(s.find(*d.find_cell("tiny", "q4_0", "q4_0"), "complete"), nullptr);
}

TEST(Summary, PairedTestsPickMcNemarForZeroOneAndWilcoxonOtherwise) {
  const RunData d = fixture();
  const RunSummary s = summarize_run(d);
  const auto cell = *d.find_cell("tiny", "f16", "q4_0");
  const MetricStats* pass = s.find(cell, "complete", "match_reference");
  ASSERT_TRUE(pass && pass->vs_reference);
  EXPECT_EQ(pass->vs_reference->test, "mcnemar");
  EXPECT_EQ(pass->vs_reference->b, 1u);  // p3: only the reference matched
  EXPECT_EQ(pass->vs_reference->c, 0u);
  EXPECT_DOUBLE_EQ(pass->vs_reference->p, 1.0);
  EXPECT_DOUBLE_EQ(pass->vs_reference->delta, -0.25);
  const MetricStats* prefix = s.find(cell, "complete", "common_prefix_chars");
  ASSERT_TRUE(prefix && prefix->vs_reference);
  EXPECT_EQ(prefix->vs_reference->test, "wilcoxon");
  EXPECT_EQ(prefix->vs_reference->n_pairs, 4u);
  EXPECT_DOUBLE_EQ(prefix->vs_reference->w_minus, 1.0);  // one non-zero difference, negative
  // Paired on the common items only: the crashed cell's p10 is left out.
  const MetricStats* crashed = s.find(*d.find_cell("tiny", "q4_0", "f16"), "complete", "common_prefix_chars");
  ASSERT_TRUE(crashed && crashed->vs_reference);
  EXPECT_EQ(crashed->vs_reference->n_pairs, 3u);
  EXPECT_DOUBLE_EQ(crashed->vs_reference->delta, (10 - 100 + 0 + 30 - 90) / 3.0);
  // Holm never lowers a p-value.
  EXPECT_GE(crashed->vs_reference->p_holm, crashed->vs_reference->p);
}

TEST(Summary, BootstrapIntervalsAreDeterministic) {
  const RunData d = fixture();
  const RunSummary a = summarize_run(d);
  const RunSummary b = summarize_run(d);
  const auto cell = *d.find_cell("tiny", "f16", "q4_0");
  const MetricStats* ma = a.find(cell, "complete", "common_prefix_chars");
  const MetricStats* mb = b.find(cell, "complete", "common_prefix_chars");
  EXPECT_EQ(ma->ci.lower, mb->ci.lower);
  EXPECT_EQ(ma->ci.upper, mb->ci.upper);
  EXPECT_LT(ma->ci.lower, ma->ci.upper);
  // Another seed resamples differently (the interval is a seeded estimate, not a formula).
  SummaryOptions other;
  other.bootstrap_seed = 7;
  const RunSummary c = summarize_run(d, other);
  const MetricStats* mc = c.find(cell, "complete", "common_prefix_chars");
  EXPECT_TRUE(mc->ci.lower != ma->ci.lower || mc->ci.upper != ma->ci.upper);
}

TEST(Summary, GradientYesOnAMonotonicGrid) {
  // Every item scores 5 × (bits(K) + bits(V)) plus its index: the cell means follow precision exactly.
  const std::vector<double> bits{16, 8.5, 4.5};
  const RunData d = grid_run(6, [&](std::size_t k, std::size_t v, int i) { return (bits[k] + bits[v]) * 5 + i; });
  const RunSummary s = summarize_run(d);
  const GridStats* g = s.grid("tiny", "complete", "common_prefix_chars");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->gradient.n, 9u);
  EXPECT_DOUBLE_EQ(g->gradient.rho, 1.0);
  EXPECT_EQ(g->gradient.verdict, stats::Gradient::yes);
  // K and V matter equally here: equal spreads of the row and column means.
  ASSERT_EQ(g->rows.size(), 3u);
  ASSERT_EQ(g->columns.size(), 3u);
  EXPECT_EQ(g->rows[0].type, "f16");
  EXPECT_DOUBLE_EQ(g->k_spread, g->v_spread);
  EXPECT_DOUBLE_EQ(g->k_spread, (16 - 4.5) * 5);
  EXPECT_LE(g->rows[0].ci.lower, g->rows[0].summary.mean);
  // The headline says so too.
  ASSERT_EQ(s.headlines.size(), 1u);
  EXPECT_EQ(s.headlines[0].gradient, stats::Gradient::yes);
  EXPECT_EQ(s.headlines[0].combos, 9u);
  EXPECT_EQ(s.headlines[0].main_metric, "common_prefix_chars");
  EXPECT_EQ(s.headlines[0].pass_metric, "match_reference");
}

TEST(Summary, NoGradientOnAFlatGrid) {
  const RunData d = grid_run(6, [](std::size_t, std::size_t, int) { return 120.0; });
  const RunSummary s = summarize_run(d);
  const GridStats* g = s.grid("tiny", "complete", "common_prefix_chars");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(std::isnan(g->gradient.rho));
  EXPECT_EQ(g->gradient.verdict, stats::Gradient::no);
  EXPECT_DOUBLE_EQ(g->k_spread, 0.0);
  // Identical cells never differ from the reference.
  for (const auto& r : s.results) {
    for (const auto& m : r.metrics) {
      if (m.vs_reference) {
        EXPECT_FALSE(m.vs_reference->significant);
      }
    }
  }
  EXPECT_DOUBLE_EQ(s.headlines[0].pass_count.mean, 6.0);
  EXPECT_DOUBLE_EQ(s.headlines[0].pass_count.sd, 0.0);
}

TEST(Summary, KOnlyEffectShowsInTheRowMeans) {
  // Only K matters: row spread large, column spread zero. Item i loses i × (K index + 1) less, so
  // the differences from the reference are distinct and the Wilcoxon test is exact.
  const RunData d = grid_run(5, [](std::size_t k, std::size_t, int i) {
    return 150.0 - 40.0 * static_cast<double>(k) + i * static_cast<double>(k + 1);
  });
  const RunSummary s = summarize_run(d);
  const GridStats* g = s.grid("tiny", "complete", "common_prefix_chars");
  ASSERT_NE(g, nullptr);
  EXPECT_DOUBLE_EQ(g->k_spread, 152.0 - 76.0);
  EXPECT_DOUBLE_EQ(g->v_spread, 0.0);
  EXPECT_EQ(g->k_gradient.verdict, stats::Gradient::yes);
  EXPECT_EQ(g->v_gradient.verdict, stats::Gradient::no);
  // A large consistent drop over 5 items: all five differences negative, exact p = 2 / 2^5 = 0.0625,
  // so nothing is significant with n = 5 — and with Holm across 8 cells even less.
  const MetricStats* m = s.find(*d.find_cell("tiny", "q4_0", "q4_0"), "complete", "common_prefix_chars");
  ASSERT_TRUE(m && m->vs_reference);
  EXPECT_DOUBLE_EQ(m->vs_reference->p, 0.0625);
  EXPECT_FALSE(m->vs_reference->significant);
}

TEST(Summary, SignificantWithEnoughItems) {
  const RunData d = grid_run(30, [](std::size_t k, std::size_t, int i) {
    return 150.0 - 40.0 * static_cast<double>(k) + (i % 7);
  });
  const RunSummary s = summarize_run(d);
  const MetricStats* m = s.find(*d.find_cell("tiny", "q4_0", "f16"), "complete", "common_prefix_chars");
  ASSERT_TRUE(m && m->vs_reference);
  EXPECT_TRUE(m->vs_reference->significant);
  EXPECT_DOUBLE_EQ(m->vs_reference->delta, -80.0);
  const MetricStats* same = s.find(*d.find_cell("tiny", "f16", "q4_0"), "complete", "common_prefix_chars");
  EXPECT_FALSE(same->vs_reference->significant);
}

TEST(Summary, MarginalMeansAreMeansOfCellMeansSoFailedItemsDoNotTiltThem) {
  // Row f16: f16/f16 holds 5 items of 100, f16/q8_0 only 1 of its 5 (the others failed) scoring 0.
  // Pooled items would give (500 + 0) / 6 = 83.3; the mean of the two cell means is 50.
  auto records = std::vector<nlohmann::json>{};
  const RunData full = grid_run(5, [](std::size_t k, std::size_t v, int) { return k == 0 && v == 1 ? 0.0 : 100.0; });
  for (const auto& record : full.records()) {
    const nlohmann::json r = probe::to_json(record);
    const bool lost = r["cell"]["type_k"] == "f16" && r["cell"]["type_v"] == "q8_0" && r["item"] != "p0";
    records.push_back(lost ? testing::make_record("f16", "q8_0", "complete", r["item"], "timeout", nlohmann::json::object())
                           : r);
  }
  auto d = RunData::from(full.manifest(), records);
  ASSERT_TRUE(d);
  const RunSummary s = summarize_run(*d);
  const GridStats* g = s.grid("tiny", "complete", "common_prefix_chars");
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->rows.front().type, "f16");
  EXPECT_DOUBLE_EQ(g->rows.front().summary.mean, 200.0 / 3.0);  // (100 + 0 + 100) / 3 cells
  EXPECT_EQ(g->rows.front().summary.n, 3u);                     // n counts cells
  ASSERT_EQ(g->columns[1].type, "q8_0");
  EXPECT_DOUBLE_EQ(g->columns[1].summary.mean, 200.0 / 3.0);  // f16/q8_0 (1 item, 0) weighs as much as the others
}

TEST(Summary, TheDeclaredKindPicksTheTestAndDiagnosticsGetNoGradient) {
  // rms_dp-like: a continuous metric whose values happen to be 0 or 1 is still tested with Wilcoxon;
  // a diagnostic (direction none) gets no gradient verdict and is not the main metric.
  nlohmann::json manifest = grid_run(1, [](std::size_t, std::size_t, int) { return 0.0; }).manifest();
  manifest["probes"][0]["deterministic"] = true;
  manifest["probes"][0]["metrics"] = {
      probe::to_json(probe::quality("match_reference", probe::Direction::higher_better, probe::MetricKind::binary)),
      probe::to_json(probe::quality("common_prefix_chars", probe::Direction::lower_better, probe::MetricKind::continuous)),
      probe::to_json(probe::diagnostic("predicted_n", probe::MetricKind::count))};
  std::vector<nlohmann::json> records;
  for (const char* k : {"f16", "q8_0", "q4_0"}) {
    for (const char* v : {"f16", "q8_0", "q4_0"}) {
      for (int i = 0; i < 6; ++i) {
        const bool worse = std::string(k) == "q4_0";
        records.push_back(testing::make_record(k, v, "complete", "p" + std::to_string(i), "ok",
                                               {{"match_reference", worse ? 0 : 1},
                                                {"common_prefix_chars", worse ? 1 : 0},
                                                {"predicted_n", worse ? 10 : 32}}));
      }
    }
  }
  auto d = RunData::from(manifest, records);
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->probes()[0].declared);
  const RunSummary s = summarize_run(*d);
  const auto cell = *d->find_cell("tiny", "q4_0", "f16");
  EXPECT_EQ(s.find(cell, "complete", "match_reference")->vs_reference->test, "mcnemar");
  EXPECT_EQ(s.find(cell, "complete", "common_prefix_chars")->vs_reference->test, "wilcoxon");
  EXPECT_EQ(s.roles_of("complete")->main_metric, "common_prefix_chars");
  const GridStats* diag = s.grid("tiny", "complete", "predicted_n");
  ASSERT_NE(diag, nullptr);
  EXPECT_FALSE(diag->quality);
  EXPECT_EQ(diag->gradient.n, 0u);  // not computed
  EXPECT_EQ(s.grid("tiny", "complete", "match_reference")->gradient.n, 9u);  // a quality metric is correlated over the 9 cells
}

}  // namespace
}  // namespace kvsweep::report
