// Golden-file tests of every report writer over the literal fixture run (report_fixture.hpp).
// KVSWEEP_UPDATE_GOLDEN=1 rewrites tests/data/report/*; review the diff (and render the SVGs) before committing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "kvsweep/report/output/bundle.hpp"
#include "kvsweep/report/output/csv.hpp"
#include "kvsweep/report/figures/figures.hpp"
#include "kvsweep/report/figures/heatmap.hpp"
#include "kvsweep/report/output/html.hpp"
#include "kvsweep/report/output/markdown.hpp"
#include "kvsweep/report/output/summary_json.hpp"
#include "kvsweep/report/figures/telephone_figures.hpp"
#include "kvsweep/report/figures/tradeoff.hpp"
#include "report_fixture.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kvsweep::report {
namespace {

const Generator kGenerator{"0.0.0-test", "0000000test"};

struct Fixture {
  testing::TempDir dir{"writers"};
  RunData data;
  RunSummary summary;
  Fixture() {
    testing::write_fixture_run(dir.path());
    auto loaded = RunData::load(dir.path());
    if (!loaded) throw std::runtime_error(loaded.error().message);
    data = std::move(*loaded);
    summary = summarize_run(data);
  }
};

/// Well-formed XML, checked by hand (no XML library is a dependency): balanced and properly nested
/// tags, quoted attributes, no raw '<' or stray '&' in text or attribute values. Returns "" or the problem.
std::string xml_problem(std::string_view xml) {
  std::vector<std::string> open;
  std::size_t i = 0;
  auto entity_ok = [&](std::size_t at) {
    static const std::string_view kEntities[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (auto e : kEntities) {
      if (xml.substr(at, e.size()) == e) return true;
    }
    if (xml.substr(at, 2) == "&#") {
      const auto semi = xml.find(';', at);
      return semi != std::string_view::npos && semi - at < 10;
    }
    return false;
  };
  bool root_seen = false;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      if (!entity_ok(i)) return "stray & at " + std::to_string(i);
      ++i;
      continue;
    }
    if (xml[i] != '<') {
      ++i;
      continue;
    }
    if (xml.substr(i, 5) == "<?xml") {
      i = xml.find("?>", i);
      if (i == std::string_view::npos) return "unterminated declaration";
      i += 2;
      continue;
    }
    if (xml.substr(i, 4) == "<!--") {
      i = xml.find("-->", i);
      if (i == std::string_view::npos) return "unterminated comment";
      i += 3;
      continue;
    }
    const bool closing = i + 1 < xml.size() && xml[i + 1] == '/';
    std::size_t j = i + (closing ? 2 : 1);
    const std::size_t name_start = j;
    while (j < xml.size() && (std::isalnum(static_cast<unsigned char>(xml[j])) || xml[j] == '-' || xml[j] == ':' || xml[j] == '_')) ++j;
    const std::string name(xml.substr(name_start, j - name_start));
    if (name.empty()) return "empty tag name at " + std::to_string(i);
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> does not close " + (open.empty() ? "anything" : open.back());
      open.pop_back();
      j = xml.find('>', j);
      if (j == std::string_view::npos) return "unterminated </" + name + ">";
      i = j + 1;
      continue;
    }
    // Attributes: name="value" pairs until > or />.
    for (;;) {
      while (j < xml.size() && std::isspace(static_cast<unsigned char>(xml[j]))) ++j;
      if (j >= xml.size()) return "unterminated <" + name + ">";
      if (xml[j] == '>') {
        if (open.empty() && root_seen) return "second root element <" + name + ">";
        root_seen = true;
        open.push_back(name);
        ++j;
        break;
      }
      if (xml.substr(j, 2) == "/>") {
        if (open.empty() && root_seen) return "second root element <" + name + ">";
        root_seen = true;
        j += 2;
        break;
      }
      const std::size_t attr_start = j;
      while (j < xml.size() && xml[j] != '=' && !std::isspace(static_cast<unsigned char>(xml[j])) && xml[j] != '>') ++j;
      if (j == attr_start || j >= xml.size() || xml[j] != '=') return "attribute without value in <" + name + ">";
      ++j;
      if (j >= xml.size() || (xml[j] != '"' && xml[j] != '\'')) return "unquoted attribute in <" + name + ">";
      const char quote = xml[j++];
      const std::size_t end = xml.find(quote, j);
      if (end == std::string_view::npos) return "unterminated attribute in <" + name + ">";
      for (std::size_t k = j; k < end; ++k) {
        if (xml[k] == '<') return "'<' inside an attribute of <" + name + ">";
        if (xml[k] == '&' && !entity_ok(k)) return "stray & in an attribute of <" + name + ">";
      }
      j = end + 1;
    }
    i = j;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (!root_seen) return "no element";
  return "";
}

TEST(XmlChecker, CatchesWhatItShould) {
  EXPECT_EQ(xml_problem("<a><b x=\"1\"/>t &amp; u</a>"), "");
  EXPECT_NE(xml_problem("<a><b></a></b>"), "");
  EXPECT_NE(xml_problem("<a x=1></a>"), "");
  EXPECT_NE(xml_problem("<a>AT&T</a>"), "");
  EXPECT_NE(xml_problem("<a>"), "");
  EXPECT_NE(xml_problem("<a/><b/>"), "");
}

