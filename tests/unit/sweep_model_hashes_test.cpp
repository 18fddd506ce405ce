// A resume's model check (issue 31, item 1): the manifest's sha256 against the file's now, by
// model name; a different file of the same size is a change, an unchanged one is not.

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/sweep/store/model_hashes.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;

namespace {

using namespace kvsweep;

config::Config one_model(const std::filesystem::path& path) {
  config::Config c;
  c.server.backend = "llama-server";
  c.models.push_back({"tiny", path.string()});
  return c;
}

}  // namespace

TEST(ModelHashes, AFileRewrittenAtTheSameSizeIsAChangeNamingBothHashes) {
  const auto path = kvsweep::testing::temp_file(".gguf");
  std::ofstream(path) << "weights one";
  const auto config = one_model(path);
  auto then = sweep::hash_models(config);
  ASSERT_TRUE(then) << then.error().message;
  ASSERT_EQ(then->size(), 1u);
  const nlohmann::json manifest = {{"models", sweep::models_json(*then)}};
  EXPECT_EQ(manifest["models"][0]["size"], 11);
  EXPECT_EQ(sweep::changed_models(manifest, *then), "");

  std::ofstream(path) << "weights two";  // the same size
  auto now = sweep::hash_models(config);
  ASSERT_TRUE(now) << now.error().message;
  const std::string changed = sweep::changed_models(manifest, *now);
  EXPECT_THAT(changed, HasSubstr("model 'tiny'")) << changed;
  EXPECT_THAT(changed, HasSubstr((*then)[0].sha256 + " then, " + (*now)[0].sha256 + " now")) << changed;
  // A manifest that recorded no hash (another backend, an old run) has nothing to compare.
  EXPECT_EQ(sweep::changed_models({{"models", {{{"name", "tiny"}, {"path", path.string()}}}}}, *now), "");
  std::filesystem::remove(path);
}
