// The Ollama backend against the real Ollama: v0.30.1 built by scripts/ollama (`go install
// github.com/ollama/ollama@v0.30.1`), which launches the llama-server scripts/llama-cpp builds.
// Each test gives its cells a model store of its own (server.env.OLLAMA_MODELS), so the GGUF
// import runs in every test and no two tests write one store at once.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t pos = 0; (pos = text.find(needle, pos)) != std::string::npos; pos += needle.size()) ++n;
  return n;
}

// The tiny model as a GGUF path under backend ollama: kvsweep imports it into `store`.
nlohmann::json real_ollama_config(const kt::TempDir& dir, const std::vector<std::string>& types) {
  return {
      {"name", "ollama-real"},
      {"server",
       {{"backend", "ollama"},
        {"ctx", 2048},
        {"env", {{"OLLAMA_MODELS", (dir / "store").string()}}},
        {"ready_timeout_s", kt::scaled_s(120)},
        {"request_timeout_s", kt::scaled_s(120)},
        {"stop_grace_s", 5}}},
      {"models", {{{"name", "tiny"}, {"path", kt::tiny_model().string()}}}},
      {"grid", {{"k", types}, {"v", "tied"}, {"reference", types.front() + "/" + types.front()}, {"order", "as-listed"}}},
      {"probes", {{{"kind", "complete"}, {"max_tokens", 16}}}},
  };
}

/// Flips one byte near the end of `file` (its size, and a GGUF's header, unchanged).
void flip_byte(const std::filesystem::path& file) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-16, std::ios::end);
  const char c = static_cast<char>(f.get());
  f.seekp(-16, std::ios::end);
  f.put(static_cast<char>(c ^ 0x5a));
}

std::map<std::string, nlohmann::json> cells_by_type(const nlohmann::json& manifest) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& c : manifest["cells"]) out[c["type_k"].get<std::string>()] = c;
  return out;
}

}  // namespace

TEST(RealOllama, ThreeCellGridOkWithEachTypeVerifiedFromItsLlamaServerLog) {
  kt::ollama_bin_dir();  // throws, failing the test, when scripts/ollama has not installed it
  kt::TempDir dir;
  auto run = dir / "run";
  auto r = kt::run_kvsweep(
      {"run", kt::write_config(dir, real_ollama_config(dir, {"f16", "q8_0", "q4_0"})).string(), "-o", run.string()}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  auto manifest = kt::read_manifest(run);
  EXPECT_EQ(manifest["status"], "complete");
  EXPECT_EQ(manifest["server"]["backend"], "ollama");
  EXPECT_EQ(manifest["server"]["version"], "0.30.1") << manifest["server"].dump();
  // The llama-server it launched: the one scripts/llama-cpp built (scripts/ollama links it).
  EXPECT_EQ(manifest["server"]["llama_server"],
            std::filesystem::canonical(std::filesystem::path(kt::llama_bin_dir()) / "llama-server").string())
      << manifest["server"].dump();
  auto cells = cells_by_type(manifest);
  ASSERT_EQ(cells.size(), 3u);
  for (const auto& [type, c] : cells) {
    EXPECT_EQ(c["outcome"], "ok") << c.dump();
    // From the llama_kv_cache line Ollama's llama-server logged, not the request echoed back.
    EXPECT_TRUE(c["effective"]["found"].get<bool>()) << c.dump();
    EXPECT_FALSE(c["effective"]["declared"].get<bool>()) << c.dump();
    EXPECT_EQ(c["effective"]["type_k"], type) << c.dump();
    EXPECT_EQ(c["effective"]["type_v"], type) << c.dump();
    EXPECT_EQ(c["effective"]["flash_attn"], "enabled") << c.dump();
  }
  EXPECT_LT(cells["q8_0"]["effective"]["kv_mib"].get<double>(), cells["f16"]["effective"]["kv_mib"].get<double>());
  EXPECT_LT(cells["q4_0"]["effective"]["kv_mib"].get<double>(), cells["q8_0"]["effective"]["kv_mib"].get<double>());

  auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 3u * 4u);
  for (const auto& rec : records) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    EXPECT_FALSE(rec["response"]["content"].get<std::string>().empty()) << rec.dump();
    EXPECT_GT(rec["timings"]["predicted_n"].get<int>(), 0) << rec.dump();
    EXPECT_GT(rec["timings"]["predicted_ms"].get<double>(), 0) << rec.dump();
  }
  // f16 against itself, greedy: the same text as the reference on every item.
  for (const auto& rec : records) {
    if (rec["cell"]["type_k"] == "f16") {
      EXPECT_EQ(rec["metrics"]["match_reference"], 1) << rec.dump();
    }
  }

  // Each cell's log: one `ollama serve`, which started llama-server once with the cell's type for K
  // and V; the GGUF was imported once, by the first cell (the others found the tag in the store).
  std::size_t imports = 0;
  std::set<std::string> launched;
  for (const auto& entry : std::filesystem::directory_iterator(run / "logs")) {
    const std::string log = kt::read_text(entry.path());
    EXPECT_EQ(count(log, "# kvsweep: launching"), 1u) << log;
    EXPECT_EQ(count(log, "msg=\"starting llama-server\""), 1u) << log;
    for (const char* type : {"f16", "q8_0", "q4_0"}) {
      if (log.find(std::string("--cache-type-k ") + type + " --cache-type-v " + type) != std::string::npos)
        launched.insert(type);
    }
    imports += count(log, "\"/api/create\"");
  }
  EXPECT_EQ(launched, (std::set<std::string>{"f16", "q8_0", "q4_0"}));
  EXPECT_EQ(imports, 1u);
}

