// Files kvsweep writes are never written through a link planted for them: the
// dry run's --measure works in a directory nobody could name beforehand, and a run directory's
// report/ that is a link is refused before the report's renames replace the target's files.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/cli/dry_run.hpp"
#include "kvsweep/cli/write_report.hpp"
#include "kvsweep/core/error.hpp"
#include "report_fixture.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;

namespace fs = std::filesystem;
namespace rt = kvsweep::report::testing;

TEST(FilesNotThroughLinks, MeasureWorksInAFreshPrivateDirectoryNotThePredictableOne) {
  // What an attacker could plant: the old name, $TMPDIR/kvsweep-measure-<pid>, a link to their run.
  const fs::path planted = fs::temp_directory_path() / ("kvsweep-measure-" + std::to_string(::getpid()));
  const fs::path target = kvsweep::testing::temp_file("-planted");
  fs::remove_all(target);
  fs::create_directories(target);
  fs::remove_all(planted);
  fs::create_directory_symlink(target, planted);
  const fs::path a = kvsweep::cli::measure_directory();
  const fs::path b = kvsweep::cli::measure_directory();
  EXPECT_NE(a, planted);
  EXPECT_NE(a, b);
  for (const auto& dir : {a, b}) {
    EXPECT_FALSE(fs::is_symlink(dir)) << dir;
    EXPECT_TRUE(fs::is_directory(dir)) << dir;
    struct stat st {};
    ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u) << dir;
    EXPECT_EQ(st.st_uid, ::getuid());
    fs::remove_all(dir);
  }
  fs::remove(planted);
  fs::remove_all(target);
}

TEST(FilesNotThroughLinks, AReportFolderThatIsASymlinkIsRefusedAndItsTargetKept) {
  rt::TempDir dir("linked-report");
  rt::write_fixture_run(dir.path());
  const fs::path target = kvsweep::testing::temp_file("-victim");
  fs::remove_all(target);
  fs::create_directories(target);
  std::ofstream(target / "report.md") << "the victim's own file\n";
  fs::remove_all(dir.path() / "report");
  fs::create_directory_symlink(target, dir.path() / "report");
  try {
    kvsweep::cli::write_report(dir.path(), {kvsweep::report::Format::md});
    ADD_FAILURE() << "a linked report/ was written through";
  } catch (const kvsweep::core::FatalError& e) {
    EXPECT_THAT(e.what(), HasSubstr((dir.path() / "report").string() + " is a symbolic link"));
  }
  EXPECT_EQ(kvsweep::testing::slurp(target / "report.md"), "the victim's own file\n");
  fs::remove_all(target);
}
