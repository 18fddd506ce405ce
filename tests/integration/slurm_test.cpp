// scripts/slurm/ for real: a 3-shard job array and the merge job on a single-node Slurm on
// this host (scripts/slurm/local-cluster selftest). Skipped, saying why, where it cannot run.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

TEST(SlurmLocal, ThreeShardArrayAndMergeJobGiveTheWholeGrid) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (slurmd and munged run as root here)";
  const auto on_path = [](const std::string& tool) {
    const char* path = std::getenv("PATH");
    std::string dirs = std::string(path ? path : "") + ":/usr/sbin:/sbin";
    for (std::size_t start = 0, end; start <= dirs.size(); start = end + 1) {
      end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      if (::access((dirs.substr(start, end - start) + "/" + tool).c_str(), X_OK) == 0) return true;
    }
    return false;
  };
  for (const char* tool : {"munged", "slurmctld", "slurmd", "sbatch"}) {
    if (!on_path(tool)) GTEST_SKIP() << tool << " not installed (apt-get install slurm-wlm munge)";
  }
  // The script is run from an argv (no shell), its environment set in the child.
  const std::string script = std::string(KVSWEEP_SOURCE_DIR) + "/scripts/slurm/local-cluster";
  int pipe_fd[2];
  ASSERT_EQ(::pipe(pipe_fd), 0);
  const std::string llama_bin = kt::llama_bin_dir();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(pipe_fd[1], 1);
    ::dup2(pipe_fd[1], 2);
    ::close(pipe_fd[0]);
    ::setenv("KVSWEEP", KVSWEEP_BINARY, 1);
    ::setenv("KVSWEEP_LLAMA_BIN", llama_bin.c_str(), 1);
    ::execl(script.c_str(), script.c_str(), "selftest", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(pipe_fd[1]);
  std::string output;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fd[0], buf, sizeof buf)) > 0;) output.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << output;
  ASSERT_EQ(WEXITSTATUS(status), 0) << output;
  // The script checked the merged run; make sure it says what it checked. Slurm numbers jobs as it
  // pleases (an array's tasks take ids of their own once the controller splits them, sooner or later
  // depending on the machine's load), so the merge job's id is read from the script's own
  // "submitted array A (3 shards) and merge M;" line, never assumed.
  const std::string marker = " and merge ";
  const auto at = output.find(marker);
  ASSERT_NE(at, std::string::npos) << "no 'and merge <id>' in the output:\n" << output;
  const auto id_begin = at + marker.size();
  const auto id_end = output.find(';', id_begin);
  ASSERT_NE(id_end, std::string::npos) << output;
  const std::string merge_id = output.substr(id_begin, id_end - id_begin);
  ASSERT_FALSE(merge_id.empty()) << output;
  ASSERT_EQ(merge_id.find_first_not_of("0123456789"), std::string::npos) << "merge id '" << merge_id << "'";
  EXPECT_THAT(output, HasSubstr("merge job " + merge_id + ": COMPLETED")) << output;
  EXPECT_THAT(output, HasSubstr("merged run ok: 9 cells, 36 records")) << output;
}
