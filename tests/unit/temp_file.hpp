#pragma once
/// Test helpers: a per-test temporary file path and whole-file reads.

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace kvsweep::testing {

/// A path in gtest's temp dir named after the running test, so tests never share files.
inline std::filesystem::path temp_file(const std::string& suffix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::filesystem::path(::testing::TempDir()) /
         (std::string("kvsweep_") + info->test_suite_name() + "_" + info->name() + suffix);
}

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string content(static_cast<std::size_t>(std::filesystem::file_size(path)), '\0');
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  return content;
}

}  // namespace kvsweep::testing
