// Checks before a run, end to end: every name typed on the command line is checked,
// a dead external URL fails once before the grid, compare says first when the runs' configs or items
// differ, and the dry run sizes the sweep (tokens by the model's own tokenizer, -c, what the items can
// settle). The real llama-server on the tiny and copy models; no fakes.
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "kvsweep/server/backend.hpp"

namespace kt = kvsweep::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool holds(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

/// A copy of `run` whose records and manifest pass through the edits.
fs::path doctored_copy(const fs::path& run, const fs::path& to, const std::function<void(json&)>& record,
                       const std::function<void(json&)>& manifest) {
  fs::copy(run, to, fs::copy_options::recursive);
  fs::remove_all(to / "report");
  {
    std::ofstream out(to / "records.jsonl", std::ios::trunc);
    for (json r : kt::read_records(run)) {
      record(r);
      out << r.dump() << "\n";
    }
  }
  json m = kt::read_manifest(run);
  manifest(m);
  std::ofstream(to / "manifest.json", std::ios::trunc) << m.dump(2);
  return to;
}

}  // namespace

TEST(DryRunAndChecks, OnlyNamesAreCheckedAndSelectingNothingFailsBeforeARunDirectory) {
  kt::TempDir dir;
  const auto cfg = kt::write_config(dir, kt::base_config(kt::tiny_model()));  // K × V over f16, q8_0, q4_0
  const fs::path run = dir / "run";
  auto typo = kt::run_kvsweep({"run", cfg.string(), "-o", run.string(), "--only", "k=q4"});
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_TRUE(holds(typo.output, "--only k=q4: no such K type 'q4'")) << typo.output;
  EXPECT_TRUE(holds(typo.output, "(did you mean 'q4_0'?)")) << typo.output;
  EXPECT_FALSE(fs::exists(run));

  auto probe = kt::run_kvsweep({"run", cfg.string(), "-o", run.string(), "--only", "probe=complet"});
  EXPECT_EQ(probe.exit_code, 2) << probe.output;
  EXPECT_TRUE(holds(probe.output, "(did you mean 'complete'?)")) << probe.output;

  // Each name exists, but no cell is both K q4_0 and the cell f16/f16.
  auto none = kt::run_kvsweep({"run", cfg.string(), "-o", run.string(), "--only", "k=q4_0,cell=f16/f16"});
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_TRUE(holds(none.output, "selects no cell")) << none.output;
  EXPECT_FALSE(fs::exists(run));

  auto fine = kt::run_kvsweep({"run", cfg.string(), "--only", "k=q4_0", "--dry-run"});
  EXPECT_EQ(fine.exit_code, 0) << fine.output;
}

TEST(DryRunAndChecks, ADeadExternalUrlFailsOnceBeforeTheGrid) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  // A port nothing listens on: taken from the kernel, then released.
  const std::string url = "http://127.0.0.1:" + std::to_string(kvsweep::server::free_port());
  cfg["server"] = {{"backend", "external"}, {"url", url}, {"ready_timeout_s", 300}, {"request_timeout_s", 60}};
  const fs::path run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(holds(r.output, "server.url " + url + ": nothing answers at " + url + "/health")) << r.output;
  EXPECT_FALSE(holds(r.output, "starting server")) << r.output;
  EXPECT_FALSE(holds(r.output, "[cell ")) << r.output;
  EXPECT_FALSE(fs::exists(run));
}

