// A launch template's server section (backend "command"): what a preset fills in, what the config sets
// over it, and every mistake refused before anything starts with the key and a hint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/config/config.hpp"
#include "kvsweep/config/server_presets.hpp"
#include "config_error.hpp"

using ::testing::HasSubstr;

namespace config = kvsweep::config;
using json = nlohmann::json;
using kvsweep::testing::config_error;

namespace {

json doc(const json& server, const json& grid = {{"k", {"auto", "fp8"}}, {"v", "tied"}}) {
  return {{"server", server},
          {"models", {{{"name", "m"}, {"path", "org/model"}}}},
          {"grid", grid},
          {"probes", {{{"kind", "complete"}}}}};
}

/// A template with everything given by hand (no preset).
json by_hand() {
  return {{"command", {"{binary}", "-m", "{model}", "--host", "{host}", "--port", "{port}", "--kv", "{type_k}"}},
          {"binary", "srv"},
          {"cache_types", {"auto", "fp8"}},
          {"kv_tied", true},
          {"reference", "auto/auto"},
          {"listening", "listening on {host}:{port}"}};
}

TEST(CommandServer, APresetFillsTheTemplateAndImpliesBackendCommand) {
  const config::Config c = config::from_json(doc({{"preset", "vllm"}}), "sweep.json");
  EXPECT_EQ(c.server.backend, "command");
  EXPECT_EQ(c.server.api, "openai");
  EXPECT_EQ(c.server.binary, "vllm");
  EXPECT_EQ(c.server.command.preset, "vllm");
  EXPECT_TRUE(c.server.command.tied);
  EXPECT_EQ(c.server.command.confirm.http, "/metrics");
  EXPECT_EQ(c.server.command.confirm.metric, "vllm:cache_config_info");
  // The preset's reference: vLLM's types are not llama.cpp's.
  EXPECT_EQ(c.grid.reference.text(), "auto/auto");
  // "all" is the server's own list.
  const config::Config all = config::from_json(doc({{"preset", "sglang"}}, {{"k", "all"}, {"v", "tied"}}), "sweep.json");
  EXPECT_EQ(all.grid.k, config::find_server_preset("sglang")->command.types);
}

TEST(CommandServer, EveryPresetReadsAndKeepsItsDocumentedTypes) {
  for (const auto& p : config::server_presets()) {
    const std::string t = p.command.types.front();
    const json grid = {{"k", {t}}, {"v", "tied"}, {"reference", t + "/" + t}};
    const config::Config c = config::from_json(doc({{"preset", p.name}}, grid), "sweep.json");
    EXPECT_EQ(c.server.command.types, p.command.types) << p.name;
    EXPECT_FALSE(c.server.command.listening.empty()) << p.name;
    EXPECT_FALSE(c.server.command.confirm.log.empty() && c.server.command.confirm.http.empty()) << p.name;
  }
  // llama-cpp-python takes ggml's type numbers; the grid names llama.cpp's types.
  const auto* lcp = config::find_server_preset("llama-cpp-python");
  ASSERT_NE(lcp, nullptr);
  EXPECT_FALSE(lcp->command.tied);
  const auto q8 = std::ranges::find(lcp->command.spelling, std::pair<std::string, std::string>{"q8_0", "8"});
  EXPECT_NE(q8, lcp->command.spelling.end());
}

TEST(CommandServer, TheConfigsKeysGoOverThePresets) {
  json server = {{"preset", "vllm"},
                 {"binary", "/opt/vllm/bin/vllm"},
                 {"openai", {{"capabilities", {{"tool_calls", true}, {"logprob_ids", false}}}, {"model", "served"}}}};
  const config::Config c = config::from_json(doc(server), "sweep.json");
  EXPECT_EQ(c.server.binary, "/opt/vllm/bin/vllm");
  EXPECT_EQ(c.server.command.openai.model, "served");
  const auto& caps = c.server.command.openai.capabilities;
  EXPECT_NE(std::ranges::find(caps, "tool_calls"), caps.end());
  EXPECT_EQ(std::ranges::find(caps, "logprob_ids"), caps.end());
  EXPECT_NE(std::ranges::find(caps, "logprobs"), caps.end());  // kept from the preset
}

TEST(CommandServer, ATemplateByHandReads) {
  const config::Config c = config::from_json(doc(by_hand()), "sweep.json");
  EXPECT_EQ(c.server.backend, "command");
  EXPECT_EQ(c.server.command.argv.back(), "{type_k}");
  EXPECT_EQ(c.server.command.ready_path, "/health");
  EXPECT_TRUE(c.server.command.confirm.log.empty() && c.server.command.confirm.http.empty());  // kv_unverified
}

TEST(CommandServer, MistakesAreRefusedWithTheKeyAndAHint) {
  EXPECT_THAT(config_error(doc({{"preset", "vlm"}})),
              HasSubstr("sweep.json: server.preset: unknown preset 'vlm' (did you mean 'vllm'?); known: vllm, sglang, "
                        "tabbyapi, llama-cpp-python"));
  EXPECT_THAT(config_error(doc({{"preset", "vllm"}}, {{"k", {"auto", "fp8_e4m4"}}, {"v", "tied"}})),
              HasSubstr("grid.k[1]: unknown cache type 'fp8_e4m4' (did you mean 'fp8_e4m3'?); valid types for vLLM "
                        "(preset vllm): auto,"));
  EXPECT_THAT(config_error(doc({{"preset", "vllm"}}, {{"k", {"auto", "fp8"}}, {"v", {"auto"}}})),
              HasSubstr("cell fp8/auto has K != V, but vLLM runs K and V at one precision"));

  json s = by_hand();
  s["command"] = {"srv", "--host", "{host}", "--kv", "{type_k}"};
  EXPECT_THAT(config_error(doc(s)), HasSubstr("server.command: never uses {port}"));
  s = by_hand();
  s["command"][8] = "{typ_k}";
  EXPECT_THAT(config_error(doc(s)), HasSubstr("server.command[8]: unknown placeholder {typ_k} (did you mean 'type_k'?)"));
  s = by_hand();
  s["command"].push_back("{type_v}");
  EXPECT_THAT(config_error(doc(s)), HasSubstr("server.kv_tied: true, but the command passes {type_k} and {type_v} apart"));
  s = by_hand();
  s.erase("listening");
  EXPECT_THAT(config_error(doc(s)), HasSubstr("server.listening: missing"));
  s = by_hand();
  s["listening"] = "up at {port} with {model}";
  EXPECT_THAT(config_error(doc(s)), HasSubstr("server.listening: may use {host} and {port} only, got {model}"));
  s = by_hand();
  s["confirm"] = {{"log", "K=(\\w+)"}, {"http", "/metrics"}};
  EXPECT_THAT(config_error(doc(s)), HasSubstr("server.confirm: give one of \"log\" and \"http\", not both"));
  s["confirm"] = {{"log", "no groups"}};
  EXPECT_THAT(config_error(doc(s)), HasSubstr("server.confirm.log: a pattern needs one group"));
  s["confirm"] = {{"http", "/metrics"}, {"format", "prometheus"}};
  EXPECT_THAT(config_error(doc(s)), HasSubstr("server.confirm.metric: missing"));
  s["confirm"] = {{"http", "/server_info"}, {"format", "xml"}};
  EXPECT_THAT(config_error(doc(s)), HasSubstr("server.confirm.format"));
  s = by_hand();
  s["openai"] = {{"capabilities", {"logprobs", "tokenise"}}};
  EXPECT_THAT(config_error(doc(s)),
              HasSubstr("server.openai.capabilities[1]: unknown capability 'tokenise' (did you mean 'tokenize'?)"));
  s = by_hand();
  s["openai"] = {{"tokenizer", "vlm"}};
  EXPECT_THAT(config_error(doc(s)), HasSubstr("server.openai.tokenizer"));
  // A template's keys on another backend are a mistake, not ignored.
  EXPECT_THAT(config_error(doc({{"backend", "llama-server"}, {"listening", "x"}}, {{"k", {"f16"}}, {"v", "same-as-k"}})),
              HasSubstr("server.listening: only for a launch template (backend \"command\")"));
}

TEST(CommandServer, TheResolvedTemplateIsPartOfTheConfigHash) {
  const config::Config a = config::from_json(doc({{"preset", "vllm"}}), "sweep.json");
  json other = {{"preset", "vllm"}, {"args", {"--enforce-eager"}}};
  const config::Config b = config::from_json(doc(other), "sweep.json");
  json tools = {{"preset", "vllm"}, {"openai", {{"capabilities", {{"tool_calls", true}}}}}};
  const config::Config c = config::from_json(doc(tools), "sweep.json");
  EXPECT_NE(config::config_hash(a), config::config_hash(b));
  EXPECT_NE(config::config_hash(a), config::config_hash(c));
  EXPECT_EQ(config::to_json(a)["server"]["command"]["confirm"]["http"], "/metrics");
}

}  // namespace

TEST(CommandServer, AnAttachedOpenAiServerTakesThePresetsServingKeysButNoLaunchKeys) {
  const json attached = {{"backend", "external"}, {"api", "openai"}, {"preset", "vllm"}, {"url", "http://127.0.0.1:8000"}};
  const config::Config c = config::from_json(doc(attached), "sweep.json");
  EXPECT_EQ(c.server.backend, "external");
  EXPECT_EQ(c.server.api, "openai");
  EXPECT_TRUE(c.server.command.argv.empty());  // nothing is launched
  EXPECT_EQ(c.server.command.confirm.http, "/metrics");  // vLLM's confirmation of the types
  EXPECT_TRUE(c.server.binary.empty() || c.server.binary == "llama-server");
  json with_command = attached;
  with_command["command"] = {"vllm", "serve", "{model}"};
  EXPECT_THAT(config_error(doc(with_command)),
              HasSubstr("server.command: only for a launch template (backend \"command\"); an attached server"));
  json llama = {{"backend", "external"}, {"url", "http://127.0.0.1:8000"}, {"preset", "vllm"}};
  EXPECT_THAT(config_error(doc(llama)), HasSubstr("server.preset: only for a launch template"));
}