TEST(ReportWriters, SummaryJson) {
  Fixture f;
  const std::string text = write_summary_json(f.data, f.summary, kGenerator);
  testing::expect_golden("summary.json", text);
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["context"]["kvsweep"]["git_sha"], "a26fecac9b7e");
  EXPECT_EQ(doc["context"]["models"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(doc["context"]["server"]["version"], "0.5.0-dev (build 1, commit de3ff81)");
  EXPECT_EQ(doc["context"]["host"]["hostname"], "testhost");
  EXPECT_EQ(doc["context"]["report"]["kvsweep"]["version"], "0.0.0-test");
}

TEST(ReportWriters, GridCsv) {
  Fixture f;
  EXPECT_EQ(grid_metrics(f.data, f.summary).size(), 5u);
  testing::expect_golden("grid-complete-common_prefix_chars.csv",
                         write_grid_csv(f.data, f.summary, "complete", "common_prefix_chars"));
  testing::expect_golden("grid-telephone-final_similarity.csv",
                         write_grid_csv(f.data, f.summary, "telephone", "final_similarity"));
}

TEST(ReportWriters, LongCsv) {
  Fixture f;
  const std::string text = write_long_csv(f.data);
  testing::expect_golden("long.csv", text);
  // One row per record plus the header.
  EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), f.data.records().size() + 1);
}

TEST(ReportWriters, Markdown) {
  Fixture f;
  const auto figures = render_figures(f.data, f.summary, RenderSvg::no);
  const std::string text = write_markdown(f.data, f.summary, figures);
  testing::expect_golden("report.md", text);
  EXPECT_THAT(text, HasSubstr("| model | combos | pass /4 (mean ± sd) |"));
  EXPECT_THAT(text, HasSubstr("ctk\\ctv"));
  EXPECT_THAT(text, HasSubstr("load_failed"));
}

TEST(ReportWriters, HeatmapSvg) {
  Fixture f;
  const std::string svg = heatmap_svg(f.data, f.summary, "tiny", "complete", "common_prefix_chars");
  testing::expect_golden("heatmap-complete-common_prefix_chars-tiny.svg", svg);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_THAT(svg, HasSubstr("reference"));
  EXPECT_THAT(svg, HasSubstr("load_failed"));
}

TEST(ReportWriters, TelephoneSvgs) {
  Fixture f;
  const std::string hops = telephone_hops_svg(f.data, "tiny", "telephone");
  testing::expect_golden("telephone-telephone-hops-tiny.svg", hops);
  EXPECT_EQ(xml_problem(hops), "");
  const std::string delta = telephone_delta_svg(f.data, f.summary, "telephone");
  testing::expect_golden("telephone-telephone-delta.svg", delta);
  EXPECT_EQ(xml_problem(delta), "");
  const auto means = mean_similarity_by_hop(f.data, 0, "telephone");
  ASSERT_EQ(means.size(), 3u);
  EXPECT_DOUBLE_EQ(means[0], 0.96);
}

TEST(ReportWriters, TradeoffSvg) {
  Fixture f;
  const std::string svg = tradeoff_svg(f.data, f.summary, "tiny", "complete", f.data.find_cell("tiny", "f16", "q4_0"));
  testing::expect_golden("tradeoff-complete-tiny.svg", svg);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(tradeoff_metric(f.data, f.summary, "complete"), "match_reference");
  EXPECT_THAT(svg, HasSubstr("f16/f16 (ref)"));
  EXPECT_THAT(svg, HasSubstr("class=\"recommended\""));
  // q4_0/q4_0 failed to load: no KV size, no point.
  EXPECT_THAT(svg, Not(HasSubstr("q4_0/q4_0")));
}

TEST(ReportWriters, Html) {
  Fixture f;
  const auto figures = render_figures(f.data, f.summary);
  const std::string html = write_html(f.data, f.summary, figures);
  testing::expect_golden("index.html", html);
  for (const auto& fig : figures) EXPECT_THAT(html, HasSubstr("<figure id=\"" + fig.file + "\">")) << fig.file;
  // The inlined figures carry no XML declaration.
  EXPECT_THAT(html, Not(HasSubstr("<?xml")));
}

TEST(ReportWriters, EveryFigureIsWellFormedXml) {
  Fixture f;
  const auto figures = render_figures(f.data, f.summary);
  // 5 heatmaps (2 complete + 3 telephone metrics), the hop chart, the Δ chart and a trade-off
  // figure per probe (three cells have a KV size).
  ASSERT_EQ(figures.size(), 9u);
  for (const auto& fig : figures) EXPECT_EQ(xml_problem(fig.svg), "") << fig.file;
}

TEST(ReportWriters, BundleNamesEveryFileOnce) {
  Fixture f;
  const auto files = render_report(f.data, f.summary, *parse_format("all"), kGenerator);
  std::vector<std::string> paths;
  for (const auto& file : files) paths.push_back(file.path.generic_string());
  for (const char* expected : {"summary.json", "long.csv", "report.md", "index.html",
                               "grids/complete-match_reference.csv", "grids/telephone-empty_hops.csv",
                               "heatmap-telephone-final_similarity-tiny.svg", "telephone-telephone-delta.svg"}) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), expected), paths.end()) << expected;
  }
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(std::adjacent_find(paths.begin(), paths.end()), paths.end());
  EXPECT_EQ(paths.size(), 4u + 5u + 9u);

  const auto md_only = render_report(f.data, f.summary, *parse_format("md"), kGenerator);
  ASSERT_EQ(md_only.size(), 1u);
  // Without the SVGs beside it, report.md links no figure.
  EXPECT_THAT(md_only[0].text, Not(HasSubstr(".svg")));
  EXPECT_FALSE(parse_format("pdf").has_value());
}

}  // namespace
}  // namespace kvsweep::report