TEST(DryRunAndChecks, CompareSaysFirstWhatDiffersAndNeverCallsOtherItemsRegressions) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  const fs::path run = dir / "run";
  auto swept = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(swept.exit_code, 0) << swept.output;

  {
    SCOPED_TRACE("names: --tolerance, --margin and --metric are checked");
    auto tol = kt::run_kvsweep({"compare", run.string(), "--baseline", run.string(), "--tolerance", "common_prefix_char=1%"});
    EXPECT_EQ(tol.exit_code, 2) << tol.output;
    EXPECT_TRUE(holds(tol.output, "(did you mean 'common_prefix_chars'?)")) << tol.output;
    auto diag = kt::run_kvsweep({"compare", run.string(), "--baseline", run.string(), "--tolerance", "predicted_n=1"});
    EXPECT_EQ(diag.exit_code, 2) << diag.output;
    EXPECT_TRUE(holds(diag.output, "is a diagnostic metric")) << diag.output;
    auto margin = kt::run_kvsweep({"recommend", run.string(), "--margin", "match_referenc=0.5"});
    EXPECT_EQ(margin.exit_code, 2) << margin.output;
    EXPECT_TRUE(holds(margin.output, "(did you mean 'match_reference'?)")) << margin.output;
    EXPECT_EQ(kt::run_kvsweep({"recommend", run.string(), "--margin", "complete.match_reference=0.5"}).exit_code, 0);
    auto metric = kt::run_kvsweep({"compare", run.string(), "--published",
                                   std::string(KVSWEEP_SOURCE_DIR) + "/published/seed001-codeneedle.json", "--metric",
                                   "passed"});
    EXPECT_EQ(metric.exit_code, 2) << metric.output;
    EXPECT_TRUE(holds(metric.output, "publishes primary_matched, not 'passed'")) << metric.output;
  }
  {
    SCOPED_TRACE("another config on the same items: said first, then compared");
    const fs::path other = doctored_copy(run, dir / "other", [](json&) {}, [](json& m) { m["config_hash"] = "0000000000000000"; });
    auto r = kt::run_kvsweep({"compare", other.string(), "--baseline", run.string()});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_LT(r.output.find("Note: the configs differ"), r.output.find("| probe")) << r.output;
  }
  {
    SCOPED_TRACE("other items: refused without --allow-diff; with it, not comparable, never a regression");
    const fs::path moved = doctored_copy(
        run, dir / "moved", [](json& r) { r["item"] = r["item"].get<std::string>() + "-other"; },
        [](json& m) { m["config_hash"] = "1111111111111111"; });
    auto refused = kt::run_kvsweep({"compare", moved.string(), "--baseline", run.string()});
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_TRUE(holds(refused.output, "the configs differ")) << refused.output;
    EXPECT_TRUE(holds(refused.output, "probe complete has other items")) << refused.output;
    EXPECT_TRUE(holds(refused.output, "--allow-diff")) << refused.output;
    auto allowed = kt::run_kvsweep({"compare", moved.string(), "--baseline", run.string(), "--allow-diff", "--all"});
    EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
    EXPECT_FALSE(holds(allowed.output, "REGRESSION")) << allowed.output;
    EXPECT_TRUE(holds(allowed.output, "not comparable (no common items)")) << allowed.output;
    EXPECT_LT(allowed.output.find("Note: the configs differ"), allowed.output.find("| cell")) << allowed.output;
  }
}

TEST(DryRunAndChecks, TheDryRunSizesTheSweepAndFailsOnAMissingModelOrBinary) {
  kt::TempDir dir;
  // 8 functions of 4 lines, k 12: more than the corpus holds.
  const json cfg = kt::copy_recall_config({"f16", "q8_0", "q4_0"}, 8, 12, 4);
  const fs::path run = dir / "run";
  auto plan = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string(), "--dry-run"});
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_FALSE(fs::exists(run));
  EXPECT_TRUE(holds(plan.output, "recall (recall): 8 items per cell")) << plan.output;
  EXPECT_TRUE(holds(plan.output, "warning: k (sample_size) is 12 but the corpus has 8 functions to recall: 8 items are used"))
      << plan.output;
  EXPECT_TRUE(holds(plan.output, "(counted by the model's tokenizer: llama-server /tokenize on copy")) << plan.output;
  EXPECT_TRUE(holds(plan.output, "context: -c 6144 for every cell (server.ctx)")) << plan.output;
  EXPECT_TRUE(holds(plan.output, "passed (binary, margin 0.05): needs ~52 items even if every item agrees; this plan has 8"))
      << plan.output;
  EXPECT_TRUE(holds(plan.output, "primary_matched (count, margin 0.2): can settle from 2 items")) << plan.output;

  json missing = cfg;
  missing["models"][0]["path"] = (dir / "nope.gguf").string();
  auto no_model = kt::run_kvsweep({"run", kt::write_config(dir, missing, "m.json").string(), "--dry-run"});
  EXPECT_EQ(no_model.exit_code, 2) << no_model.output;
  EXPECT_TRUE(holds(no_model.output, "models[0].path")) << no_model.output;
  json no_binary = cfg;
  no_binary["server"]["binary"] = "no-such-llama-server";
  auto no_bin = kt::run_kvsweep({"run", kt::write_config(dir, no_binary, "b.json").string(), "--dry-run"});
  EXPECT_EQ(no_bin.exit_code, 2) << no_bin.output;
  EXPECT_TRUE(holds(no_bin.output, "'no-such-llama-server' not found")) << no_bin.output;
}

