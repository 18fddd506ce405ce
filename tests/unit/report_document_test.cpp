// report::Document and its renderers: each block in Markdown, HTML and plain text, and the property
// the model exists for — report.md and index.html hold the same sections in the same order, for a run
// with every probe kind, variants and adaptive (skipped/settled) records.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/report/output/brief.hpp"
#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/figures/figures.hpp"
#include "kvsweep/report/output/html.hpp"
#include "kvsweep/report/output/markdown.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

Document small_document() {
  Document doc("Title | with a pipe");
  doc.paragraph("Context line.", Paragraph::Tone::context)
      .heading(2, "Section one")
      .paragraph({plain("A "), strong("bold"), plain(" and "), code("code"), plain(" and "), link("a link", "x.html"), plain(".")})
      .note("Warning: <careful>")
      .list({{plain("first")}, {plain("second")}})
      .heading(3, "Table")
      .table(Table{{"name", "value"}, {false, true}, {{"a", "1.5"}, {"bb", "10"}}})
      .preformatted("  grid\n  rows")
      .figure("A figure", "fig.svg", "<?xml version=\"1.0\"?>\n<svg id=\"s\"></svg>\n")
      .lines({{plain("line one")}, {plain("line two")}});
  return doc;
}

TEST(Document, MarkdownSeparatesBlocksByOneBlankLine) {
  EXPECT_EQ(render_markdown(small_document()),
            "# Title \\| with a pipe\n\n"
            "Context line.\n\n"
            "## Section one\n\n"
            "A **bold** and `code` and [a link](x.html).\n\n"
            "Warning: &lt;careful>\n\n"  // what HTML escapes is not live in Markdown either
            "- first\n- second\n\n"
            "### Table\n\n"
            "| name | value |\n|---|---:|\n| a | 1.5 |\n| bb | 10 |\n\n"
            "```text\n  grid\n  rows\n```\n\n"
            "![A figure](fig.svg)\n\n"
            "line one\nline two\n");
}

TEST(Document, MarkdownNamesAFigureWhoseFileIsNotWritten) {
  const std::string md = render_markdown(small_document(), {.figure_files = false});
  EXPECT_THAT(md, HasSubstr("A figure (a figure of index.html)\n"));
  EXPECT_THAT(md, Not(HasSubstr("fig.svg")));
}

TEST(Document, HtmlEscapesTextAndInlinesFigures) {
  const std::string html = render_html(small_document());
  EXPECT_THAT(html, HasSubstr("<title>Title | with a pipe</title>"));
  EXPECT_THAT(html, HasSubstr("<p class=\"context\">Context line.</p>"));
  EXPECT_THAT(html, HasSubstr("<h2 id=\"Section_one\">Section one</h2>"));
  EXPECT_THAT(html, HasSubstr("<p>A <strong>bold</strong> and <code>code</code> and <a href=\"x.html\">a link</a>.</p>"));
  EXPECT_THAT(html, HasSubstr("<p class=\"warn\">Warning: &lt;careful&gt;</p>"));
  EXPECT_THAT(html, HasSubstr("<th class=\"num\">value</th>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\">1.5</td>"));
  EXPECT_THAT(html, HasSubstr("<pre>  grid\n  rows\n</pre>"));
  EXPECT_THAT(html, HasSubstr("<figure id=\"fig.svg\">\n<svg id=\"s\"></svg>"));
  EXPECT_THAT(html, Not(HasSubstr("<?xml")));
  EXPECT_THAT(html, HasSubstr("<p>line one<br>\nline two</p>"));
}

TEST(Document, HtmlSectionIdsAreUnique) {
  Document doc("t");
  doc.heading(2, "Cells").heading(2, "Cells");
  const std::string html = render_html(doc);
  EXPECT_THAT(html, HasSubstr("<h2 id=\"Cells\">"));
  EXPECT_THAT(html, HasSubstr("<h2 id=\"Cells-2\">"));
}

TEST(Document, TextAlignsTableColumnsAndWrapsParagraphs) {
  Document doc("Run");
  doc.table(Table{{"cell", "passed"}, {false, true}, {{"f16/f16", "1.00"}, {"q4_0/q4_0 ±", "0.5"}}});
  doc.paragraph(std::string(60, 'a') + " " + std::string(60, 'b'));
  EXPECT_EQ(render_text(doc),
            "Run\n===\n\n"
            "cell         passed\n"
            "-----------  ------\n"
            "f16/f16        1.00\n"
            "q4_0/q4_0 ±     0.5\n\n" +
                std::string(60, 'a') + "\n" + std::string(60, 'b') + "\n");
}

