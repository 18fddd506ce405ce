#include "kvsweep/report/analysis/compare.hpp"
#include "kvsweep/report/output/compare_writers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/report/output/summary_json.hpp"
#include "report_fixture.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kvsweep::report {
namespace {

const Generator kGenerator{"0.0.0-test", "0000000test"};

nlohmann::json summary_of(std::vector<nlohmann::json> records, nlohmann::json manifest = nlohmann::json::parse(testing::kManifest)) {
  auto data = RunData::from(std::move(manifest), std::move(records));
  EXPECT_TRUE(data);
  return nlohmann::json::parse(summary_document(*data, summarize_run(*data), kGenerator).dump());
}

/// The fixture with `metric` of `probe` in cell K/V multiplied by `factor`.
std::vector<nlohmann::json> doctored(const std::string& k, const std::string& v, const std::string& probe,
                                     const std::string& metric, double factor) {
  auto records = testing::fixture_records();
  for (auto& r : records) {
    if (r["cell"]["type_k"] == k && r["cell"]["type_v"] == v && r["probe"] == probe && r["metrics"].contains(metric)) {
      r["metrics"][metric] = r["metrics"][metric].get<double>() * factor;
    }
  }
  return records;
}

const Check* find_check(const Comparison& c, const std::string& cell, const std::string& metric) {
  for (const auto& check : c.checks) {
    if (check.cell == cell && check.metric == metric) return &check;
  }
  return nullptr;
}

TEST(Compare, IdenticalRunsNeverRegress) {
  const auto base = summary_of(testing::fixture_records());
  auto cmp = compare_summaries(base, base, {});
  ASSERT_TRUE(cmp) << cmp.error().message;
  // 3 cells with complete (2 metrics) and telephone (3 metrics).
  EXPECT_EQ(cmp->checks.size(), 15u);
  EXPECT_EQ(cmp->count(Verdict::regression), 0u);
  EXPECT_EQ(cmp->count(Verdict::improved), 0u);
  EXPECT_EQ(exit_status(*cmp), 0);
}

TEST(Compare, DoctoredTwentyPercentDropOnADeterministicProbeRegresses) {
  const auto base = summary_of(testing::fixture_records());
  const auto cur = summary_of(doctored("f16", "q4_0", "complete", "common_prefix_chars", 0.8));
  auto cmp = compare_summaries(cur, base, {});
  ASSERT_TRUE(cmp);
  const Check* c = find_check(*cmp, "tiny-f16-q4_0", "common_prefix_chars");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::regression);
  EXPECT_TRUE(c->deterministic);
  EXPECT_TRUE(c->identical_items);
  EXPECT_DOUBLE_EQ(c->delta, -0.2 * 92.5);
  EXPECT_EQ(cmp->count(Verdict::regression), 1u);
  EXPECT_EQ(exit_status(*cmp), 1);
  const std::string table = write_compare_table(*cmp);
  EXPECT_THAT(table, HasSubstr("REGRESSION tiny-f16-q4_0 complete/common_prefix_chars"));
}

TEST(Compare, ADeterministicChangeAcrossHostsIsInconclusiveNotARegression) {
  // Another CPU class rounds differently and moves near-tied greedy tokens: the same drop that regresses on
  // one host is, across hosts, inconclusive — reported, failing only with fail_inconclusive.
  const auto base = summary_of(testing::fixture_records());
  const auto cur = summary_of(doctored("f16", "q4_0", "complete", "common_prefix_chars", 0.8));
  CompareOptions options;
  options.host_changed = true;
  auto cmp = compare_summaries(cur, base, options);
  ASSERT_TRUE(cmp);
  const Check* c = find_check(*cmp, "tiny-f16-q4_0", "common_prefix_chars");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::inconclusive);
  EXPECT_EQ(c->why, ReasonCode::host_changed);
  EXPECT_THAT(explain(*c, *cmp), HasSubstr("computed on another host"));
  EXPECT_EQ(cmp->count(Verdict::regression), 0u);
  EXPECT_EQ(exit_status(*cmp), 0);
  options.fail_inconclusive = true;
  auto strict = compare_summaries(cur, base, options);
  ASSERT_TRUE(strict);
  EXPECT_EQ(exit_status(*strict), 1);
}

