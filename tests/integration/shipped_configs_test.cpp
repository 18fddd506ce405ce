// Every config under configs/ passes its own plan: after the commands its comments give (a copy
// model written with `build/kvsweep tiny-model … -o build/models/X.gguf`), `kvsweep run CONFIG
// --dry-run` exits 0 without a context warning — or, for a config written for a model or a server
// only its user has (an absolute model path such as /models/Qwen3-8B-Q4_K_M.gguf, another server's
// binary), fails naming exactly that. The configs run in a copy of the tree whose build/models holds
// the models scripts/setup and the demo put there.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kt = kvsweep::testing;

namespace {

// The `build/kvsweep tiny-model ARGS -o build/models/NAME` commands in a config's comments.
std::vector<std::pair<std::vector<std::string>, std::string>> model_commands(const std::string& text) {
  std::vector<std::pair<std::vector<std::string>, std::string>> out;
  static const std::regex line(R"(build/kvsweep tiny-model ([^\n]*?)-o build/models/(\S+\.gguf))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    std::istringstream args((*it)[1].str());
    std::vector<std::string> argv = {"tiny-model"};
    for (std::string a; args >> a;) argv.push_back(a);
    out.emplace_back(argv, (*it)[2].str());
  }
  return out;
}

// Whether a failed dry run failed only for what the config's user supplies: a model file outside
// build/models, a server other than llama-server and Ollama, or the running server an external config
// attaches to (configs/attach.json: the user starts it; scripts/attach-demo does).
bool needs_the_users_own(const std::string& output) {
  static const std::regex model(R"(models\[\d+\]\.path: '/models/)");
  static const std::regex embedder(R"(embedder\.model: '/models/)");
  if (output.find("nothing answers at") != std::string::npos &&
      output.find("the external backend attaches to a running server") != std::string::npos)
    return true;
  return std::regex_search(output, model) || std::regex_search(output, embedder) ||
         (output.find("binary '") != std::string::npos && output.find("not found") != std::string::npos &&
          output.find("'llama-server' not found") == std::string::npos &&
          output.find("'ollama' not found") == std::string::npos);
}

}  // namespace

TEST(ShippedConfigs, EveryConfigPassesItsOwnDryRunAfterTheCommandsItsCommentsGive) {
  kt::ollama_bin_dir();  // telephone-qwen3-ollama.json's dry run asks the real Ollama for its tags
  kt::TempDir tree;
  const std::filesystem::path source = std::filesystem::path(KVSWEEP_SOURCE_DIR) / "configs";
  const auto models = tree / "build" / "models";
  std::filesystem::create_directories(models);
  std::filesystem::create_directories(tree / "configs");
  // What scripts/setup links and the demo writes.
  std::filesystem::create_symlink(kt::smollm2_model(), models / "smollm2.gguf");
  std::filesystem::create_symlink(kt::minilm_model(), models / "minilm.gguf");
  std::filesystem::create_symlink(kt::tiny_model(), models / "tiny.gguf");
  std::filesystem::create_symlink(kt::copy_model(), models / "copy.gguf");
  // The data the configs name beside them (the answer key, telephone's texts), as in the repository.
  std::filesystem::create_directory_symlink(std::filesystem::path(KVSWEEP_SOURCE_DIR) / "data", tree / "data");

  std::size_t passed = 0;
  std::size_t users_own = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source)) {
    const auto& file = entry.path();
    if (file.extension() != ".json" && file.extension() != ".jsonc") continue;
    SCOPED_TRACE(file.filename().string());
    const std::string text = kt::read_text(file);
    for (const auto& [argv, name] : model_commands(text)) {
      if (std::filesystem::exists(models / name)) continue;
      auto with_out = argv;
      with_out.insert(with_out.end(), {"-o", (models / name).string()});
      auto made = kt::run_kvsweep(with_out, 120);
      ASSERT_EQ(made.exit_code, 0) << made.output;
    }
    const auto config = tree / "configs" / file.filename();
    std::ofstream(config) << text;
    auto r = kt::run_kvsweep({"run", config.string(), "--dry-run"}, 300);
    if (r.exit_code == 0) {
      ++passed;
      EXPECT_THAT(r.output, HasSubstr("plan for ")) << r.output;
      EXPECT_THAT(r.output, Not(HasSubstr("is smaller than the corpus"))) << r.output;
      EXPECT_THAT(r.output, Not(HasSubstr("warning: -c"))) << r.output;
    } else {
      ++users_own;
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_TRUE(needs_the_users_own(r.output)) << "fails for something the repository should supply:\n" << r.output;
    }
  }
  // The demo's, the seeds' reproductions on the copy model and the real model's all plan here.
  EXPECT_GE(passed, 12u);
  EXPECT_GE(users_own, 1u);
}
