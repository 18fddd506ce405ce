// Two kvsweeps on one run directory: the second refuses at once, naming the first's pid. A line
// in the middle of records.jsonl that does not parse stops --resume, report and merge with the
// file and the line (only a torn last line is repaired).

#include <signal.h>

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

TEST(Collisions, ASecondRunOnTheSameDirectoryIsRefusedWithTheFirstsPidAndABadMiddleLineStopsEveryReader) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  nlohmann::json prompts = nlohmann::json::array();
  for (int i = 0; i < 6; ++i) prompts.push_back("Story " + std::to_string(i) + ":");
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 64}, {"prompts", prompts}}};
  auto run = dir / "run";
  kt::Background first({"run", kt::write_config(dir, cfg).string(), "-o", run.string()}, dir / "first.txt");
  ASSERT_TRUE(kt::wait_until([&] { return kt::count_lines(run / "records.jsonl") >= 4; }, 180)) << first.output();

  auto second = kt::run_kvsweep({"run", "--resume", run.string()});
  EXPECT_EQ(second.exit_code, 2) << second.output;
  EXPECT_THAT(second.output,
              HasSubstr(run.string() + " is in use by another kvsweep (pid " + std::to_string(first.pid()) + ")"))
      << second.output;
  ::kill(first.pid(), SIGINT);
  ASSERT_EQ(first.wait(60), 130) << first.output();

  // Line 2 of the records is damaged: not a torn tail, so nothing may be repaired or skipped.
  std::ifstream in(run / "records.jsonl");
  std::stringstream lines;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) lines << (n == 2 ? line.substr(0, line.size() / 2) : line) << "\n";
  in.close();
  std::ofstream(run / "records.jsonl", std::ios::trunc) << lines.str();
  const std::string named = (run / "records.jsonl").string() + ": line 2 is not JSON";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"run", "--resume", run.string()}, {"report", run.string()}, {"recommend", run.string()}, {"merge", run.string(), run.string(), "-o", (dir / "merged").string()}}) {
    auto r = kt::run_kvsweep(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr(named)) << args[0] << ": " << r.output;
  }
  EXPECT_EQ(kt::read_manifest(run)["status"], "interrupted");
}