TEST(Compare, ChangeWithinToleranceIsNotARegression) {
  const auto base = summary_of(testing::fixture_records());
  const auto cur = summary_of(doctored("f16", "q4_0", "complete", "common_prefix_chars", 0.97));
  auto cmp = compare_summaries(cur, base, {});
  ASSERT_TRUE(cmp);
  EXPECT_EQ(find_check(*cmp, "tiny-f16-q4_0", "common_prefix_chars")->verdict, Verdict::ok);
  // A tighter tolerance for this metric catches it.
  CompareOptions strict;
  strict.tolerances["complete.common_prefix_chars"] = {0.01, true};
  auto cmp2 = compare_summaries(cur, base, strict);
  EXPECT_EQ(find_check(*cmp2, "tiny-f16-q4_0", "common_prefix_chars")->verdict, Verdict::regression);
}

TEST(Compare, ADropOnTwoChainsIsInconclusiveNotOk) {
  // Telephone samples at temperature 0.7 with two chains per cell: the smallest Wilcoxon p of two
  // pairs is 0.5, so a 20% drop can never be significant. It is inconclusive — printed, counted,
  // exit 0 — and fails the gate with fail_inconclusive.
  const auto base = summary_of(testing::fixture_records());
  const auto cur = summary_of(doctored("f16", "q4_0", "telephone", "final_similarity", 0.8));
  auto cmp = compare_summaries(cur, base, {});
  ASSERT_TRUE(cmp);
  const Check* c = find_check(*cmp, "tiny-f16-q4_0", "final_similarity");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->deterministic);
  EXPECT_GT(-c->delta, c->tolerance);
  EXPECT_FALSE(c->powered);
  EXPECT_DOUBLE_EQ(c->min_p, 0.5);
  // 9 tested checks (3 telephone metrics × 3 cells): Holm's first step needs p < 0.05 / 9, so 2^(1-n) < 0.0056: n = 9.
  EXPECT_EQ(cmp->tested, 9u);
  EXPECT_EQ(c->n_needed, 9u);
  EXPECT_EQ(c->verdict, Verdict::inconclusive);
  EXPECT_EQ(exit_status(*cmp), 0);
  const std::string table = write_compare_table(*cmp);
  EXPECT_THAT(table,
              HasSubstr("1 inconclusive: telephone has 2 items per cell; at least 9 are needed to detect a change of "
                        "this size"))
      << table;
  EXPECT_THAT(table, HasSubstr("INCONCLUSIVE tiny-f16-q4_0 telephone/final_similarity")) << table;
  // An unchanged check on the same underpowered probe stays ok: only a bad-direction change beyond tolerance is flagged.
  EXPECT_EQ(find_check(*cmp, "tiny-f16-f16", "final_similarity")->verdict, Verdict::ok);

  CompareOptions strict;
  strict.fail_inconclusive = true;
  auto failing = compare_summaries(cur, base, strict);
  ASSERT_TRUE(failing);
  EXPECT_EQ(exit_status(*failing), 1);
  const std::string xml = write_junit(*failing);
  EXPECT_THAT(xml, HasSubstr("<failure type=\"inconclusive\""));
  EXPECT_THAT(write_junit(*cmp), HasSubstr("<skipped message=\"inconclusive: "));
}

