// One run identity: every input a record depends on is checked wherever runs
// meet, and a manifest that cannot say what made its records is refused, never read as "no check".
// The manifest edits below inject the faults (a field of another type, a field
// removed); the server is the real llama-server on the tiny model (Ollama's: ollama_real_test.cpp).
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

namespace {

nlohmann::json one_cell(int max_tokens = 4) {
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", {"f16"}}, {"v", {"f16"}}, {"reference", "f16/f16"}};
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", max_tokens}, {"prompts", {"One", "Two"}}}};
  return cfg;
}

/// A run of one_cell() in dir/run, and the config of another max_tokens (no record's spec shows it).
std::filesystem::path ran_one_cell(const kt::TempDir& dir) {
  const auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, one_cell(), "a.json").string(), "-o", run.string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  kt::write_config(dir, one_cell(64), "b.json");
  return run;
}

void edit_manifest(const std::filesystem::path& run, const std::function<void(nlohmann::json&)>& edit) {
  auto manifest = kt::read_manifest(run);
  edit(manifest);
  std::ofstream(run / "manifest.json") << manifest.dump(2);
}

/// Appends bytes to `file`: another content, still a readable GGUF.
void append_bytes(const std::filesystem::path& file) { std::ofstream(file, std::ios::app | std::ios::binary) << "0123456789abcdef"; }

}  // namespace

TEST(Identity, AResumeOfRecordsWhoseManifestAndJournalAreGoneIsRefusedSayingHowToStartAfresh) {
  kt::TempDir dir;
  const auto run = ran_one_cell(dir);
  std::filesystem::remove(run / "manifest.json");
  std::filesystem::remove(run / "cells.jsonl");
  for (const char* config : {"b.json", "a.json"}) {
    auto r = kt::run_kvsweep({"run", (dir / config).string(), "--resume", run.string()});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("the run holds records but no readable manifest.json")) << r.output;
    EXPECT_THAT(r.output, HasSubstr("-o NEW_DIR")) << r.output;
  }
}

TEST(Identity, AResumeOfAManifestWithoutConfigHashIsRefused) {
  kt::TempDir dir;
  const auto run = ran_one_cell(dir);
  edit_manifest(run, [](nlohmann::json& m) { m.erase("config_hash"); });
  auto r = kt::run_kvsweep({"run", (dir / "b.json").string(), "--resume", run.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("manifest.json: config_hash: missing")) << r.output;
}

TEST(Identity, AResumeOfAManifestWhoseModelSha256IsNotAStringIsRefusedNamingTheField) {
  kt::TempDir dir;
  const auto run = ran_one_cell(dir);
  edit_manifest(run, [](nlohmann::json& m) { m["models"][0]["sha256"] = 7; });
  auto r = kt::run_kvsweep({"run", (dir / "a.json").string(), "--resume", run.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("manifest.json: models[0].sha256: got number 7, expected a string")) << r.output;
}

TEST(Identity, AResumeAfterTheEmbedderWasReplacedIsRefusedAndItsRecordedSha256Kept) {
  kt::TempDir dir;
  const auto embedder = dir / "embedder.gguf";
  std::filesystem::copy_file(kt::tiny_model(), embedder);
  auto cfg = one_cell();
  cfg["probes"] = {{{"kind", "telephone"}, {"hops", 1}, {"seeds", {42}}, {"max_tokens", 8}, {"mode", "raw"}}};
  cfg["embedder"] = {{"backend", "llama-server"}, {"model", embedder.string()}, {"pooling", "mean"}};
  const auto config = kt::write_config(dir, cfg);
  const auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", config.string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string recorded = kt::read_manifest(run)["embedder"]["sha256"];
  append_bytes(embedder);
  r = kt::run_kvsweep({"run", config.string(), "--resume", run.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the embedder's model changed since the run started")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("sha256 " + recorded + " when the run started")) << r.output;
  EXPECT_EQ(kt::read_manifest(run)["embedder"]["sha256"], recorded);
}

TEST(Identity, ScriptsModelsHandsOutOnlyThePinnedFiles) {
  kt::TempDir dir;
  const auto models = dir / "models";
  std::filesystem::create_directories(models);
  const std::string script = std::string(KVSWEEP_SOURCE_DIR) + "/scripts/models";
  const auto run_script = [&] {
    const std::string cmd = "KVSWEEP_MODELS=" + models.string() + " " + script + " > " + (dir / "out").string() +
                            " 2> " + (dir / "err").string();
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  // The pinned files, as the cache holds them, are handed out.
  const std::string cmd = std::string(KVSWEEP_SOURCE_DIR) + "/scripts/models > " + (dir / "cache").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string cache = kt::read_text(dir / "cache");
  cache.erase(cache.find_last_not_of('\n') + 1);
  for (const char* f : {"smollm2-135m-instruct-q4_1.gguf", "all-minilm-l6-v2-f16.gguf"})
    std::filesystem::copy_file(std::filesystem::path(cache) / f, models / f);
  EXPECT_EQ(run_script(), 0) << kt::read_text(dir / "err");
  // Other bytes, then a truncated file: refused, naming the file.
  append_bytes(models / "all-minilm-l6-v2-f16.gguf");
  EXPECT_EQ(run_script(), 2);
  EXPECT_THAT(kt::read_text(dir / "err"), HasSubstr("all-minilm-l6-v2-f16.gguf has sha256")) << kt::read_text(dir / "err");
  EXPECT_EQ(kt::read_text(dir / "out"), "");
  std::filesystem::resize_file(models / "all-minilm-l6-v2-f16.gguf", 1000);
  EXPECT_EQ(run_script(), 2);
  // Another file under the name.
  std::filesystem::remove(models / "all-minilm-l6-v2-f16.gguf");
  std::filesystem::copy_file(kt::tiny_model(), models / "all-minilm-l6-v2-f16.gguf");
  EXPECT_EQ(run_script(), 2);
}
