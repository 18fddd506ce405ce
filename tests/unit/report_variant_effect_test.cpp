// A run with variants read for reporting: its grids are per model and variant, each with its own
// reference; the variant-effect rows pair each variant's cell with the base variant's cell at the
// same K/V; summary.json and report.md carry the variant.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/report/output/csv.hpp"
#include "kvsweep/report/figures/figures.hpp"
#include "kvsweep/report/output/markdown.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/output/summary_json.hpp"
#include "kvsweep/report/analysis/variant_effect.hpp"

using ::testing::HasSubstr;

namespace kvsweep::report {
namespace {

using json = nlohmann::json;

/// copy × {rot-on, rot-off} × K {f16, q4_0} × V f16, 4 recall items: 20 lines recalled everywhere
/// except rot-off q4_0, which recalls none.
RunData rotation_run() {
  json cells = json::array();
  std::vector<json> records;
  for (const std::string variant : {"rot-on", "rot-off"}) {
    for (const std::string k : {"f16", "q4_0"}) {
      cells.push_back({{"model", "copy"}, {"variant", variant}, {"type_k", k}, {"type_v", "f16"},
                       {"id", "copy-" + variant + "-" + k + "-f16"}, {"is_reference", k == "f16"}, {"outcome", "ok"},
                       {"effective", {{"kv_mib", k == "f16" ? 24.0 : 15.38}, {"attn_rot_k", variant == "rot-on" && k != "f16" ? 1 : 0}}}});
      for (int i = 0; i < 4; ++i) {
        const double matched = variant == "rot-off" && k == "q4_0" ? 0.0 : 20.0;
        records.push_back({{"cell", {{"model", "copy"}, {"variant", variant}, {"type_k", k}, {"type_v", "f16"}}},
                           {"probe", "recall"}, {"kind", "recall"}, {"item", "f" + std::to_string(i)}, {"status", "ok"},
                           {"metrics", {{"primary_matched", matched}}}});
      }
    }
  }
  json manifest = {{"name", "rotation"},
                   {"models", {{{"name", "copy"}}}},
                   {"probes", {{{"name", "recall"}, {"kind", "recall"}, {"items", 4},
                                {"metrics", {{{"name", "primary_matched"}, {"direction", "higher"},
                                              {"kind", "count"}, {"role", "quality"}}}}}}},
                   {"cells", cells},
                   {"config", {{"grid", {{"k", {"f16", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}}},
                               {"variants", {{{"name", "rot-on"}}, {{"name", "rot-off"}}}}}}};
  auto data = RunData::from(manifest, records);
  EXPECT_TRUE(data) << data.error().message;
  return *data;
}

TEST(VariantReport, GridsAreModelAndVariantEachWithItsReference) {
  const RunData data = rotation_run();
  EXPECT_EQ(data.variants(), (std::vector<std::string>{"rot-on", "rot-off"}));
  EXPECT_EQ(data.groups(), (std::vector<std::string>{"copy/rot-on", "copy/rot-off"}));
  ASSERT_TRUE(data.reference("copy/rot-off"));
  EXPECT_EQ(data.cells()[*data.reference("copy/rot-off")].id, "copy-rot-off-f16-f16");
  EXPECT_EQ(data.group_parts("copy/rot-off"), (std::pair<std::string, std::string>{"copy", "rot-off"}));
  EXPECT_EQ(core::CellKey::from_json(json{{"model", "copy"}, {"type_k", "f16"}}).group(), "copy");
  const auto q4 = data.find_cell("copy/rot-off", "q4_0", "f16");
  ASSERT_TRUE(q4);
  EXPECT_EQ(data.values(*q4, "recall", "primary_matched").values, (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(data.cells()[*q4].rotation, "off/?");
  EXPECT_EQ(data.cells()[*data.find_cell("copy/rot-on", "q4_0", "f16")].rotation, "on/?");
}

TEST(VariantReport, EachVariantsCellIsPairedWithTheBaseVariantsCellAtTheSameKV) {
  const RunData data = rotation_run();
  const RunSummary summary = summarize_run(data);
  const auto effects = variant_effects(data, summary);
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_EQ(effects[1].base, "rot-on");
  EXPECT_EQ(effects[1].variant, "rot-off");
  EXPECT_EQ(effects[1].type_k, "q4_0");
  EXPECT_EQ(effects[1].metric, "primary_matched");
  EXPECT_DOUBLE_EQ(effects[1].base_mean, 20.0);
  EXPECT_DOUBLE_EQ(effects[1].variant_mean, 0.0);
  EXPECT_DOUBLE_EQ(effects[1].test.delta, -20.0);
  EXPECT_EQ(effects[1].test.n_pairs, 4u);
  EXPECT_EQ(effects[1].test.test, "wilcoxon");
  EXPECT_DOUBLE_EQ(effects[0].test.delta, 0.0);
  // Its own reference: rot-off q4_0 is judged against rot-off f16, not against rot-on.
  const MetricStats* m = summary.find(*data.find_cell("copy/rot-off", "q4_0", "f16"), "recall", "primary_matched");
  ASSERT_TRUE(m && m->vs_reference);
  EXPECT_DOUBLE_EQ(m->vs_reference->delta, -20.0);

  const Table t = variant_effect_table(effects, "recall");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[1][4], "rot-off vs rot-on");
  EXPECT_EQ(t.rows[1][7].substr(0, 6), "-20.00");
  EXPECT_THAT(variant_effect_svg(effects, "recall"), HasSubstr("rot-off q4_0/f16"));
}

TEST(VariantReport, SummaryJsonAndMarkdownCarryTheVariant) {
  const RunData data = rotation_run();
  const RunSummary summary = summarize_run(data);
  const auto doc = summary_document(data, summary, Generator{});
  EXPECT_EQ(doc["cells"][3]["variant"], "rot-off");
  EXPECT_EQ(doc["grids"][0]["model"], "copy");
  EXPECT_EQ(doc["grids"][0]["variant"], "rot-on");
  EXPECT_EQ(doc["variant_effects"][1]["vs_base"]["delta"], -20.0);
  const auto figures = render_figures(data, summary, RenderSvg::no);
  bool has_effect_figure = false;
  for (const auto& f : figures) has_effect_figure = has_effect_figure || f.file == "variant-effect-recall.svg";
  EXPECT_TRUE(has_effect_figure);
  const std::string md = write_markdown(data, summary, figures);
  EXPECT_THAT(md, HasSubstr("### Variant effect"));
  EXPECT_THAT(md, HasSubstr("| copy | q4_0 | f16 | primary_matched ↑ | rot-off vs rot-on |")) << md;
  EXPECT_THAT(md, HasSubstr("primary_matched ↑ — copy/rot-off"));
  // long.csv: a variant column, and every record finds its cell.
  const std::string csv = write_long_csv(data);
  EXPECT_EQ(csv.substr(0, csv.find("type_k")), "run,model,variant,");
  EXPECT_THAT(csv, HasSubstr("rotation,copy,rot-off,q4_0,f16,copy-rot-off-q4_0-f16,recall,")) << csv;
}

}  // namespace
}  // namespace kvsweep::report