TEST(Document, SectionsAreTheHeadingsBelowTheTitle) {
  const auto sections = small_document().sections();
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_EQ(sections[0].text, "Section one");
  EXPECT_EQ(sections[1].level, 3);
  EXPECT_EQ(small_document().title(), "Title | with a pipe");
}

// ---- A run with every probe kind, variants, adaptive records, paths and a speed probe ----

json declared(const std::string& name, const std::string& direction, const std::string& kind,
              const std::string& role = "quality") {
  return {{"name", name}, {"direction", direction}, {"kind", kind}, {"role", role}};
}

/// model m × variants {a, b} × K {f16, q8_0, q4_0} × V f16; in variant b the q4_0 cell stopped
/// adaptively after 3 of 6 items (the rest recorded skipped/settled).
RunData everything_run() {
  const json probes = json::array({
      {{"name", "complete"}, {"kind", "complete"}, {"items", 6},
       {"metrics", {declared("match_reference", "higher", "binary"), declared("common_prefix_chars", "higher", "count")}}},
      {{"name", "telephone"}, {"kind", "telephone"}, {"items", 6},
       {"metrics", {declared("final_similarity", "higher", "continuous")}}},
      {{"name", "recall"}, {"kind", "recall"}, {"items", 6},
       {"metrics", {declared("primary_matched", "higher", "count"), declared("passed", "higher", "binary"),
                    declared("produced_lines", "none", "count", "diagnostic")}}},
      {{"name", "divergence"}, {"kind", "divergence"}, {"items", 6},
       {"metrics", {declared("first_divergence", "higher", "count")}}},
      {{"name", "toolcall"}, {"kind", "toolcall"}, {"items", 6}, {"metrics", {declared("valid", "higher", "binary")}}},
      {{"name", "kld"}, {"kind", "kld"}, {"items", 6}, {"metrics", {declared("kld_mean", "lower", "continuous")}}},
      {{"name", "speed"}, {"kind", "speed"}, {"items", 1},
       {"metrics", {declared("pp_tok_s", "higher", "continuous", "cost"), declared("tg_tok_s", "higher", "continuous", "cost")}}},
  });
  json cells = json::array();
  std::vector<json> records;
  for (const std::string variant : {"a", "b"}) {
    for (const std::string k : {"f16", "q8_0", "q4_0"}) {
      const double kv = k == "f16" ? 4.0 : k == "q8_0" ? 2.125 : 1.125;
      cells.push_back({{"model", "m"}, {"variant", variant}, {"type_k", k}, {"type_v", "f16"},
                       {"id", "m-" + variant + "-" + k + "-f16"}, {"is_reference", k == "f16"}, {"outcome", "ok"}, {"n_ctx", 4096},
                       {"effective", {{"kv_mib", kv + 2.0}, {"k_mib", kv}, {"v_mib", 2.0}, {"path", "cpu"}, {"path_reason", "a CPU build"},
                                      {"memory", {{{"device", "CPU"}, {"gpu", false}, {"model_mib", 10.0}, {"kv_mib", kv + 2.0}, {"compute_mib", 3.0}}}}}}});
      const json cell = {{"model", "m"}, {"variant", variant}, {"type_k", k}, {"type_v", "f16"}};
      const bool worse = k == "q4_0";
      const int stop = variant == "b" && worse ? 3 : 6;
      for (int i = 0; i < 6; ++i) {
        const std::string item = "i" + std::to_string(i);
        const auto rec = [&](const std::string& probe, json metrics) {
          json r = {{"cell", cell}, {"probe", probe}, {"kind", probe}, {"item", item}, {"status", "ok"}, {"metrics", std::move(metrics)},
                    {"timings", {{"prompt_n", 512}, {"prompt_ms", 100.0 + i}, {"predicted_n", 16}, {"predicted_ms", 40.0}, {"cache_n", 0}}}};
          if (i >= stop) {
            r["status"] = "skipped";
            r["reason"] = "settled";
            r["metrics"] = json::object();
          }
          records.push_back(std::move(r));
        };
        rec("complete", {{"match_reference", worse && i % 2 ? 0 : 1}, {"common_prefix_chars", worse ? 10 + i : 100 + i}});
        rec("telephone", {{"final_similarity", worse ? 0.6 + 0.01 * i : 0.9 + 0.01 * i}});
        rec("recall", {{"primary_matched", worse ? 12 : 20}, {"passed", worse ? 0 : 1}, {"produced_lines", 20}});
        rec("divergence", {{"first_divergence", worse ? 3 + i : 32}});
        rec("toolcall", {{"valid", 1}});
        rec("kld", {{"kld_mean", worse ? 0.2 + 0.01 * i : 0.001 * (i + 1)}});
      }
      records.push_back({{"cell", cell}, {"probe", "speed"}, {"kind", "speed"}, {"item", "d0"}, {"status", "ok"},
                         {"spec", {{"depth", 0}, {"pp", 64}, {"tg", 16}}},
                         {"metrics", {{"pp_tok_s", k == "f16" ? 400.0 : 380.0}, {"pp_tok_s_sd", 5.0}, {"tg_tok_s", 40.0}, {"tg_tok_s_sd", 1.0}}}});
    }
  }
  json manifest = {{"name", "everything"}, {"status", "complete"}, {"n_ctx", 4096},
                   {"models", {{{"name", "m"}}}}, {"probes", probes}, {"cells", cells},
                   {"config", {{"grid", {{"k", {"f16", "q8_0", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}}},
                               {"variants", {{{"name", "a"}}, {{"name", "b"}}}}}}};
  auto data = RunData::from(manifest, records);
  EXPECT_TRUE(data) << data.error().message;
  return *data;
}

/// "## Cost", "### Cells", … from report.md (outside fenced blocks), in order.
std::vector<std::string> markdown_sections(const std::string& md) {
  std::vector<std::string> out;
  std::istringstream in(md);
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("```")) fenced = !fenced;
    if (!fenced && (line.starts_with("## ") || line.starts_with("### "))) out.push_back(line);
  }
  return out;
}

