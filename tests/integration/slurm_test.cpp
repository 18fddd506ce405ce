// scripts/slurm/ for real: a 3-shard job array and the merge job on a single-node Slurm on
// this host (scripts/slurm/local-cluster selftest). Skipped, saying why, where it cannot run.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "harness.hpp"

namespace kt = kvsweep::testing;

TEST(SlurmLocal, ThreeShardArrayAndMergeJobGiveTheWholeGrid) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (slurmd and munged run as root here)";
  for (const char* tool : {"munged", "slurmctld", "slurmd", "sbatch"}) {
    if (std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) != 0)
      GTEST_SKIP() << tool << " not installed (apt-get install slurm-wlm munge)";
  }
  std::string cmd = "KVSWEEP='" + std::string(KVSWEEP_BINARY) + "' KVSWEEP_LLAMA_BIN='" + kt::llama_bin_dir() + "' '" +
                    std::string(KVSWEEP_SOURCE_DIR) + "/scripts/slurm/local-cluster' selftest 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) output.append(buf, n);
  int status = ::pclose(p);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << output;
  ASSERT_EQ(WEXITSTATUS(status), 0) << output;
  // The script checked the merged run; make sure it says what it checked.
  EXPECT_NE(output.find("merge job 2: COMPLETED"), std::string::npos) << output;
  EXPECT_NE(output.find("merged run ok: 9 cells, 36 records"), std::string::npos) << output;
}
