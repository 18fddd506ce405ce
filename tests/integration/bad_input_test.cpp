// Bad input is refused before anything starts, and a run in which nothing worked says so:
// a model path that is missing, not a file or not GGUF exits 2 naming models[i].path with no
// run directory created; a sweep where every cell failed exits 1 and each cell's message shows
// the server's own error lines, not its start-up log.

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kt = kvsweep::testing;

TEST(BadInput, AModelThatIsMissingNotAFileOrNotGgufExits2BeforeAnythingStarts) {
  kt::TempDir dir;
  std::ofstream(dir / "notes.gguf") << "these are notes, not weights\n";
  std::filesystem::create_directory(dir / "folder.gguf");
  // The tiny model cut short, as an interrupted download leaves it: in its tensors, and in its header.
  const std::string whole = kt::read_text(kt::tiny_model());
  std::ofstream(dir / "half.gguf", std::ios::binary) << whole.substr(0, whole.size() / 2);
  std::ofstream(dir / "header.gguf", std::ios::binary) << whole.substr(0, 100);
  const std::pair<std::string, std::string> cases[] = {
      {(dir / "absent.gguf").string(), "no such file"},
      {(dir / "folder.gguf").string(), "not a regular file"},
      {(dir / "notes.gguf").string(), "not a GGUF file"},
      {(dir / "half.gguf").string(), "truncated: " + std::to_string(whole.size() / 2) + " bytes, but its tensor "},
      {(dir / "header.gguf").string(), "truncated: its header ends early"},
  };
  for (const auto& [path, why] : cases) {
    auto cfg = kt::base_config(kt::tiny_model());
    cfg["models"].push_back({{"name", "bad"}, {"path", path}});
    auto file = kt::write_config(dir, cfg);
    auto run = dir / "run";
    for (const std::string mode : {"", "--dry-run"}) {
      std::vector<std::string> args = {"run", file.string(), "-o", run.string()};
      if (!mode.empty()) args.push_back(mode);
      auto r = kt::run_kvsweep(args);
      EXPECT_EQ(r.exit_code, 2) << mode << " " << r.output;
      EXPECT_THAT(r.output, HasSubstr("models[1].path: '" + path + "': " + why)) << r.output;
      EXPECT_FALSE(std::filesystem::exists(run)) << path;
    }
  }
}

TEST(BadInput, ARunWhereNoCellWorkedExits1WithTheServersErrorLines) {
  kt::TempDir dir;
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"]["k"] = {"f16", "q8_0"};
  cfg["grid"]["v"] = {"f16"};
  cfg["server"]["args"] = {"-fa", "on", "--no-such-flag"};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no cell produced an ok record")) << r.output;
  auto manifest = kt::read_manifest(run);
  ASSERT_EQ(manifest["cells"].size(), 2u);
  for (const auto& c : manifest["cells"]) {
    EXPECT_EQ(c["outcome"], "load_failed") << c.dump();
    const std::string msg = c["message"];
    EXPECT_THAT(msg, HasSubstr("error: invalid argument: --no-such-flag")) << msg;
    // The message's first line says what happened; the rest is the server's last lines (it
    // printed only two here), never its whole log.
    EXPECT_EQ(msg.rfind("llama-server exited with code 1 before it was ready\n", 0), 0u) << msg;
    EXPECT_LE(std::count(msg.begin(), msg.end(), '\n'), 4) << msg;
  }
}

TEST(BadInput, AdaptiveFlagsAreOneOrTheOtherAndTheDryRunSaysAdaptive) {
  kt::TempDir dir;
  const auto file = kt::write_config(dir, kt::base_config(kt::tiny_model()));
  auto both = kt::run_kvsweep({"run", file.string(), "--dry-run", "--adaptive", "--no-adaptive"});
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_THAT(both.output, HasSubstr("--adaptive and --no-adaptive: give one")) << both.output;
  auto plan = kt::run_kvsweep({"run", file.string(), "--dry-run", "--adaptive"});
  EXPECT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_THAT(plan.output, HasSubstr("adaptive: at most that many")) << plan.output;
  auto plain = kt::run_kvsweep({"run", file.string(), "--dry-run"});
  EXPECT_THAT(plain.output, Not(HasSubstr("adaptive:"))) << plain.output;
}
