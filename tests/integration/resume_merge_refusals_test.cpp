// What resume, merge and the dry run refuse, through the kvsweep process (one test each): the
// server build as part of a run's identity (resume and merge), a resume without its manifest onto
// another config's records, a new run inheriting a directory's old cells, and a server binary that
// is a directory passing the dry run, and a merge killed midway that could not run again. All on
// the real llama-server and the tiny model.
#include <signal.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

namespace {

// One cell (f16/f16) and two items: the cheapest run that writes a manifest and records.
nlohmann::json one_cell() {
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 4}, {"prompts", {"One", "Two"}}}};
  return cfg;
}

// Two cells (f16/f16, q8_0/f16) run as shards 0/2 and 1/2 into dir/s0 and dir/s1.
void run_two_shards(const kt::TempDir& dir) {
  auto cfg = one_cell();
  cfg["grid"]["k"] = {"f16", "q8_0"};
  const auto config = kt::write_config(dir, cfg);
  for (int i = 0; i < 2; ++i) {
    auto r = kt::run_kvsweep({"run", config.string(), "--shard", std::to_string(i) + "/2", "-o",
                              (dir / ("s" + std::to_string(i))).string()});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
}

void set_server_version(const std::filesystem::path& run, const std::string& version) {
  auto manifest = kt::read_manifest(run);
  manifest["server"]["version"] = version;
  std::ofstream(run / "manifest.json") << manifest.dump(2);
}

}  // namespace

TEST(ResumeMergeRefusals, AResumeWithAnotherServerBuildIsRefusedUnlessAllowedAndThenRecorded) {
  kt::TempDir dir;
  const auto config = kt::write_config(dir, one_cell());
  const auto run = dir / "run";
  ASSERT_EQ(kt::run_kvsweep({"run", config.string(), "-o", run.string()}).exit_code, 0);
  const std::string ran = kt::read_manifest(run)["server"]["version"];
  // As if the run had started on another llama.cpp build.
  set_server_version(run, "0.0.1 (build 9, commit abcdef0)");
  auto r = kt::run_kvsweep({"run", config.string(), "--resume", run.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the run started with llama-server 0.0.1 (build 9, commit abcdef0)")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--allow-build-change")) << r.output;
  r = kt::run_kvsweep({"run", config.string(), "--resume", run.string(), "--allow-build-change"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto manifest = kt::read_manifest(run);
  EXPECT_THAT(manifest["build_changed_from"].get<std::string>(), HasSubstr("0.0.1 (build 9, commit abcdef0)"));
  EXPECT_EQ(manifest["server"]["version"], ran);
}

TEST(ResumeMergeRefusals, MergingShardsOfTwoServerBuildsIsRefusedUnlessAllowed) {
  kt::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(run_two_shards(dir));
  set_server_version(dir / "s1", "0.0.1 (build 9, commit abcdef0)");
  auto r = kt::run_kvsweep({"merge", (dir / "s0").string(), (dir / "s1").string(), "-o", (dir / "m").string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("refusing to merge runs of different server builds")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "m" / "records.jsonl"));
  r = kt::run_kvsweep(
      {"merge", (dir / "s0").string(), (dir / "s1").string(), "-o", (dir / "m2").string(), "--allow-build-change"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto manifest = kt::read_manifest(dir / "m2");
  EXPECT_EQ(manifest["build_change_allowed"], true);
  EXPECT_THAT(manifest["merged_from"][1]["server_build"].get<std::string>(), HasSubstr("0.0.1 (build 9"));
}

TEST(ResumeMergeRefusals, AResumeWithoutItsManifestRefusesAnotherConfigsRecords) {
  kt::TempDir dir;
  const auto run = dir / "run";
  ASSERT_EQ(kt::run_kvsweep({"run", kt::write_config(dir, one_cell(), "a.json").string(), "-o", run.string()}).exit_code, 0);
  std::filesystem::remove(run / "manifest.json");
  // Another config: other prompts, so other items.
  auto other = one_cell();
  other["probes"][0]["prompts"] = {"Three", "Four"};
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, other, "b.json").string(), "--resume", run.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the run holds records but no readable manifest.json")) << r.output;
  // Nor the config it was made with: without the manifest, that cannot be told.
  r = kt::run_kvsweep({"run", (dir / "a.json").string(), "--resume", run.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(ResumeMergeRefusals, ANewRunIntoADirectoryOfAnEarlierRunWithoutRecordsIsRefused) {
  kt::TempDir dir;
  const auto run = dir / "run";
  // An earlier run whose only cell failed to start (its "server" exits at once): a manifest and a
  // journal, no records.
  auto broken = one_cell();
  broken["server"]["binary"] = "/bin/false";
  broken["models"][0]["name"] = "other";
  auto first = kt::run_kvsweep({"run", kt::write_config(dir, broken, "a.json").string(), "-o", run.string()});
  ASSERT_TRUE(std::filesystem::exists(run / "manifest.json")) << first.output;
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, one_cell(), "b.json").string(), "-o", run.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("already holds a run (manifest.json)")) << r.output;
}

TEST(ResumeMergeRefusals, AServerBinaryThatIsADirectoryFailsTheDryRun) {
  kt::TempDir dir;
  std::filesystem::create_directories(dir / "bin" / "llama-server");
  auto cfg = one_cell();
  cfg["server"]["binary"] = (dir / "bin" / "llama-server").string();
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "--dry-run"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("is a directory")) << r.output;
  std::ofstream(dir / "not-exec") << "#!/bin/sh\n";
  cfg["server"]["binary"] = (dir / "not-exec").string();
  r = kt::run_kvsweep({"run", kt::write_config(dir, cfg, "b.json").string(), "--dry-run"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("is not executable")) << r.output;
}

TEST(ResumeMergeRefusals, AMergeKilledMidwayCanBeRunAgainWithTheSameCommand) {
  kt::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(run_two_shards(dir));
  const std::vector<std::string> merge = {"merge", (dir / "s0").string(), (dir / "s1").string(), "-o",
                                          (dir / "m").string()};
  // Killed midway: files may grow to half of one shard's records, then SIGXFSZ (default action: the
  // kernel kills the process) stops the merge inside its records.
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = std::filesystem::file_size(dir / "s0" / "records.jsonl") / 2;
  ::setrlimit(RLIMIT_FSIZE, &small);
  auto killed = kt::run_kvsweep(merge);  // the child inherits the limit
  ::setrlimit(RLIMIT_FSIZE, &old);
  ASSERT_EQ(killed.exit_code, 128 + SIGXFSZ) << killed.output;

  // The same command again: a whole merged run.
  auto again = kt::run_kvsweep(merge);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(kt::read_manifest(dir / "m")["status"], "complete");
  EXPECT_EQ(kt::read_records(dir / "m").size(), 4u);  // two items of each of the two cells
  EXPECT_FALSE(std::filesystem::exists(dir / ".m.merging"));
  // A merge into a directory that holds something says what to do, naming no command merge lacks.
  auto into_full = kt::run_kvsweep(merge);
  EXPECT_EQ(into_full.exit_code, 2) << into_full.output;
  EXPECT_THAT(into_full.output, HasSubstr("already exists and is not an empty directory")) << into_full.output;
  EXPECT_THAT(into_full.output, ::testing::Not(HasSubstr("--resume"))) << into_full.output;
}
