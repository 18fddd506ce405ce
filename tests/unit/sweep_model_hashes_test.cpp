// A run's model identity: each model file's sha256, by model name,
// for every backend that runs a file (a GGUF Ollama imports too) and for the embedder; a different
// file of the same size is a change, an unchanged one is not.

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/sweep/store/run_identity.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;

namespace {

using namespace kvsweep;

config::Config one_model(const std::filesystem::path& path, const std::string& backend = "llama-server") {
  config::Config c;
  c.server.backend = backend;
  c.models.push_back({"tiny", path.string()});
  return c;
}

/// The identity a manifest holding `models` records (config_hash is required).
sweep::RunIdentity recorded(const nlohmann::json& models) {
  auto id = sweep::read_identity(*sweep::Manifest::from_json(nlohmann::json{{"config_hash", "h"}, {"models", models}}));
  EXPECT_TRUE(id) << id.error().message;
  return id.value_or(sweep::RunIdentity{});
}

sweep::RunIdentity with_models(std::vector<sweep::ModelHash> models) {
  sweep::RunIdentity id;
  id.config_hash = "h";
  id.models = std::move(models);
  return id;
}

}  // namespace

TEST(ModelHashes, AFileRewrittenAtTheSameSizeIsAChangeNamingBothHashes) {
  const auto path = kvsweep::testing::temp_file(".gguf");
  std::ofstream(path) << "weights one";
  const auto config = one_model(path);
  auto then = sweep::hash_models(config);
  ASSERT_TRUE(then) << then.error().message;
  ASSERT_EQ(then->size(), 1u);
  const nlohmann::json models = sweep::models_json(*then);
  EXPECT_EQ(models[0]["size"], 11);
  EXPECT_TRUE(sweep::check_identity(recorded(models), with_models(*then), "then", "now").empty());

  std::ofstream(path) << "weights two";  // the same size
  auto now = sweep::hash_models(config);
  ASSERT_TRUE(now) << now.error().message;
  const auto changes = sweep::check_identity(recorded(models), with_models(*now), "then", "now");
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].part, sweep::IdentityPart::model);
  EXPECT_THAT(changes[0].line, HasSubstr("model 'tiny'")) << changes[0].line;
  EXPECT_THAT(changes[0].line, HasSubstr((*then)[0].sha256 + " then, sha256 " + (*now)[0].sha256 + " now"));
  // A manifest that recorded no model of that name (a run that grows by a model) has nothing to compare.
  EXPECT_TRUE(sweep::check_identity(recorded({{{"name", "other"}, {"path", "/x"}}}), with_models(*now), "a", "b").empty());
  std::filesystem::remove(path);
}

TEST(ModelHashes, AGgufOllamaImportsIsHashedSoAReplacedOneIsAChange) {
  const auto path = kvsweep::testing::temp_file(".gguf");
  std::ofstream(path) << "weights one";
  const auto config = one_model(path, "ollama");
  auto then = sweep::hash_models(config);
  ASSERT_TRUE(then) << then.error().message;
  ASSERT_TRUE((*then)[0].is_file);
  std::ofstream(path) << "weights two";
  auto now = sweep::hash_models(config);
  ASSERT_TRUE(now) << now.error().message;
  EXPECT_EQ(sweep::check_identity(recorded(sweep::models_json(*then)), with_models(*now), "then", "now").size(), 1u);
  // An Ollama tag is a name, not a file.
  auto tag = sweep::hash_models(one_model("qwen3:8b", "ollama"));
  ASSERT_TRUE(tag);
  EXPECT_FALSE((*tag)[0].is_file);
  std::filesystem::remove(path);
}

TEST(ModelHashes, AReplacedEmbedderModelIsAChangeNamingBothHashes) {
  const auto path = kvsweep::testing::temp_file(".gguf");
  std::ofstream(path) << "embedder one";
  config::Config config = one_model("/absent.gguf");
  config.embedder = config::EmbedderConfig{};
  config.embedder->model = path.string();
  auto then = sweep::hash_embedder(config);
  ASSERT_TRUE(then) << then.error().message;
  ASSERT_FALSE(then->empty());
  auto was = sweep::read_identity(
      *sweep::Manifest::from_json(nlohmann::json{{"config_hash", "h"}, {"embedder", {{"model", path.string()}, {"sha256", *then}}}}));
  ASSERT_TRUE(was) << was.error().message;
  EXPECT_EQ(was->embedder_sha256, *then);

  std::ofstream(path) << "embedder two";
  auto now_sha = sweep::hash_embedder(config);
  ASSERT_TRUE(now_sha);
  sweep::RunIdentity now;
  now.config_hash = "h";
  now.embedder_sha256 = *now_sha;
  const auto changes = sweep::check_identity(*was, now, "then", "now");
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].part, sweep::IdentityPart::embedder);
  EXPECT_THAT(changes[0].line, HasSubstr(*then + " then, sha256 " + *now_sha + " now")) << changes[0].line;
  std::filesystem::remove(path);
}