/// The same from index.html's <h2>/<h3>, written the Markdown way.
std::vector<std::string> html_sections(const std::string& html) {
  std::vector<std::string> out;
  const std::regex heading(R"(<h([23])(?: id="[^"]*")?>([^<]*)</h[23]>)");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), heading); it != std::sregex_iterator(); ++it) {
    std::string text = (*it)[2];
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}}) {
      for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
    }
    out.push_back(std::string((*it)[1] == "2" ? "## " : "### ") + text);
  }
  return out;
}

TEST(ReportDocument, MarkdownAndHtmlListTheSameSectionsInTheSameOrder) {
  const RunData data = everything_run();
  const RunSummary summary = summarize_run(data);
  const auto figures = render_figures(data, summary);
  const std::vector<std::string> md = markdown_sections(write_markdown(data, summary, figures));
  const std::vector<std::string> html = html_sections(write_html(data, summary, figures));
  EXPECT_EQ(md, html);
  // Every probe, the variant effect, figures, cost with its path block, and the outcomes are there.
  for (const std::string s : {"## Verdict", "## complete", "## telephone", "## recall", "## divergence", "## toolcall",
                              "## kld", "## speed", "### Variant effect", "### Figures", "### Grids", "## Cost",
                              "### Attention path and memory", "## Cell outcomes"}) {
    EXPECT_NE(std::find(md.begin(), md.end(), s), md.end()) << s << " missing from:\n" << ::testing::PrintToString(md);
  }
}

TEST(ReportDocument, BriefFitsAScreenAndNamesTheCellsThatDiffer) {
  const RunData data = everything_run();
  const RunSummary summary = summarize_run(data);
  const std::string text = render_text(brief_document(data, summary, "runs/everything"));
  EXPECT_THAT(text, HasSubstr("kvsweep summary: everything"));
  // One overview row per probe and model (variants are models here).
  EXPECT_THAT(text, HasSubstr("probe"));
  EXPECT_THAT(text, HasSubstr("recall"));
  EXPECT_THAT(text, HasSubstr("m/b"));
  EXPECT_THAT(text, HasSubstr("Changes that are real (reference → cell"));
  EXPECT_THAT(text, HasSubstr(": m/a q4_0/f16: "));
  EXPECT_THAT(text, HasSubstr("(worse, p "));
  EXPECT_THAT(text, HasSubstr("Verdict\n-------"));
  EXPECT_THAT(text, HasSubstr("runs/everything/report/index.html"));
  // q8_0 answered as f16 did: never listed as differing.
  EXPECT_THAT(text, Not(HasSubstr("m/a q8_0/f16: ")));
  EXPECT_THAT(text, Not(HasSubstr("m/b q8_0/f16: ")));
  // A probe where nothing differs significantly still names its largest change.
  EXPECT_THAT(text, HasSubstr("The largest change seen where none is significant"));
  // A screen: the verdict names its evidence (one line or two per model) within it.
  EXPECT_LE(std::count(text.begin(), text.end(), '\n'), 64) << text;
}

}  // namespace
}  // namespace kvsweep::report