TEST(Compare, SignificantDropOnASampledProbeRegresses) {
  // Thirty chains per cell, every one 20% lower: Wilcoxon p ~ 1e-6 survives Holm over every check.
  auto many = [](double factor) {
    std::vector<nlohmann::json> records;
    for (const char* kv : {"f16/f16", "f16/q4_0"}) {
      const std::string s(kv);
      const std::string k = s.substr(0, s.find('/')), v = s.substr(s.find('/') + 1);
      for (int i = 0; i < 30; ++i) {
        const double sim = (0.7 + 0.005 * i) * (k == "f16" && v == "q4_0" ? factor : 1.0);
        records.push_back(testing::telephone_record(k, v, "t" + std::to_string(i), {0.99, sim}));
      }
    }
    return records;
  };
  const auto base = summary_of(many(1.0));
  const auto cur = summary_of(many(0.8));
  auto cmp = compare_summaries(cur, base, {});
  ASSERT_TRUE(cmp);
  const Check* c = find_check(*cmp, "tiny-f16-q4_0", "final_similarity");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->test, "wilcoxon");
  EXPECT_LT(c->p_holm, 0.05);
  EXPECT_EQ(c->verdict, Verdict::regression);
  // The reference cell, unchanged, is fine.
  EXPECT_EQ(find_check(*cmp, "tiny-f16-f16", "final_similarity")->verdict, Verdict::ok);
}

TEST(Compare, ImprovementIsNotARegression) {
  const auto base = summary_of(testing::fixture_records());
  const auto cur = summary_of(doctored("f16", "q4_0", "complete", "common_prefix_chars", 1.3));
  auto cmp = compare_summaries(cur, base, {});
  ASSERT_TRUE(cmp);
  EXPECT_EQ(find_check(*cmp, "tiny-f16-q4_0", "common_prefix_chars")->verdict, Verdict::improved);
  EXPECT_EQ(exit_status(*cmp), 0);
}

TEST(Compare, LowerIsBetterMetricRegressesUpwards) {
  auto records = testing::fixture_records();
  for (auto& r : records) {
    if (r["probe"] == "telephone" && r["cell"]["type_v"] == "q4_0") r["metrics"]["empty_hops"] = 2;
  }
  CompareOptions o;
  o.tolerances["empty_hops"] = {0.5, false};
  // empty_hops is not deterministic here; declare the probe deterministic to take the exact path.
  nlohmann::json manifest = nlohmann::json::parse(testing::kManifest);
  manifest["probes"][1]["deterministic"] = true;
  auto cmp = compare_summaries(summary_of(records, manifest), summary_of(testing::fixture_records(), manifest), o);
  ASSERT_TRUE(cmp);
  EXPECT_EQ(find_check(*cmp, "tiny-f16-q4_0", "empty_hops")->verdict, Verdict::regression);
}

TEST(Compare, ACellThatLostAllItsValuesRegresses) {
  auto records = testing::fixture_records();
  for (auto& r : records) {
    if (r["cell"]["type_k"] == "f16" && r["cell"]["type_v"] == "q4_0" && r["probe"] == "complete") {
      r["status"] = "crashed";
    }
  }
  auto cmp = compare_summaries(summary_of(records), summary_of(testing::fixture_records()), {});
  ASSERT_TRUE(cmp);
  const Check* c = find_check(*cmp, "tiny-f16-q4_0", "match_reference");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::regression);
  EXPECT_THAT(c->reason, HasSubstr("this run none"));
}

TEST(Compare, ACellThatFailedToLoadThisTimeRegresses) {
  // No record at all for f16/q4_0 now (its server refused to load); the manifest still lists it.
  auto records = testing::fixture_records();
  std::erase_if(records, [](const nlohmann::json& r) { return r["cell"]["type_v"] == "q4_0"; });
  auto cmp = compare_summaries(summary_of(records), summary_of(testing::fixture_records()), {});
  ASSERT_TRUE(cmp);
  EXPECT_EQ(cmp->count(Verdict::regression), 5u);  // 2 complete + 3 telephone metrics
  const Check* c = find_check(*cmp, "tiny-f16-q4_0", "final_similarity");
  ASSERT_NE(c, nullptr);
  EXPECT_THAT(c->reason, HasSubstr("this run none (outcome ok)"));
  EXPECT_EQ(exit_status(*cmp), 1);
}

