// index.html opened in headless Chromium: every figure is an inline SVG the browser parsed, nothing
// logs a script error, and a screenshot is kept in the test's output directory
// (build/tests/output/html/index.png) for a person to look at.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

namespace {

/// Runs a shell command, returning its exit status and its stdout and stderr.
std::pair<int, std::string> shell(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(Html, IndexRendersEveryFigureInChromiumWithoutScriptErrors) {
  const auto [found, where] = shell("command -v chromium");
  ASSERT_EQ(found, 0) << "chromium is not installed: run scripts/setup (it installs Debian's chromium)";

  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16", "q4_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto rep = kt::run_kvsweep({"report", run.string(), "--format", "all"});
  ASSERT_EQ(rep.exit_code, 0) << rep.output;

  std::size_t svg_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(run / "report")) svg_files += e.path().extension() == ".svg";
  ASSERT_GT(svg_files, 0u);

  const auto out_dir = std::filesystem::current_path() / "output" / "html";
  std::filesystem::create_directories(out_dir);
  const std::string page = "file://" + (run / "report" / "index.html").string();
  const std::string chromium = "chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
                               "--user-data-dir=" + (dir / "profile").string() + " --enable-logging=stderr --v=0 ";
  const auto [dom_status, dom] = shell(chromium + "--dump-dom '" + page + "'");
  ASSERT_EQ(dom_status, 0) << dom;
  // Parsed as SVG by the browser (an inline SVG that failed to parse would not be an <svg> element
  // with its <title>), one per figure file, and the trade-off figure among them.
  EXPECT_EQ(count(dom, "<figure"), svg_files) << dom.substr(0, 2000);
  EXPECT_EQ(count(dom, "<svg"), svg_files);
  EXPECT_THAT(dom, HasSubstr("vs KV MiB"));
  EXPECT_THAT(dom, HasSubstr("<h2 id=\"Cost\">Cost</h2>"));
  const std::regex script_error("CONSOLE.*(Error|Uncaught)|Uncaught [A-Za-z]*Error");
  EXPECT_FALSE(std::regex_search(dom, script_error)) << dom.substr(0, 2000);

  const auto png = out_dir / "index.png";
  std::filesystem::remove(png);
  const auto [shot_status, shot] =
      shell(chromium + "--window-size=1280,6000 --screenshot=" + png.string() + " '" + page + "'");
  ASSERT_EQ(shot_status, 0) << shot;
  EXPECT_FALSE(std::regex_search(shot, script_error)) << shot;
  ASSERT_TRUE(std::filesystem::exists(png)) << shot;
  EXPECT_GT(std::filesystem::file_size(png), 10000u);
}
