// A run's identity read from its manifest: a field of another type is an error
// naming it, never "nothing recorded" (which would switch its check off); config_hash is required.
// And merge compares every part of it across shards: models, server environment.

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/sweep/store/merge.hpp"
#include "kvsweep/sweep/store/run_identity.hpp"
#include "kvsweep/sweep/store/run_store.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;
using json = nlohmann::json;
namespace sweep = kvsweep::sweep;

namespace {

json manifest(const std::string& model_sha, const json& env) {
  return {{"schema_version", 1},  {"kind", "kvsweep-run"}, {"config_hash", "abc"}, {"status", "complete"},
          {"server_env", env},    {"server", {{"backend", "llama-server"}, {"version", "1"}}},
          {"models", {{{"name", "tiny"}, {"path", "/m/tiny.gguf"}, {"size", 3}, {"sha256", model_sha}}}}};
}

/// A run directory holding only `m` as its manifest (no records: the identity is what is checked).
std::filesystem::path run_dir(const std::string& name, const json& m) {
  const auto dir = kvsweep::testing::temp_file("-" + name);
  std::filesystem::remove_all(dir);
  auto store = sweep::RunStore::create(dir);
  EXPECT_TRUE(store) << store.error().message;
  if (store) {
    EXPECT_TRUE(store->write_manifest(*sweep::Manifest::from_json(m)));
  }
  return dir;
}

}  // namespace

TEST(RunIdentity, AModelSha256OfAnotherTypeIsAnErrorNamingTheField) {
  json m = manifest("aaa", json::object());
  m["models"][0]["sha256"] = 42;
  auto id = sweep::read_identity(*sweep::Manifest::from_json(m));
  ASSERT_FALSE(id);
  EXPECT_THAT(id.error().message, HasSubstr("models[0].sha256: got number 42, expected a string"));
}

TEST(RunIdentity, EveryIdentityFieldOfAnotherTypeIsAnErrorNamingIt) {
  const std::vector<std::pair<std::string, json>> broken = {
      {"models", json::object()}, {"embedder", "x"}, {"probes", 3}, {"server_env", json::array()}, {"config_hash", 7}};
  for (const auto& [key, value] : broken) {
    json m = manifest("aaa", json::object());
    m[key] = value;
    auto id = sweep::read_identity(*sweep::Manifest::from_json(m));
    ASSERT_FALSE(id) << key;
    EXPECT_THAT(id.error().message, HasSubstr(key + ": got ")) << key;
  }
  json m = manifest("aaa", json::object());
  m["probes"] = {{{"name", "complete"}, {"inputs", {{{"key", "prompts_file"}, {"path", "/p"}, {"sha256", 1}}}}}};
  auto id = sweep::read_identity(*sweep::Manifest::from_json(m));
  ASSERT_FALSE(id);
  EXPECT_THAT(id.error().message, HasSubstr("probes[0].inputs[0].sha256: got number"));
  m = manifest("aaa", {{"LLAMA_ARG_X", 1}});
  EXPECT_FALSE(sweep::read_identity(*sweep::Manifest::from_json(m)));
}

TEST(RunIdentity, AManifestWithoutConfigHashIsAnError) {
  json m = manifest("aaa", json::object());
  m.erase("config_hash");
  auto id = sweep::read_identity(*sweep::Manifest::from_json(m));
  ASSERT_FALSE(id);
  EXPECT_THAT(id.error().message, HasSubstr("config_hash: missing"));
}

TEST(RunIdentity, MergingShardsOfDifferentModelFilesIsRefusedNamingBothHashes) {
  const auto a = run_dir("a", manifest("aaa", json::object()));
  const auto b = run_dir("b", manifest("bbb", json::object()));
  const auto out = kvsweep::testing::temp_file("-merged");
  std::filesystem::remove_all(out);
  auto merged = sweep::merge_runs({a, b}, out);
  ASSERT_FALSE(merged);
  EXPECT_THAT(merged.error().message, HasSubstr("refusing to merge runs of different model files"));
  EXPECT_THAT(merged.error().message, HasSubstr("sha256 aaa in " + a.string() + ", sha256 bbb in " + b.string()));
  EXPECT_FALSE(std::filesystem::exists(out / "manifest.json"));
}

TEST(RunIdentity, MergingShardsWhoseServersRanWithAnotherEnvironmentIsRefused) {
  const auto a = run_dir("a", manifest("aaa", {{"LLAMA_ATTN_ROT_DISABLE", "1"}, {"CUDA_VISIBLE_DEVICES", "0"}}));
  // Device selection differs between nodes: not a change; the rotation is.
  const auto b = run_dir("b", manifest("aaa", {{"CUDA_VISIBLE_DEVICES", "1"}}));
  const auto out = kvsweep::testing::temp_file("-merged");
  std::filesystem::remove_all(out);
  auto merged = sweep::merge_runs({a, b}, out);
  ASSERT_FALSE(merged);
  EXPECT_THAT(merged.error().message, HasSubstr("ran with another environment"));
  EXPECT_THAT(merged.error().message, HasSubstr("LLAMA_ATTN_ROT_DISABLE: 1 → unset"));
  EXPECT_THAT(merged.error().message, ::testing::Not(HasSubstr("CUDA_VISIBLE_DEVICES")));
  // The same environment merges.
  const auto c = run_dir("c", manifest("aaa", {{"LLAMA_ATTN_ROT_DISABLE", "1"}, {"CUDA_VISIBLE_DEVICES", "1"}}));
  EXPECT_TRUE(sweep::merge_runs({a, c}, out)) << "merge of one environment refused";
}
