// Every config the repository ships (configs/*.json and the annotated example.jsonc: the demo's, the
// variant and adaptive grids, the seeds' reproductions) reads without error, so a key renamed in the
// reader cannot break one unseen.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "kvsweep/config/config.hpp"
#include "kvsweep/core/error.hpp"

namespace {

TEST(ShippedConfigs, EveryConfigInTheRepositoryReads) {
  const std::filesystem::path dir = std::filesystem::path(KVSWEEP_TEST_DATA) / ".." / ".." / "configs";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json" || e.path().extension() == ".jsonc") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 3u) << dir;
  bool saw_adaptive = false;
  for (const auto& f : files) {
    try {
      const kvsweep::config::Config c = kvsweep::config::load(f);
      EXPECT_FALSE(c.models.empty()) << f;
      if (f.filename() == "adaptive.json") {
        saw_adaptive = true;
        EXPECT_TRUE(c.sweep.adaptive.enabled);
        EXPECT_EQ(c.sweep.adaptive.futility, 0.1);
      }
    } catch (const kvsweep::core::FatalError& e) {
      ADD_FAILURE() << f << ": " << e.message;
    }
  }
  EXPECT_TRUE(saw_adaptive);
}

}  // namespace