TEST(Compare, ACellTheRunDoesNotHaveIsMissingAndFailsTheGateUnlessAllowed) {
  auto records = testing::fixture_records();
  std::erase_if(records, [](const nlohmann::json& r) { return r["cell"]["type_v"] == "q4_0"; });
  nlohmann::json manifest = nlohmann::json::parse(testing::kManifest);
  manifest["cells"].erase(1);  // not in this run's grid at all (a filter, a shard, a smaller grid)
  const auto run = summary_of(records, manifest);
  const auto base = summary_of(testing::fixture_records());
  auto smaller = compare_summaries(run, base, {});
  ASSERT_TRUE(smaller);
  EXPECT_EQ(smaller->count(Verdict::regression), 0u);
  EXPECT_EQ(smaller->count(Verdict::missing), 5u);  // 2 complete + 3 telephone metrics
  const Check* c = find_check(*smaller, "tiny-f16-q4_0", "final_similarity");
  ASSERT_NE(c, nullptr);
  EXPECT_THAT(c->reason, HasSubstr("this run has no such cell"));
  EXPECT_EQ(exit_status(*smaller), 1);
  EXPECT_THAT(write_compare_table(*smaller, CheckRows::not_ok), HasSubstr("5 missing (baseline cells or items this run lacks"));
  EXPECT_THAT(write_junit(*smaller), HasSubstr("<failure type=\"missing\""));

  CompareOptions allowed;
  allowed.allow_missing = true;
  auto on_purpose = compare_summaries(run, base, allowed);
  ASSERT_TRUE(on_purpose);
  EXPECT_EQ(on_purpose->count(Verdict::missing), 5u);
  EXPECT_EQ(exit_status(*on_purpose), 0);
  EXPECT_THAT(write_junit(*on_purpose), Not(HasSubstr("<failure")));
  EXPECT_THAT(write_junit(*on_purpose), HasSubstr("<skipped message=\"missing: "));
}

TEST(Compare, ItemsACellLostAreMissingEvenWhenTheRestCompareOk) {
  // One complete item of f16/q4_0 failed this time; the other cells still hold it.
  auto records = testing::fixture_records();
  std::string lost;
  for (auto& r : records) {
    if (r["cell"]["type_v"] == "q4_0" && r["probe"] == "complete" && lost.empty()) {
      lost = r["item"].get<std::string>();
      r["status"] = "failed";
    }
  }
  ASSERT_FALSE(lost.empty());
  auto cmp = compare_summaries(summary_of(records), summary_of(testing::fixture_records()), {});
  ASSERT_TRUE(cmp) << cmp.error().message;
  const Check* c = find_check(*cmp, "tiny-f16-q4_0", "match_reference");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::missing);
  EXPECT_EQ(c->missing_items, std::vector<std::string>{lost});
  EXPECT_THAT(c->reason, HasSubstr("1 of the baseline's"));
  EXPECT_THAT(c->reason, HasSubstr("missing from this cell (failed or not run: " + lost + ")"));
  EXPECT_EQ(exit_status(*cmp), 1);
}

TEST(Compare, ItemsAnAdaptiveStopSettledAreNotMissing) {
  // The run's f16/q4_0 cell stopped early: its p10 item is recorded skipped/settled, not run.
  auto records = testing::fixture_records();
  for (auto& r : records) {
    if (r["cell"]["type_v"] == "q4_0" && r["probe"] == "complete" && r["item"] == "p10") {
      r["status"] = "skipped";
      r["reason"] = "settled";
      r.erase("metrics");
    }
  }
  auto cmp = compare_summaries(summary_of(records), summary_of(testing::fixture_records()), {});
  ASSERT_TRUE(cmp) << cmp.error().message;
  EXPECT_EQ(cmp->count(Verdict::missing), 0u);
  const Check* c = find_check(*cmp, "tiny-f16-q4_0", "match_reference");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->items_settled, 1u);
  EXPECT_TRUE(c->missing_items.empty());
}

TEST(Compare, BrokenOrMissingBaselineIsAnError) {
  testing::TempDir dir("compare");
  auto missing = load_summary(dir.path() / "nope.json", kGenerator);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("nope.json"));
  testing::write_text(dir.path() / "broken.json", "{\"schema_version\": 1, ");
  auto broken = load_summary(dir.path() / "broken.json", kGenerator);
  ASSERT_FALSE(broken);
  EXPECT_THAT(broken.error().message, HasSubstr("not valid JSON"));
  testing::write_text(dir.path() / "other.json", "{\"schema_version\": 1, \"results\": []}");
  EXPECT_FALSE(load_summary(dir.path() / "other.json", kGenerator));
  // Nothing in common is an error too, not a pass.
  const auto base = summary_of(testing::fixture_records());
  nlohmann::json empty = base;
  empty["results"] = nlohmann::json::array();
  EXPECT_FALSE(compare_summaries(base, empty, {}));
}

