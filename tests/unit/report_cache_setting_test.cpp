// A cell's K and V types in the terms of the server the run swept: llama-server's flags, Ollama's
// variable, a launch template's own flags (the shipped presets' included).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "kvsweep/config/command_server.hpp"
#include "kvsweep/config/server_presets.hpp"
#include "kvsweep/report/input/cache_setting.hpp"

using ::testing::HasSubstr;

namespace kvsweep::report {
namespace {

using nlohmann::json;

sweep::Manifest with_server(const json& server) {
  return *sweep::Manifest::from_json({{"kind", "kvsweep-run"}, {"config", {{"server", server}}}});
}

/// The manifest of a run on a shipped preset, its server section as config::to_json writes it.
sweep::Manifest on_preset(const std::string& name) {
  const config::ServerPreset* preset = config::find_server_preset(name);
  EXPECT_NE(preset, nullptr) << name;
  return with_server({{"backend", "command"}, {"api", "openai"}, {"command", config::to_json(preset->command)}});
}

core::CellKey cell(const std::string& k, const std::string& v) { return {"m", "", k, v}; }

TEST(CacheSetting, LlamaServerKeepsCtkCtv) {
  const CacheSetting s = cache_setting(with_server({{"backend", "llama-server"}}), cell("q8_0", "f16"));
  EXPECT_EQ(s.text, "-ctk q8_0 -ctv f16");
  EXPECT_EQ(s.note, "");
  // An external llama-server, and a manifest that names no server: the same flags.
  EXPECT_EQ(cache_setting(with_server({{"backend", "external"}}), cell("q4_0", "q4_0")).text, "-ctk q4_0 -ctv q4_0");
  EXPECT_EQ(cache_setting(*sweep::Manifest::from_json(json::object()), cell("f16", "f16")).text, "-ctk f16 -ctv f16");
}

TEST(CacheSetting, OllamaReadsAsTheVariableItSetsWithKAndVTied) {
  const CacheSetting s = cache_setting(with_server({{"backend", "ollama"}, {"api", "ollama"}}), cell("q8_0", "q8_0"));
  EXPECT_EQ(s.text, "OLLAMA_KV_CACHE_TYPE=q8_0");
  EXPECT_EQ(s.note, "Ollama ties K and V: OLLAMA_KV_CACHE_TYPE is one type for both");
  // An Ollama kvsweep attached to, and a run whose config is missing (the manifest's describe()).
  EXPECT_EQ(cache_setting(with_server({{"backend", "external"}, {"api", "ollama"}}), cell("f16", "f16")).text,
            "OLLAMA_KV_CACHE_TYPE=f16");
  sweep::Manifest described = *sweep::Manifest::from_json(json::object());
  described.server = {{"backend", "ollama"}, {"binary", "/usr/bin/ollama"}};
  EXPECT_EQ(cache_setting(described, cell("q4_0", "q4_0")).text, "OLLAMA_KV_CACHE_TYPE=q4_0");
}

TEST(CacheSetting, OllamaPairWithKAndVApartSaysItCannotBeSet) {
  const CacheSetting s = cache_setting(with_server({{"backend", "ollama"}}), cell("q8_0", "f16"));
  EXPECT_EQ(s.text, "-ctk q8_0 -ctv f16");
  EXPECT_THAT(s.note, HasSubstr("cannot be set on it"));
}

TEST(CacheSetting, VllmPresetReadsAsItsKvCacheDtypeFlag) {
  const CacheSetting s = cache_setting(on_preset("vllm"), cell("fp8", "fp8"));
  EXPECT_EQ(s.text, "--kv-cache-dtype fp8");
  EXPECT_EQ(s.note, "vLLM ties K and V: one cache type for both");
  EXPECT_EQ(cache_setting(on_preset("vllm"), cell("auto", "auto")).text, "--kv-cache-dtype auto");
}

TEST(CacheSetting, SglangAndTabbyapiPresetsReadAsTheirOwnFlags) {
  EXPECT_EQ(cache_setting(on_preset("sglang"), cell("fp8_e4m3", "fp8_e4m3")).text, "--kv-cache-dtype fp8_e4m3");
  EXPECT_EQ(cache_setting(on_preset("tabbyapi"), cell("Q8", "Q8")).text, "--cache-mode Q8");
}

TEST(CacheSetting, LlamaCppPythonPresetGivesGgmlTypeNumbersWithTheNames) {
  const CacheSetting s = cache_setting(on_preset("llama-cpp-python"), cell("q8_0", "f16"));
  EXPECT_EQ(s.text, "--type_k 8 --type_v 1 (q8_0/f16)");
  EXPECT_EQ(s.note, "");  // K and V apart
}

TEST(CacheSetting, TemplateTypeInAJoinedArgumentOrAnEnvVariable) {
  const json argv = {"{binary}", "--cache-mode", "{type_k},{type_v}", "--port", "{port}"};
  const json joined = {{"backend", "command"},
                       {"command", {{"name", "ExLlamaV3"}, {"kv_tied", false}, {"command", argv}}}};
  EXPECT_EQ(cache_setting(with_server(joined), cell("8", "4")).text, "--cache-mode 8,4");
  const json env = {{"backend", "command"},
                    {"env", {{"KV_DTYPE", "{type_k}"}, {"OTHER", "x"}}},
                    {"command", {{"name", "S"}, {"kv_tied", true}, {"command", {"{binary}", "--port", "{port}"}}}}};
  const CacheSetting s = cache_setting(with_server(env), cell("fp8", "fp8"));
  EXPECT_EQ(s.text, "KV_DTYPE=fp8");
  EXPECT_EQ(s.note, "S ties K and V: one cache type for both");
}

TEST(CacheSetting, TemplateWithoutItsCommandNamesTheTypes) {
  EXPECT_EQ(cache_setting(with_server({{"backend", "command"}}), cell("fp8", "fp8")).text, "cache types fp8/fp8");
}

}  // namespace
}  // namespace kvsweep::report