TEST(RealOllama, MissingTagIsLoadFailedNamingThePullAndTheSweepGoesOn) {
  kt::ollama_bin_dir();
  kt::TempDir dir;
  auto cfg = real_ollama_config(dir, {"f16", "q8_0"});
  cfg["models"].push_back({{"name", "absent"}, {"path", "kvsweep-absent:latest"}});
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto manifest = kt::read_manifest(run);
  ASSERT_EQ(manifest["cells"].size(), 4u);
  for (const auto& c : manifest["cells"]) {
    if (c["model"] == "absent") {
      EXPECT_EQ(c["outcome"], "load_failed") << c.dump();
      EXPECT_THAT(c["message"].get<std::string>(), HasSubstr("ollama pull kvsweep-absent:latest")) << c.dump();
    } else {
      EXPECT_EQ(c["outcome"], "ok") << c.dump();
    }
  }
  for (const auto& rec : kt::read_records(run)) EXPECT_EQ(rec["cell"]["model"], "tiny");
}

TEST(RealOllama, TelephoneWithEmbeddingsFromOllama) {
  kt::ollama_bin_dir();
  kt::TempDir dir;
  auto cfg = real_ollama_config(dir, {"f16", "q8_0"});
  cfg["probes"] = {{{"kind", "telephone"},
                    {"texts", {"The cat sat on the mat and looked at the door."}},
                    {"hops", 2},
                    {"seeds", {1}},
                    {"max_tokens", 24}}};
  // The instrument: all-MiniLM-L6-v2 on its own `ollama serve` (f16), imported like the model.
  cfg["embedder"] = {{"backend", "ollama"}, {"model", kt::minilm_model().string()}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto records = kt::read_records(run);
  ASSERT_EQ(records.size(), 2u);
  for (const auto& rec : records) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    const double drift = rec["metrics"]["final_similarity"].get<double>();
    EXPECT_GT(drift, -1.0) << rec.dump();
    EXPECT_LE(drift, 1.0 + 1e-6) << rec.dump();
  }
  EXPECT_EQ(kt::read_manifest(run)["embedder"]["backend"], "ollama");
}

TEST(RealOllama, DryRunOfTheSeedConfigNamesEveryTagToPull) {
  kt::ollama_bin_dir();
  kt::TempDir dir;
  // Seed 000's config as shipped, with an empty model store of the test's own.
  auto cfg = nlohmann::json::parse(kt::read_text(std::filesystem::path(KVSWEEP_SOURCE_DIR) / "configs" /
                                                 "telephone-qwen3-ollama.json"),
                                   nullptr, true, true);
  cfg["server"]["binary"] = "ollama";  // as shipped: found through KVSWEEP_OLLAMA_BIN
  cfg["server"]["env"] = {{"OLLAMA_MODELS", (dir / "store").string()}};
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "--dry-run"}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("version 0.30.1")) << r.output;
  for (const char* tag : {"qwen3:0.6b", "qwen3:8b", "qwen3-embedding:0.6b"})
    EXPECT_THAT(r.output, HasSubstr(std::string("is missing: ollama pull ") + tag)) << r.output;
  EXPECT_THAT(r.output, HasSubstr("3 tag(s) to pull")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cells (4, in run order)")) << r.output;
}