TEST(Compare, ToleranceSpecs) {
  auto abs = parse_tolerance("final_similarity=0.02");
  ASSERT_TRUE(abs);
  EXPECT_EQ(abs->first, "final_similarity");
  EXPECT_DOUBLE_EQ(abs->second.value, 0.02);
  EXPECT_FALSE(abs->second.relative);
  auto rel = parse_tolerance("recall.passed=10%");
  ASSERT_TRUE(rel);
  EXPECT_EQ(rel->first, "recall.passed");
  EXPECT_DOUBLE_EQ(rel->second.value, 0.1);
  EXPECT_TRUE(rel->second.relative);
  EXPECT_FALSE(parse_tolerance("passed"));
  EXPECT_FALSE(parse_tolerance("passed=abc"));
  EXPECT_FALSE(parse_tolerance("passed=-1"));
  EXPECT_FALSE(parse_tolerance("=1"));
}

TEST(Compare, JUnitShape) {
  const auto base = summary_of(testing::fixture_records());
  const auto cur = summary_of(doctored("f16", "q4_0", "complete", "common_prefix_chars", 0.8));
  auto cmp = compare_summaries(cur, base, {});
  ASSERT_TRUE(cmp);
  const std::string xml = write_junit(*cmp);
  testing::expect_golden("compare-junit.xml", xml);
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites ", 0), 0u);
  EXPECT_THAT(xml, HasSubstr("tests=\"15\" failures=\"1\""));
  std::size_t testcases = 0, failures = 0;
  for (std::size_t at = xml.find("<testcase "); at != std::string::npos; at = xml.find("<testcase ", at + 1)) ++testcases;
  for (std::size_t at = xml.find("<failure "); at != std::string::npos; at = xml.find("<failure ", at + 1)) ++failures;
  EXPECT_EQ(testcases, 15u);
  EXPECT_EQ(failures, 1u);
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"kvsweep.complete\" name=\"tiny-f16-q4_0 common_prefix_chars\""));
  testing::expect_golden("compare-table.md", write_compare_table(*cmp));
}

/// The fixture's manifest with the probes' declarations, as a current kvsweep writes them:
/// empty_hops is a diagnostic, common_prefix_chars a count, telephone sampled.
nlohmann::json declared_manifest() {
  auto m = nlohmann::json::parse(testing::kManifest);
  using probe::Direction;
  using probe::MetricKind;
  m["probes"][0]["deterministic"] = true;
  m["probes"][0]["metrics"] = {probe::to_json(probe::quality("match_reference", Direction::higher_better, MetricKind::binary)),
                               probe::to_json(probe::quality("common_prefix_chars", Direction::higher_better, MetricKind::count))};
  m["probes"][1]["deterministic"] = false;
  m["probes"][1]["metrics"] = {
      probe::to_json(probe::quality("final_similarity", Direction::higher_better, MetricKind::continuous)),
      probe::to_json(probe::quality("mean_similarity", Direction::higher_better, MetricKind::continuous)),
      probe::to_json(probe::diagnostic("empty_hops", MetricKind::count, Direction::lower_better))};
  return m;
}

