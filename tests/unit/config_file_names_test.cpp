// Two models never share files: names that differ only in characters the file-name rule
// (core::file_safe) replaces are refused when the config is read, naming both and the shared name.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_error.hpp"

using ::testing::HasSubstr;
using json = nlohmann::json;
using kvsweep::testing::config_error;

namespace {

json doc_with_models(const std::vector<std::string>& names) {
  json models = json::array();
  for (const auto& n : names) models.push_back({{"name", n}, {"path", "/models/" + n + ".gguf"}});
  return {{"models", models}, {"grid", {{"k", {"f16", "q8_0"}}, {"v", {"f16"}}}}, {"probes", {{{"kind", "complete"}}}}};
}

}  // namespace

TEST(ConfigFileNames, TwoModelsSharingFilesAreRefusedNamingBothAndTheFileName) {
  const std::string e = config_error(doc_with_models({"m a", "m_a"}));
  EXPECT_THAT(e, HasSubstr("sweep.json: models[1].name: ")) << e;
  EXPECT_THAT(e, HasSubstr("model 'm_a'")) << e;
  EXPECT_THAT(e, HasSubstr("model 'm a'")) << e;
  EXPECT_THAT(e, HasSubstr("\"m_a\"")) << e;
  EXPECT_THAT(e, HasSubstr("server logs, kld base logits and figures")) << e;
  // Non-ASCII letters fold too: "mé" and "m_" (é is two bytes) and "m__".
  EXPECT_THAT(config_error(doc_with_models({"m\xc3\xa9", "m__"})), HasSubstr("share the file name \"m__\""));
  EXPECT_EQ(config_error(doc_with_models({"m-a", "m_a", "m.a", "M_a"})), "");
}

TEST(ConfigFileNames, ModelsAndVariantsThatMeetInACellsFilesAreRefused) {
  // "m" with variant "a-b" and "m-a" with variant "b": both cells are "m-a-b-f16-f16".
  json doc = doc_with_models({"m", "m-a"});
  doc["variants"] = {{{"name", "a-b"}}, {{"name", "b"}}};
  const std::string e = config_error(doc);
  EXPECT_THAT(e, HasSubstr("models[1].name: ")) << e;
  EXPECT_THAT(e, HasSubstr("model 'm-a' (models[1]) with variant 'b'")) << e;
  EXPECT_THAT(e, HasSubstr("model 'm' (models[0]) with variant 'a-b'")) << e;
  EXPECT_THAT(e, HasSubstr("\"m-a-b-f16-f16\"")) << e;

  // "m" with "a_b" and "m_a" with "b": distinct logs, one figure name "m_a_b".
  doc = doc_with_models({"m", "m_a"});
  doc["variants"] = {{{"name", "a_b"}}, {{"name", "b"}}};
  EXPECT_THAT(config_error(doc), HasSubstr("share the file name \"m_a_b\" (figures")) << config_error(doc);

  doc = doc_with_models({"m", "n"});
  doc["variants"] = {{{"name", "a-b"}}, {{"name", "b"}}};
  EXPECT_EQ(config_error(doc), "");
}