TEST(RealOllama, AContextOllamaLoweredIsAConfigMismatchNotAQuietlySmallerCell) {
  kt::ollama_bin_dir();
  kt::TempDir dir;
  // A model trained for 1024 tokens: Ollama lowers any num_ctx above that to 1024 without a word to
  // the client ("requested context size too large for model" in its own log only).
  const auto model = dir / "short.gguf";
  auto made = kt::run_kvsweep({"tiny-model", "--context-length", "1024", "--seed", "1", "-o", model.string()}, 120);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  auto cfg = real_ollama_config(dir, {"f16", "q8_0"});
  cfg["models"] = {{{"name", "short"}, {"path", model.string()}}};
  auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()}, 600);
  EXPECT_EQ(r.exit_code, 1) << r.output;  // no cell produced an ok record
  EXPECT_THAT(r.output, HasSubstr("as Ollama does: set server.ctx to at most that")) << r.output;
  const auto manifest = kt::read_manifest(run);
  ASSERT_EQ(manifest["cells"].size(), 2u);
  for (const auto& c : manifest["cells"]) {
    EXPECT_EQ(c["outcome"], "config_mismatch") << c.dump();
    EXPECT_THAT(c["message"].get<std::string>(),
                HasSubstr("requested a context of 2048 tokens, the server allocated 1024"))
        << c.dump();
  }
  EXPECT_TRUE(kt::read_records(run).empty());  // no answer from a cell that is not the one asked for
}

/// A one-cell f16 config on a copy of the tiny model at `model` (the test may change that file), written in `dir`.
std::filesystem::path own_gguf_config(const kt::TempDir& dir, const std::filesystem::path& model) {
  std::filesystem::copy_file(kt::tiny_model(), model);
  auto cfg = real_ollama_config(dir, {"f16"});
  cfg["models"][0]["path"] = model.string();
  return kt::write_config(dir, cfg);
}

// A GGUF under backend ollama is part of the run's identity (hashed like llama-server's),
// and kvsweep's store is verified by content before a cell uses it.
TEST(RealOllama, AResumeOnAReplacedGgufUnderOllamaIsRefusedNamingBothHashes) {
  kt::ollama_bin_dir();  // throws, failing the test, when scripts/ollama has not installed it
  kt::TempDir dir;
  const auto model = dir / "tiny.gguf";
  const auto config = own_gguf_config(dir, model);
  const auto run = dir / "run";
  auto r = kt::run_kvsweep({"run", config.string(), "-o", run.string()}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string recorded = kt::read_manifest(run)["models"][0]["sha256"];
  ASSERT_EQ(recorded.size(), 64u);

  // kvsweep's store is content-addressed, but trusted by tag: a layer of other content under the
  // GGUF's digest is replaced by the GGUF's bytes before a cell uses it.
  const auto blob = dir / "store" / "blobs" / ("sha256-" + recorded);
  ASSERT_TRUE(std::filesystem::exists(blob));
  flip_byte(blob);
  const auto run2 = dir / "run2";
  r = kt::run_kvsweep({"run", config.string(), "-o", run2.string()}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(kt::read_manifest(run2)["cells"][0]["outcome"], "ok");
  const auto blob_sha = [&] {
    const std::string cmd = "sha256sum " + blob.string() + " > " + (dir / "blob.sha").string();
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    return kt::read_text(dir / "blob.sha").substr(0, 64);
  };
  EXPECT_EQ(blob_sha(), recorded);

  flip_byte(model);
  r = kt::run_kvsweep({"run", config.string(), "--resume", run.string()}, 600);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("a model file changed since the run started")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("sha256 " + recorded + " when the run started")) << r.output;
}

TEST(RealOllama, ATornManifestInKvsweepsStoreIsImportedAgainNotLoadFailedForever) {
  kt::ollama_bin_dir();
  kt::TempDir dir;
  const auto model = dir / "tiny.gguf";
  const auto config = own_gguf_config(dir, model);
  auto r = kt::run_kvsweep({"run", config.string(), "-o", (dir / "run").string()}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // A crash while Ollama wrote the tag's manifest: the file holds half a JSON document.
  std::size_t torn = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir / "store" / "manifests"))
    if (e.is_regular_file()) {
      std::ofstream(e.path(), std::ios::trunc) << "{\"schemaVersion\":2,\"layers\":[";
      ++torn;
    }
  ASSERT_EQ(torn, 1u);
  r = kt::run_kvsweep({"run", config.string(), "-o", (dir / "run2").string()}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(kt::read_manifest(dir / "run2")["cells"][0]["outcome"], "ok") << r.output;
}