TEST(Compare, OnlyDeclaredQualityMetricsAreGatedAndNoInferenceWarning) {
  auto records = testing::fixture_records();
  for (auto& r : records) {
    if (r["probe"] == "telephone" && r["metrics"].contains("empty_hops")) r["metrics"]["empty_hops"] = 3;  // worse
  }
  const auto base = summary_of(testing::fixture_records(), declared_manifest());
  const auto cur = summary_of(records, declared_manifest());
  EXPECT_EQ(base["probes"][1]["metrics"][2]["role"], "diagnostic");
  EXPECT_EQ(base["probes"][1]["declared"], true);
  auto cmp = compare_summaries(cur, base, {});
  ASSERT_TRUE(cmp);
  EXPECT_EQ(find_check(*cmp, "tiny-f16-q4_0", "empty_hops"), nullptr);
  EXPECT_EQ(cmp->diagnostics, 3u);  // empty_hops in 3 cells: reported, not gated
  EXPECT_EQ(cmp->checks.size(), 12u);
  EXPECT_EQ(exit_status(*cmp), 0);
  EXPECT_TRUE(cmp->warnings.empty()) << cmp->warnings.front();
  // The older, undeclared fixture is read with the inference, and compare says so.
  auto old = compare_summaries(summary_of(records), summary_of(testing::fixture_records()), {});
  ASSERT_TRUE(old);
  ASSERT_NE(find_check(*old, "tiny-f16-q4_0", "empty_hops"), nullptr);
  ASSERT_FALSE(old->warnings.empty());
  EXPECT_THAT(old->warnings.front(), HasSubstr("has no metric declarations for complete (written by an older kvsweep)"))
      << old->warnings.front();
}

TEST(Compare, TheTestFollowsTheDeclaredKindNotTheValues) {
  // Every common_prefix_chars 0 or 1: the older inference called it binary (McNemar); declared a
  // count, it is Wilcoxon. match_reference, declared binary, stays McNemar.
  auto records = testing::fixture_records();
  for (auto& r : records) {
    if (r["probe"] == "complete" && r["metrics"].contains("common_prefix_chars")) {
      r["metrics"]["common_prefix_chars"] = r["metrics"]["common_prefix_chars"].get<double>() > 100 ? 1 : 0;
    }
  }
  auto m = declared_manifest();
  m["probes"][0]["deterministic"] = false;  // so the paired test runs
  const auto doc = summary_of(records, m);
  auto cmp = compare_summaries(doc, doc, {});
  ASSERT_TRUE(cmp);
  EXPECT_EQ(find_check(*cmp, "tiny-f16-q4_0", "common_prefix_chars")->test, "wilcoxon");
  EXPECT_EQ(find_check(*cmp, "tiny-f16-q4_0", "match_reference")->test, "mcnemar");
  // Without declarations (an older run) the values decide, as they used to.
  auto old = nlohmann::json::parse(testing::kManifest);
  old["probes"][0]["deterministic"] = false;
  const auto old_doc = summary_of(records, old);
  auto inferred = compare_summaries(old_doc, old_doc, {});
  ASSERT_TRUE(inferred);
  EXPECT_EQ(find_check(*inferred, "tiny-f16-q4_0", "common_prefix_chars")->test, "mcnemar");
}

TEST(Compare, APoweredCheckWithoutSignificanceIsOkAndTheTableListsOnlyWhatIsNotOk) {
  // Thirty chains per cell, powered (2^-29 is far below alpha / m), a small mixed change: ok.
  auto many = [](double wiggle) {
    std::vector<nlohmann::json> records;
    for (const char* kv : {"f16/f16", "f16/q4_0"}) {
      const std::string s(kv);
      const std::string k = s.substr(0, s.find('/')), v = s.substr(s.find('/') + 1);
      for (int i = 0; i < 30; ++i) {
        const double sim = 0.7 + 0.005 * i + (i % 2 == 0 ? wiggle : -wiggle);
        records.push_back(testing::telephone_record(k, v, "t" + std::to_string(i), {0.99, sim}));
      }
    }
    return records;
  };
  auto cmp = compare_summaries(summary_of(many(0.2)), summary_of(many(0.0)), {});
  ASSERT_TRUE(cmp);
  const Check* c = find_check(*cmp, "tiny-f16-q4_0", "final_similarity");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->powered);
  EXPECT_EQ(c->verdict, Verdict::ok);
  EXPECT_EQ(cmp->count(Verdict::inconclusive), 0u);
  // Nothing is not ok: no check rows by default, every row with CheckRows::all.
  const std::string brief = write_compare_table(*cmp);
  EXPECT_THAT(brief, Not(HasSubstr("| tiny-"))) << brief;
  EXPECT_THAT(brief, HasSubstr("| telephone | " + std::to_string(cmp->checks.size()) + " | ")) << brief;
  const std::string all = write_compare_table(*cmp, CheckRows::all);
  EXPECT_THAT(all, HasSubstr("| tiny-f16-q4_0 | telephone | final_similarity ↑ | 30 |")) << all;
}

