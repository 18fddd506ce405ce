// What the report writers do with hostile or extreme input, one test each: a model name that is a
// spreadsheet formula in CSV, raw HTML and links from a name in report.md, numbers from ~1e61 on
// printed as a cut 63-digit figure, a full disk leaving a half-new report (and `run` exiting 0),
// two reports at once clashing on one temp name, and a record for a cell outside the grid
// reported as one more cell.
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/cli/write_report.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/output/bundle.hpp"
#include "kvsweep/report/output/csv.hpp"
#include "kvsweep/sweep/store/run_store.hpp"
#include "report_fixture.hpp"

using ::testing::HasSubstr;
using ::testing::Not;
namespace report = kvsweep::report;
namespace rt = kvsweep::report::testing;
namespace sweep = kvsweep::sweep;

namespace {

const std::string kFormula = "=HYPERLINK(\"http://evil.example\",\"click\")";

/// The fixture run with its one model renamed `name` everywhere (manifest, cells, records).
report::RunData fixture_named(const std::string& name) {
  nlohmann::json m = nlohmann::json::parse(rt::kManifest);
  m["models"][0]["name"] = name;
  for (auto& c : m["cells"]) c["model"] = name;
  auto records = rt::fixture_records();
  for (auto& r : records) r["cell"]["model"] = name;
  auto data = report::RunData::from(m, records);
  EXPECT_TRUE(data.has_value()) << (data ? "" : data.error().message);
  return std::move(*data);
}

/// Files under `dir` (relative paths) → their text.
std::map<std::string, std::string> files_under(const std::filesystem::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[std::filesystem::relative(e.path(), dir).string()] = rt::read_text(e.path());
  return out;
}

/// Runs `f` with writes past `limit` bytes failing (EFBIG, as on a full disk) rather than killing us.
template <typename F>
auto with_file_size_limit(rlim_t limit, F f) {
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  auto* previous = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = limit;
  ::setrlimit(RLIMIT_FSIZE, &small);
  auto result = f();
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, previous);
  return result;
}

}  // namespace

