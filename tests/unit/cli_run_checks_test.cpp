// What a resume reads of the run it continues (cli::manifest_to_resume): the store's Manifest, its
// journal folded in, read strictly once — a field a check reads that holds another type is refused
// naming it (read as absent it would switch its check off), and so is a journal line of another type.

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/cli/run_checks.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/sweep/store/run_store.hpp"
#include "temp_file.hpp"

namespace kvsweep::cli {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

json manifest_json() {
  return {{"schema_version", 1},
          {"kind", "kvsweep-run"},
          {"config_hash", "abc"},
          {"config_file", "/c/demo.json"},
          {"status", "interrupted"},
          {"shard", {{"index", 1}, {"count", 3}}},
          {"server", {{"backend", "llama-server"}, {"version", "1"}}},
          {"models", {{{"name", "tiny"}, {"path", "/m/tiny.gguf"}, {"size", 3}, {"sha256", "aaa"}}}},
          {"cells", {{{"model", "tiny"}, {"type_k", "f16"}, {"type_v", "f16"}, {"outcome", "ok"}}}}};
}

/// A run directory holding `manifest` as its manifest.json and `journal` as its cells.jsonl.
std::filesystem::path run_dir(const json& manifest, const std::vector<json>& journal = {}) {
  const auto dir = kvsweep::testing::temp_file("-run");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "manifest.json") << manifest.dump(2) << "\n";
  std::ofstream cells(dir / "cells.jsonl");
  for (const auto& line : journal) cells << line.dump() << "\n";
  return dir;
}

/// manifest_to_resume's refusal, "" when it did not refuse.
std::string refusal(const std::filesystem::path& dir, bool have_config = true) {
  try {
    manifest_to_resume(dir.string(), have_config);
  } catch (const core::FatalError& e) {
    return e.message;
  }
  return "";
}

TEST(ManifestToResume, ReadsTheTypedManifestWithTheCellsItsJournalHoldsFoldedIn) {
  // A crash between the journal's append and the manifest's rename: q8_0 is only in the journal.
  const auto dir = run_dir(manifest_json(), {{{"model", "tiny"}, {"type_k", "q8_0"}, {"type_v", "q8_0"}, {"outcome", "wedged"}}});
  const auto m = manifest_to_resume(dir.string(), false);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->config_file, "/c/demo.json");
  ASSERT_TRUE(m->shard);
  EXPECT_EQ(m->shard->index, 1);
  EXPECT_EQ(m->shard->count, 3);
  ASSERT_EQ(m->cell_list().size(), 2u);
  EXPECT_EQ(m->cell_list()[1].type_k, "q8_0");
  EXPECT_EQ(m->cell_list()[1].outcome_text(), "wedged");
  std::filesystem::remove_all(dir);
}

TEST(ManifestToResume, AFieldTheChecksReadOfAnotherTypeIsRefusedNamingIt) {
  const std::vector<std::pair<std::string, json>> wrong = {
      {"config_file", 3},
      {"shard", "1/3"},
      {"shard", {{"index", "1"}, {"count", 3}}},
      {"config_hash", 7},
      {"server_env", {{"LLAMA_ARG_THREADS", 4}}},
      {"models", json::object()},
  };
  for (const auto& [field, value] : wrong) {
    json m = manifest_json();
    m[field] = value;
    const auto dir = run_dir(m);
    const std::string why = refusal(dir);
    EXPECT_THAT(why, HasSubstr("manifest.json: " + field)) << value.dump();
    EXPECT_THAT(why, HasSubstr("start a new run with -o NEW_DIR")) << why;
    std::filesystem::remove_all(dir);
  }
}

TEST(ManifestToResume, AJournalLineOfAnotherTypeIsRefusedNamingTheFileAndLine) {
  const auto dir = run_dir(manifest_json(), {{{"model", "tiny"}, {"type_k", "q8_0"}, {"type_v", "q8_0"}, {"outcome", 3}}});
  const std::string why = refusal(dir);
  EXPECT_THAT(why, HasSubstr((dir / "cells.jsonl").string() + ": line 1: outcome: got number"));
  std::filesystem::remove_all(dir);
}

TEST(ManifestToResume, ARunWithNeitherManifestNorRecordsStartsAfreshOnlyWithAConfig) {
  const auto dir = kvsweep::testing::temp_file("-empty");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(manifest_to_resume(dir.string(), true));
  EXPECT_THAT(refusal(dir, /*have_config=*/false), HasSubstr("has no manifest.json"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kvsweep::cli