TEST(Compare, JsonHoldsEveryCheckWithItsVerdictAndPower) {
  const auto base = summary_of(testing::fixture_records(), declared_manifest());
  const auto cur = summary_of(doctored("f16", "q4_0", "telephone", "final_similarity", 0.7), declared_manifest());
  auto cmp = compare_summaries(cur, base, {});
  ASSERT_TRUE(cmp);
  const auto doc = nlohmann::json::parse(write_compare_json(*cmp));
  EXPECT_EQ(doc["kind"], "kvsweep-compare");
  EXPECT_EQ(doc["checks"].size(), cmp->checks.size());
  EXPECT_EQ(doc["counts"]["inconclusive"], 1);
  EXPECT_EQ(doc["diagnostics_not_gated"], 3);
  bool seen = false;
  for (const auto& c : doc["checks"]) {
    if (c["cell"] != "tiny-f16-q4_0" || c["metric"] != "final_similarity") continue;
    seen = true;
    EXPECT_EQ(c["verdict"], "inconclusive");
    EXPECT_EQ(c["powered"], false);
    EXPECT_EQ(c["min_p"], 0.5);
    EXPECT_EQ(c["fails"], false);
    EXPECT_EQ(c["kind"], "continuous");
  }
  EXPECT_TRUE(seen);
  // A deterministic check has no test: null p and test.
  EXPECT_TRUE(doc["checks"][0]["test"].is_null());
}

TEST(Compare, ABinaryChangeOfFewFlipsAmongManyItemsIsInconclusive) {
  // 40 items of a sampled pass/fail metric; 3 of them flip to fail: beyond the 5% tolerance, but
  // McNemar sees only the 3 discordant pairs — at best p = 2^(1-3) = 0.25, never significant.
  auto m = declared_manifest();
  m["probes"][0]["deterministic"] = false;
  auto records_with = [](int fails) {
    std::vector<nlohmann::json> records;
    for (const char* v : {"f16", "q4_0"}) {
      for (int i = 0; i < 40; ++i) {
        const int match = std::string(v) == "q4_0" && i < fails ? 0 : 1;
        records.push_back(testing::make_record("f16", v, "complete", "p" + std::to_string(i), "ok",
                                               testing::complete_metrics(match, 100)));
      }
    }
    return records;
  };
  auto cmp = compare_summaries(summary_of(records_with(3), m), summary_of(records_with(0), m), {});
  ASSERT_TRUE(cmp);
  const Check* c = find_check(*cmp, "tiny-f16-q4_0", "match_reference");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->test, "mcnemar");
  EXPECT_DOUBLE_EQ(c->min_p, 0.25);
  EXPECT_FALSE(c->powered);
  // Holm over 4 tested checks (2 cells × 2 metrics): 2^(1-d) < 0.0125 needs d = 8 flips.
  EXPECT_EQ(c->n_needed, 8u);
  EXPECT_EQ(c->verdict, Verdict::inconclusive);
  EXPECT_THAT(c->reason, HasSubstr("40 items per cell, this change is 3 net flips")) << c->reason;
  EXPECT_THAT(inconclusive_summary(*cmp), HasSubstr("at least 8 items that flip the same way are needed"))
      << inconclusive_summary(*cmp);

  // 12 flips, all one way: McNemar p = 2^-11, significant after Holm: a regression.
  auto big = compare_summaries(summary_of(records_with(12), m), summary_of(records_with(0), m), {});
  ASSERT_TRUE(big);
  EXPECT_TRUE(find_check(*big, "tiny-f16-q4_0", "match_reference")->powered);
  EXPECT_EQ(find_check(*big, "tiny-f16-q4_0", "match_reference")->verdict, Verdict::regression);
}

}  // namespace
}  // namespace kvsweep::report