TEST(ReportSafeOutput, AModelNameStartingWithEqualsIsNotALiveFormulaInCsv) {
  for (const char* lead : {"=", "+", "-", "@"}) {
    const std::string field = report::csv_field(std::string(lead) + "SUM(A1:A9)");
    EXPECT_EQ(field, std::string("\"'") + lead + "SUM(A1:A9)\"");
  }
  EXPECT_EQ(report::csv_field("tiny"), "tiny");          // plain text stays as it was
  EXPECT_EQ(report::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(report::csv_field("-0.5"), "-0.5");           // a number is no formula
  EXPECT_EQ(report::csv_field("-1e+61"), "-1e+61");
  EXPECT_EQ(report::csv_field("-1+2"), "\"'-1+2\"");

  const report::RunData data = fixture_named(kFormula);
  const std::string long_csv = report::write_long_csv(data);
  EXPECT_THAT(long_csv, HasSubstr(",\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"click\"\")\","));
  EXPECT_THAT(long_csv, Not(HasSubstr(",=HYPERLINK")));
  EXPECT_THAT(long_csv, Not(HasSubstr(",\"=HYPERLINK")));
  const report::RunSummary summary = report::summarize_run(data);
  const std::string grid = report::write_grid_csv(data, summary, "complete", "match_reference");
  EXPECT_THAT(grid, HasSubstr("\n\"'=HYPERLINK("));
  EXPECT_THAT(grid, Not(HasSubstr("\n=HYPERLINK(")));
  EXPECT_THAT(grid, Not(HasSubstr("\n\"=HYPERLINK(")));
}

TEST(ReportSafeOutput, RawHtmlAndLinksFromAModelNameAreEscapedInMarkdown) {
  const std::string name = "<img src=x onerror=alert(1)>[click](http://evil.example)&lt;b&gt;\\";
  report::Table table{{"model", "mean"}, {false, true}, {{name, "0.5 [0.4, 0.6]"}, {"x\\](y)", "<0.001"}}};
  report::Document doc("Run " + name);
  doc.heading(2, name).paragraph(name).list({{report::Span{report::Span::Style::code, "a`b</code>", ""}}}).table(table);
  const std::string md = report::render_markdown(doc);
  EXPECT_THAT(md, Not(HasSubstr("<img")));
  EXPECT_THAT(md, Not(HasSubstr("[click](http://evil")));  // only as "[click\\](", which links nothing
  EXPECT_THAT(md, Not(HasSubstr("&lt;b&gt;")));  // an entity would show as "<b>"
  EXPECT_THAT(md, HasSubstr("&lt;img src=x onerror=alert(1)>[click\\](http://evil.example)&amp;lt;b&amp;gt;"));
  EXPECT_THAT(md, HasSubstr("| x\\\\\\](y) | <0.001 |"));  // the backslash cannot escape the escape
  EXPECT_THAT(md, HasSubstr("0.5 [0.4, 0.6]"));          // brackets without a link stay as they were
  EXPECT_THAT(md, HasSubstr("- ``a`b</code>``"));        // a code span a backtick cannot close
}

TEST(ReportSafeOutput, HugeNumbersKeepTheirMagnitudeInsteadOfACutFigure) {
  EXPECT_EQ(report::fixed(1e61, 2), "1e+61");
  EXPECT_EQ(report::fixed(-2.5e70, 3), "-2.5e+70");
  EXPECT_EQ(report::fixed(1e300, 2), "1e+300");
  EXPECT_EQ(report::signed_fixed(1e61, 2), "+1e+61");
  EXPECT_EQ(report::mean_sd(1e61, 2e60, 2), "1e+61 ± 2e+60");
  EXPECT_EQ(report::bytes_text(3e64), "3e+64");
  EXPECT_EQ(report::fixed(1234.5, 2), "1234.50");  // ordinary numbers as before
  EXPECT_EQ(report::shortest(1e61), "1e+61");
}

TEST(ReportSafeOutput, AFullDiskDuringTheReportLeavesTheOldReportWholeAndFails) {
  rt::TempDir dir("full-disk");
  rt::write_fixture_run(dir.path());
  // The report's files and their sizes, then each replaced by an old text.
  testing::internal::CaptureStdout();  // the summary report_after_run prints
  const bool first = kvsweep::cli::report_after_run(dir.path()).has_value();
  testing::internal::GetCapturedStdout();
  ASSERT_TRUE(first);
  const auto fresh = files_under(dir.path() / "report");
  ASSERT_GT(fresh.size(), 3u);
  std::size_t largest = 0;
  for (const auto& [name, text] : fresh) largest = std::max(largest, text.size());
  for (const auto& [name, text] : fresh) rt::write_text(dir.path() / "report" / name, "old\n");
  const auto old = files_under(dir.path() / "report");

  // Every file but the largest fits: a full disk part way through.
  testing::internal::CaptureStderr();
  const bool reported = with_file_size_limit(largest - 1, [&] { return kvsweep::cli::report_after_run(dir.path()).has_value(); });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(reported);  // `kvsweep run` exits non-zero on it
  EXPECT_THAT(err, HasSubstr("its report could not be written"));
  EXPECT_THAT(err, HasSubstr("none of the"));
  EXPECT_EQ(files_under(dir.path() / "report"), old);  // no file new, no temp file left
}

TEST(ReportSafeOutput, TwoReportsAtOnceDoNotClashOnTempNames) {
  rt::TempDir dir("two-reports");
  const auto path = dir.path() / "report" / "summary.json";
  const std::string a(4096, 'a'), b(4096, 'b');
  std::vector<std::string> errors[2];
  auto writer = [&](int who) {
    for (int i = 0; i < 300; ++i) {
      if (auto w = sweep::write_file_atomic(path, who == 0 ? a : b); !w) errors[who].push_back(w.error().message);
    }
  };
  std::thread first(writer, 0), second(writer, 1);
  first.join();
  second.join();
  EXPECT_TRUE(errors[0].empty()) << errors[0].front();
  EXPECT_TRUE(errors[1].empty()) << errors[1].front();
  const std::string text = rt::read_text(path);
  EXPECT_TRUE(text == a || text == b);
  EXPECT_EQ(files_under(dir.path()).size(), 1u);  // no temp file left behind
}

TEST(ReportSafeOutput, ARecordForACellOutsideTheGridIsNotReportedAsOneMoreCell) {
  auto records = rt::fixture_records();
  records.push_back(rt::make_record("q8_0", "f16", "complete", "p1", "ok", rt::complete_metrics(1, 100)));
  auto other_model = rt::make_record("f16", "f16", "complete", "p1", "ok", rt::complete_metrics(1, 100));
  other_model["cell"]["model"] = "stranger";
  records.push_back(other_model);
  auto d = report::RunData::from(nlohmann::json::parse(rt::kManifest), records);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->cells().size(), 4u);
  EXPECT_EQ(d->k_types(), (std::vector<std::string>{"f16", "q4_0"}));
  EXPECT_EQ(d->models(), (std::vector<std::string>{"tiny"}));
  EXPECT_FALSE(d->counts(records.size() - 1));
  EXPECT_FALSE(d->counts(records.size() - 2));
  ASSERT_EQ(d->outside_grid().size(), 2u);
  EXPECT_EQ(d->outside_grid()[0].cell.type_k, "q8_0");
  EXPECT_EQ(d->outside_grid()[0].records, 1u);
  EXPECT_EQ(d->outside_grid()[1].cell.model, "stranger");

  // The report says so on stderr and counts it nowhere.
  rt::TempDir dir("outside-grid");
  rt::write_run(dir.path(), nlohmann::json::parse(rt::kManifest), records);
  testing::internal::CaptureStderr();
  kvsweep::cli::write_report(dir.path(), *report::parse_format("all"));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("record(s) of cell tiny/q8_0/f16, which is not in this run's grid"));
  EXPECT_THAT(rt::read_text(dir.path() / "report" / "report.md"), Not(HasSubstr("q8_0")));
}
