// The copy model (kvsweep tiny-model --kind copy) on the real llama-server: a model that really
// recalls, so the recall probe shows a precision gradient instead of sitting at the floor.
#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kt = kvsweep::testing;

namespace {

/// Cued recall of 8 functions of 20 lines over a K axis with V = f16, rotation off: the setting
/// in which key outliers make low-bit K caches lose lines (the demo's recall grid).
nlohmann::json copy_config(const std::vector<std::string>& k_types) {
  auto cfg = kt::copy_recall_config(k_types, 8, 8, 20);
  cfg["server"]["env"] = {{"LLAMA_ATTN_ROT_DISABLE", "1"}};
  return cfg;
}

}  // namespace

TEST(CopyModel, RecallsAtF16AndUnrotatedLowBitKeysLoseLinesWithASignificantGradient) {
  kt::TempDir dir;
  const std::vector<std::string> k_types = {"f16", "q8_0", "q5_1", "q5_0", "q4_0"};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, copy_config(k_types)).string(), "-o", run.string()}, 900);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::map<std::string, std::vector<int>> matched;  // type_k → primary_matched per item
  for (const auto& rec : kt::read_records(run)) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump().substr(0, 400);
    EXPECT_EQ(rec["response"]["cue"], "signature");
    matched[rec["cell"]["type_k"].get<std::string>()].push_back(rec["metrics"]["primary_matched"].get<int>());
  }
  const auto mean = [&](const std::string& k) {
    double s = 0;
    for (int v : matched[k]) s += v;
    return matched[k].empty() ? -1.0 : s / static_cast<double>(matched[k].size());
  };
  ASSERT_EQ(matched["f16"].size(), 8u);
  EXPECT_GE(mean("f16"), 19.0) << "the copy model must recall at the reference";
  EXPECT_LE(mean("q4_0"), mean("f16") - 4.0) << "unrotated q4_0 K must lose lines";

  // The server said rotation was off in every cell (LLAMA_ATTN_ROT_DISABLE=1 reached it).
  const auto manifest = kt::read_manifest(run);
  for (const auto& cell : manifest["cells"]) {
    ASSERT_TRUE(cell["effective"].contains("attn_rot_k")) << cell.dump();
    EXPECT_EQ(cell["effective"]["attn_rot_k"], 0) << cell.dump();
  }

  // The report's statistics: the q4_0 cell differs significantly from the reference, and
  // primary_matched follows the bits of K.
  auto rep = kt::run_kvsweep({"report", run.string()});  // all files, and report.md on stdout
  ASSERT_EQ(rep.exit_code, 0) << rep.output;
  std::ifstream in(run / "report" / "summary.json");
  const auto summary = nlohmann::json::parse(in);
  bool q4_significant = false;
  for (const auto& res : summary["results"]) {
    if (res["type_k"] != "q4_0" || res["probe"] != "recall") continue;
    const auto& t = res["metrics"]["primary_matched"]["vs_reference"];
    q4_significant = t.value("significant", false);
    EXPECT_LT(t["delta"].get<double>(), 0) << t.dump();
  }
  EXPECT_TRUE(q4_significant) << "the paired test must find the q4_0 loss";
  bool gradient = false;
  for (const auto& g : summary["grids"]) {
    if (g["probe"] == "recall" && g["metric"] == "primary_matched") gradient = g["gradient"]["verdict"] == "yes";
  }
  EXPECT_TRUE(gradient) << "gradient? must say yes for primary_matched";
  // The report's calibration line: the reference is not floored.
  EXPECT_THAT(rep.output, HasSubstr("Calibration (copy): primary_matched is")) << rep.output;
  EXPECT_THAT(rep.output, Not(HasSubstr("Warning: floored"))) << rep.output;
}

TEST(CopyModel, CopyKnobsWithoutKindCopyAreAnError) {
  kt::TempDir dir;
  auto r = kt::run_kvsweep({"tiny-model", "-o", (dir / "m.gguf").string(), "--outlier", "3"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--outlier is a knob of the copy model; add --kind copy")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "m.gguf"));
}