TEST(DryRunAndChecks, TheDryRunEstimatesTheTimeFromTheLastRunOfTheSameModel) {
  kt::TempDir dir;
  json cfg = kt::base_config(kt::tiny_model());
  cfg["grid"]["k"] = {"f16"};  // the reference cell alone: the shortest run that measures rates
  cfg["output_dir"] = (dir / "runs").string();
  const fs::path file = kt::write_config(dir, cfg);
  auto none = kt::run_kvsweep({"run", file.string(), "--dry-run"});
  ASSERT_EQ(none.exit_code, 0) << none.output;
  EXPECT_TRUE(holds(none.output, "time: no previous run of this model to estimate from (complete runs under " +
                                     (dir / "runs").string() + ")"))
      << none.output;

  auto run = kt::run_kvsweep({"run", file.string()});  // into output_dir, as a run without -o goes
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto same = kt::run_kvsweep({"run", file.string(), "--dry-run"});
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_TRUE(holds(same.output, "time: ~")) << same.output;
  EXPECT_TRUE(holds(same.output, "(from run it-")) << same.output;
  EXPECT_TRUE(holds(same.output, " s/item for complete, ")) << same.output;
  EXPECT_TRUE(holds(same.output, " s to start and stop a server)")) << same.output;
  EXPECT_FALSE(holds(same.output, "another config")) << same.output;

  // A wider grid of the same model file: the same rates, said to come from another config.
  cfg["grid"]["k"] = {"f16", "q8_0"};
  auto wider = kt::run_kvsweep({"run", kt::write_config(dir, cfg, "wider.json").string(), "--dry-run"});
  ASSERT_EQ(wider.exit_code, 0) << wider.output;
  EXPECT_TRUE(holds(wider.output, ", another config: ")) << wider.output;
}

// A longkl depth past the model's training context: llama-server would cap each slot at it (the H200 run
// of SmolLM2 at 128K failed every window past 8K so), so the dry run says so and names the override.
TEST(DryRunAndChecks, ALongKlDepthPastTheTrainingContextNamesTheOverride) {
  kt::TempDir dir;
  const fs::path model = dir / "short.gguf";
  auto made = kt::run_kvsweep({"tiny-model", "--context-length", "1024", "--seed", "1", "-o", model.string()}, 120);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  json cfg = kt::base_config(model);
  cfg["server"]["ctx"] = 2304;
  cfg["grid"] = {{"k", {"f16", "q8_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  cfg["probes"] = {{{"kind", "longkl"}, {"depth", 2048}, {"min_depth", 512}, {"windows", 1}, {"window", 2}}};
  auto plan = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "--dry-run"});
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_TRUE(holds(plan.output, "past tiny's training context (1024 tokens)")) << plan.output;
  EXPECT_TRUE(holds(plan.output, "\"--override-kv\", \"llama.context_length=int:2304\"")) << plan.output;
  // Run anyway: the real llama-server logs its cap, and each cell is a config_mismatch that says so.
  auto ran = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", (dir / "run").string()});
  EXPECT_NE(ran.exit_code, 0) << ran.output;
  EXPECT_TRUE(holds(ran.output, "config_mismatch")) << ran.output;
  EXPECT_TRUE(holds(ran.output, "at most the model's training")) << ran.output;

  cfg["server"]["args"].push_back("--override-kv");
  cfg["server"]["args"].push_back("llama.context_length=int:2304");
  auto overridden = kt::run_kvsweep({"run", kt::write_config(dir, cfg, "o.json").string(), "--dry-run"});
  ASSERT_EQ(overridden.exit_code, 0) << overridden.output;
  EXPECT_FALSE(holds(overridden.output, "training context")) << overridden.output;
}
