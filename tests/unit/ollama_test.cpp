// The Ollama backend's pure parts: request bodies for /api/generate, /api/chat and /api/embed,
// answer parsing (ns → ms, done_reason, log-probabilities without ids), the launch environment,
// the effective KV types read from the log, and the config rules for Ollama grids.

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/cli/ollama_check.hpp"
#include "kvsweep/config/config.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/http/client.hpp"
#include "kvsweep/server/ollama/ollama.hpp"
#include "config_error.hpp"

using ::testing::HasSubstr;

namespace {

using kvsweep::core::ErrorKind;
using kvsweep::core::FatalError;
using kvsweep::server::CellSpec;
using kvsweep::server::CompletionRequest;
using kvsweep::server::OllamaModelOptions;
using nlohmann::json;
namespace server = kvsweep::server;
namespace config = kvsweep::config;

OllamaModelOptions model() { return {"qwen3:8b", 8192, -1, false, {}}; }

CompletionRequest raw_request() {
  CompletionRequest r;
  r.prompt = "Why is the sky blue?";
  r.n_predict = 64;
  r.temperature = 0.7;
  r.seed = 42;
  r.top_k = 40;
  r.top_p = 0.9;
  r.min_p = 0.05;
  return r;
}

TEST(OllamaRequest, RawPromptGoesToGenerateWithEveryOptionExplicit) {
  auto req = server::ollama_completion_request(raw_request(), model());
  ASSERT_TRUE(req) << req.error().message;
  EXPECT_EQ(req->path, "/api/generate");
  const json expected = {
      {"model", "qwen3:8b"}, {"prompt", "Why is the sky blue?"}, {"raw", true}, {"stream", false}, {"think", false},
      {"keep_alive", -1},
      {"options",
       {{"temperature", 0.7}, {"seed", 42}, {"num_ctx", 8192}, {"num_predict", 64}, {"top_k", 40}, {"top_p", 0.9},
        {"min_p", 0.05}}}};
  EXPECT_EQ(req->body, expected) << req->body.dump();
}

TEST(OllamaRequest, MessagesGoToChatWithoutRaw) {
  CompletionRequest r = raw_request();
  r.prompt.clear();
  r.messages = {{"system", "Answer in one sentence."}, {"user", "Paraphrase this."}};
  r.stop = {"\n\n"};
  auto req = server::ollama_completion_request(r, model());
  ASSERT_TRUE(req);
  EXPECT_EQ(req->path, "/api/chat");
  EXPECT_FALSE(req->body.contains("raw"));
  EXPECT_FALSE(req->body.contains("prompt"));
  EXPECT_EQ(req->body["messages"], json::parse(R"([{"role":"system","content":"Answer in one sentence."},
                                                   {"role":"user","content":"Paraphrase this."}])"));
  EXPECT_EQ(req->body["options"]["stop"], json::array({"\n\n"}));
  EXPECT_EQ(req->body["stream"], false);
  EXPECT_EQ(req->body["think"], false);
}

TEST(OllamaRequest, LogprobsAskedUpToTwentyMoreIsUnsupported) {
  CompletionRequest r = raw_request();
  r.n_probs = 20;
  auto ok = server::ollama_completion_request(r, model());
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->body["logprobs"], true);
  EXPECT_EQ(ok->body["top_logprobs"], 20);
  r.n_probs = 21;
  auto too_many = server::ollama_completion_request(r, model());
  ASSERT_FALSE(too_many);
  EXPECT_EQ(too_many.error().kind, ErrorKind::unsupported);
  EXPECT_THAT(too_many.error().message, HasSubstr("at most 20"));
  r.n_probs = 0;
  EXPECT_FALSE(server::ollama_completion_request(r, model())->body.contains("logprobs"));
}

TEST(OllamaRequest, TokenPromptIsNotSupportedByThisBackend) {
  CompletionRequest r = raw_request();
  r.prompt.clear();
  r.tokens = {1, 2, 3};
  auto req = server::ollama_completion_request(r, model());
  ASSERT_FALSE(req);
  EXPECT_EQ(req.error().kind, ErrorKind::unsupported);
  EXPECT_THAT(req.error().message, HasSubstr("not supported by this backend"));
}

TEST(OllamaRequest, ExtraTranslatesThinkingSwitchAndKeepsTheCellsNumCtx) {
  CompletionRequest r = raw_request();
  r.messages = {{"user", "hi"}};
  r.extra = {{"chat_template_kwargs", {{"enable_thinking", true}}},
             {"tools", json::array({{{"type", "function"}}})},
             {"options", {{"repeat_penalty", 1.1}, {"num_ctx", 2048}}}};
  auto req = server::ollama_completion_request(r, model());
  ASSERT_TRUE(req);
  EXPECT_EQ(req->body["think"], true);
  EXPECT_FALSE(req->body.contains("chat_template_kwargs"));
  EXPECT_EQ(req->body["tools"].size(), 1u);
  EXPECT_EQ(req->body["options"]["repeat_penalty"], 1.1);
  EXPECT_EQ(req->body["options"]["num_ctx"], 8192);  // a different num_ctx would reload the model
}

TEST(OllamaRequest, EmbedBody) {
  OllamaModelOptions m{"qwen3-embedding:0.6b", 4096, "30m", false, {}};
  EXPECT_EQ(server::ollama_embed_body({"hello world", "goodbye"}, m),
            json::parse(R"({"model":"qwen3-embedding:0.6b","input":["hello world","goodbye"],"truncate":false,
                            "keep_alive":"30m","options":{"num_ctx":4096}})"));
}

TEST(OllamaParse, GenerateAnswerDurationsInMsAndLogprobsWithoutIds) {
  // The example answer of servers.md part C.
  auto body = json::parse(R"({"model":"qwen3:8b","created_at":"2026-08-21T10:00:00.0Z",
    "response":"Rayleigh scattering makes shorter blue wavelengths scatter more.",
    "done":true,"done_reason":"stop","context":[151644,872],
    "total_duration":912000000,"load_duration":2100000,"prompt_eval_count":31,"prompt_eval_duration":40100000,
    "eval_count":14,"eval_duration":180200000,
    "logprobs":[{"token":"Ray","logprob":-0.21,"bytes":[82,97,121],
                 "top_logprobs":[{"token":"Ray","logprob":-0.21},{"token":"The","logprob":-1.70}]}]})");
  auto r = server::parse_ollama_completion(body, false);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->content, "Rayleigh scattering makes shorter blue wavelengths scatter more.");
  EXPECT_EQ(r->stop_type, "eos");
  EXPECT_EQ(r->timings.prompt_n, 31);
  EXPECT_EQ(r->timings.cache_n, 0);
  EXPECT_DOUBLE_EQ(r->timings.prompt_ms, 40.1);
  EXPECT_EQ(r->timings.predicted_n, 14);
  EXPECT_DOUBLE_EQ(r->timings.predicted_ms, 180.2);
  EXPECT_TRUE(r->tokens.empty());  // context holds ids of prompt and answer, not of the answer alone
  ASSERT_EQ(r->probs.size(), 1u);
  EXPECT_EQ(r->probs[0].id, -1);
  EXPECT_EQ(r->probs[0].token, "Ray");
  EXPECT_DOUBLE_EQ(r->probs[0].logprob, -0.21);
  ASSERT_EQ(r->probs[0].top.size(), 2u);
  EXPECT_EQ(r->probs[0].top[1].id, -1);
  EXPECT_EQ(r->probs[0].top[1].token, "The");
  EXPECT_DOUBLE_EQ(r->probs[0].top[1].logprob, -1.70);
}

TEST(OllamaParse, ChatAnswerLengthAndThinking) {
  auto body = json::parse(R"({"model":"qwen3:8b","message":{"role":"assistant","content":"Boil, cook, drain.",
    "thinking":"short"},"done":true,"done_reason":"length","prompt_eval_count":5,"prompt_eval_duration":1500000,
    "eval_count":4,"eval_duration":10000000})");
  auto r = server::parse_ollama_completion(body, true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->content, "Boil, cook, drain.");
  EXPECT_EQ(r->reasoning, "short");
  EXPECT_EQ(r->stop_type, "limit");
  EXPECT_DOUBLE_EQ(r->timings.prompt_ms, 1.5);
  EXPECT_DOUBLE_EQ(r->timings.predicted_ms, 10.0);
  EXPECT_TRUE(r->probs.empty());
}

TEST(OllamaParse, WrongShapeIsAParseError) {
  auto r = server::parse_ollama_completion(json::parse(R"({"message":{"content":"x"}})"), false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::parse);
  EXPECT_FALSE(server::parse_ollama_completion(json::parse(R"({"response":"x"})"), true));
}

TEST(OllamaParse, EmbedAnswerOnePerInput) {
  auto body = json::parse(R"({"model":"m","embeddings":[[0.6,0.8],[1.0,0.0]],"prompt_eval_count":7})");
  auto e = server::parse_ollama_embed(body, 2);
  ASSERT_TRUE(e);
  ASSERT_EQ(e->size(), 2u);
  EXPECT_FLOAT_EQ((*e)[0][1], 0.8f);
  auto short_answer = server::parse_ollama_embed(body, 3);
  ASSERT_FALSE(short_answer);
  EXPECT_EQ(short_answer.error().kind, ErrorKind::parse);
}

TEST(OllamaApi, TokenizeAndDetokenizeAreUnsupported) {
  // No request is made: nothing listens on this port.
  auto client = std::make_shared<kvsweep::http::Client>("http://127.0.0.1:9", kvsweep::http::Timeouts{});
  server::OllamaApi api(client, model());
  auto t = api.tokenize("hello", true);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().kind, ErrorKind::unsupported);
  auto d = api.detokenize({1, 2});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().kind, ErrorKind::unsupported);
  CompletionRequest r;
  r.tokens = {5};
  auto c = api.complete(r);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().kind, ErrorKind::unsupported);
}

TEST(OllamaLaunch, EnvironmentSetsTheCellAndDropsInheritedOllamaVariables) {
  CellSpec spec;
  spec.type_k = spec.type_v = "q8_0";
  spec.n_ctx = 8192;
  spec.env = {{"OLLAMA_MODELS", "/models/ollama"}, {"CUDA_VISIBLE_DEVICES", "0"}};
  auto env = server::ollama_launch_env(
      spec, 41234, {"PATH", "HOME", "OLLAMA_KEEP_ALIVE", "OLLAMA_MODELS", "OLLAMA_KV_CACHE_TYPE", "LLAMA_ARG_CACHE_TYPE_K",
                    "OLLAMA_DEBUG"});
  const std::vector<std::pair<std::string, std::string>> set = {
      {"OLLAMA_HOST", "127.0.0.1:41234"}, {"OLLAMA_KV_CACHE_TYPE", "q8_0"}, {"OLLAMA_FLASH_ATTENTION", "1"},
      {"OLLAMA_NUM_PARALLEL", "1"},       {"OLLAMA_CONTEXT_LENGTH", "8192"}, {"OLLAMA_MODELS", "/models/ollama"},
      {"CUDA_VISIBLE_DEVICES", "0"},      {"OLLAMA_NO_CLOUD", "1"}};
  EXPECT_EQ(env.set, set);
  // Overridden names need no unset; the user's OLLAMA_MODELS replaces the inherited one.
  EXPECT_EQ(env.unset, (std::vector<std::string>{"OLLAMA_KEEP_ALIVE", "LLAMA_ARG_CACHE_TYPE_K", "OLLAMA_DEBUG"}));
}

TEST(OllamaLaunch, EffectiveKvFromTheLogElseDeclared) {
  CellSpec spec;
  spec.type_k = spec.type_v = "q8_0";
  auto found = server::ollama_effective_kv(
      "time=… msg=\"loading model\"\n"
      "llama_kv_cache: size =   36.00 MiB (  8192 cells,  36 layers,  1/1 seqs), K (q8_0):   18.00 MiB, V (q8_0):   18.00 MiB\n"
      "llama_context: flash_attn    = enabled\n",
      spec);
  EXPECT_TRUE(found.found);
  EXPECT_FALSE(found.declared);
  EXPECT_EQ(found.type_k, "q8_0");
  EXPECT_EQ(found.type_v, "q8_0");
  EXPECT_DOUBLE_EQ(found.total_mib, 36.0);
  EXPECT_EQ(found.flash_attn, "enabled");

  // Ollama < 0.30 ran f16 after this warning: the runner then reports config_mismatch.
  spec.type_k = spec.type_v = "q5_1";
  auto legacy = server::ollama_effective_kv("level=WARN msg=\"unsupported OLLAMA_KV_CACHE_TYPE\" type=q5_1\n", spec);
  EXPECT_TRUE(legacy.found);
  EXPECT_EQ(legacy.type_k, "f16");

  auto silent = server::ollama_effective_kv("level=INFO msg=\"Listening on 127.0.0.1:1\"\n", spec);
  EXPECT_FALSE(silent.found);
  EXPECT_TRUE(silent.declared);
  EXPECT_EQ(silent.type_k, "q5_1");
  EXPECT_EQ(silent.type_v, "q5_1");
}

json ollama_config(const json& grid, json server = {{"backend", "ollama"}}) {
  return {{"server", server}, {"models", {{{"name", "qwen3-8b"}, {"path", "qwen3:8b"}}}}, {"grid", grid},
          {"probes", {{{"kind", "complete"}}}}};
}

std::string config_error(const json& doc) { return kvsweep::testing::config_error(doc, "ollama.json"); }

TEST(OllamaConfig, RejectsCellsWithKDifferentFromVAndSaysWhy) {
  std::string msg = config_error(ollama_config({{"k", {"f16", "q8_0"}}, {"v", "same-as-k"}}));
  EXPECT_THAT(msg, HasSubstr("ollama.json: grid.v:")) << msg;
  EXPECT_THAT(msg, HasSubstr("K != V")) << msg;
  EXPECT_THAT(msg, HasSubstr("OLLAMA_KV_CACHE_TYPE is one setting for both")) << msg;
  EXPECT_THAT(msg, HasSubstr("\"tied\"")) << msg;

  msg = config_error(ollama_config({{"k", {"f16"}}, {"v", "tied"}, {"include", {"q8_0/f16"}}}));
  EXPECT_THAT(msg, HasSubstr("grid.include[0]")) << msg;
  msg = config_error(ollama_config({{"k", {"q8_0"}}, {"v", "tied"}, {"reference", "f16/q8_0"}}));
  EXPECT_THAT(msg, HasSubstr("grid.reference")) << msg;
  // Attach mode is Ollama too.
  msg = config_error(ollama_config({{"k", {"f16"}}, {"v", {"q8_0"}}},
                                   {{"backend", "external"}, {"api", "ollama"}, {"url", "http://127.0.0.1:11434"}}));
  EXPECT_THAT(msg, HasSubstr("K != V")) << msg;
  // llama-server runs asymmetric cells.
  EXPECT_EQ(config_error(ollama_config({{"k", {"f16", "q8_0"}}, {"v", "same-as-k"}}, {{"backend", "llama-server"}})), "");
}

TEST(OllamaConfig, AcceptsSymmetricGridsAndDefaultsTheBinary) {
  auto c = config::from_json(ollama_config({{"k", {"f16", "q8_0"}}, {"v", "tied"}}), "ollama.json");
  EXPECT_EQ(c.server.binary, "ollama");
  EXPECT_EQ(c.server.api, "ollama");
  EXPECT_TRUE(config::uses_ollama(c.server));
  EXPECT_EQ(c.models[0].path, "qwen3:8b");  // a tag, not resolved as a file
  // Asymmetric pairs excluded by hand are fine.
  EXPECT_EQ(config_error(ollama_config({{"k", {"f16", "q8_0"}}, {"v", "same-as-k"}, {"exclude", {"f16/q8_0", "q8_0/f16"}}})),
            "");
  auto attach = config::from_json(
      ollama_config({{"k", {"q8_0"}}, {"v", "tied"}, {"reference", "q8_0/q8_0"}},
                    {{"backend", "external"}, {"api", "ollama"}, {"url", "http://127.0.0.1:11434"}}),
      "a.json");
  EXPECT_TRUE(config::uses_ollama(attach.server));
  EXPECT_EQ(config::to_json(attach)["server"]["api"], "ollama");
  // Configs without "api" hash as before it existed.
  auto plain = config::from_json(ollama_config({{"k", {"f16"}}, {"v", "tied"}}, {{"backend", "llama-server"}}), "p.json");
  EXPECT_FALSE(config::to_json(plain)["server"].contains("api"));
}

TEST(OllamaConfig, RejectsWhatKvsweepSetsPerCell) {
  std::string msg = config_error(ollama_config({{"k", {"f16"}}, {"v", "tied"}},
                                               {{"backend", "ollama"}, {"env", {{"OLLAMA_KV_CACHE_TYPE", "q4_0"}}}}));
  EXPECT_THAT(msg, HasSubstr("server.env.OLLAMA_KV_CACHE_TYPE")) << msg;
  msg = config_error(ollama_config({{"k", {"f16"}}, {"v", "tied"}}, {{"backend", "ollama"}, {"args", {"-fa", "on"}}}));
  EXPECT_THAT(msg, HasSubstr("server.args")) << msg;
  msg = config_error(ollama_config({{"k", {"f16"}}, {"v", "tied"}}, {{"backend", "ollama"}, {"url", "http://x"}}));
  EXPECT_THAT(msg, HasSubstr("\"api\": \"ollama\"")) << msg;
  msg = config_error(ollama_config({{"k", {"f16"}}, {"v", "tied"}}, {{"backend", "llama-server"}, {"api", "ollama"}}));
  EXPECT_THAT(msg, HasSubstr("server.api")) << msg;
  EXPECT_EQ(config_error(ollama_config({{"k", {"f16"}}, {"v", "tied"}},
                                       {{"backend", "ollama"}, {"env", {{"OLLAMA_MODELS", "/m"}}}})),
            "");
}

}  // namespace

TEST(OllamaRequest, UseMmapIsSentInEveryRequestWhenSet) {
  OllamaModelOptions m = model();
  m.use_mmap = true;
  auto req = server::ollama_completion_request(raw_request(), m);
  ASSERT_TRUE(req) << req.error().message;
  EXPECT_EQ(req->body["options"]["use_mmap"], true);
  EXPECT_EQ(server::ollama_embed_body({"a"}, m)["options"]["use_mmap"], true);
  // Unset (attached Ollama): not sent at all.
  auto plain = server::ollama_completion_request(raw_request(), model());
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->body["options"].contains("use_mmap"));
  EXPECT_FALSE(server::ollama_embed_body({"a"}, model())["options"].contains("use_mmap"));
}

TEST(OllamaVersion, BeforeThirtyOnlyThreeTypesAfterwardsEveryLlamaCppType) {
  EXPECT_EQ(server::ollama_accepted_kv_types("0.17.4"), (std::vector<std::string>{"f16", "q8_0", "q4_0"}));
  EXPECT_EQ(server::ollama_accepted_kv_types("0.29.9"), (std::vector<std::string>{"f16", "q8_0", "q4_0"}));
  EXPECT_TRUE(server::ollama_accepted_kv_types("0.30.1").empty());
  EXPECT_TRUE(server::ollama_accepted_kv_types("1.2.0").empty());
  // A build without its version stamped, or none read: not refused on a guess.
  EXPECT_TRUE(server::ollama_accepted_kv_types("0.0.0").empty());
  EXPECT_TRUE(server::ollama_accepted_kv_types("").empty());
  EXPECT_TRUE(server::ollama_before_llama_server("0.24.3"));
  EXPECT_FALSE(server::ollama_before_llama_server("0.30.0"));
}

TEST(OllamaImport, AGgufFileIsATagNamedByItsContentAndATagIsNot) {
  const auto dir = std::filesystem::temp_directory_path() / ("kvsweep-unit-import-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "My Model.Q4.gguf";
  std::ofstream(file, std::ios::binary) << "GGUF fake bytes";
  auto import = server::ollama_import_for(file.string());
  ASSERT_TRUE(import.has_value());
  ASSERT_TRUE(*import) << (*import).error().message;
  // sha256("GGUF fake bytes"), first 12 hex; the name's space becomes '-'.
  const std::string hex = kvsweep::core::sha256_hex("GGUF fake bytes");
  EXPECT_EQ((*import)->sha256, hex);
  EXPECT_EQ((*import)->tag, "kvsweep/My-Model.Q4:" + hex.substr(0, 12));
  // A changed file is a new tag, even within one process.
  std::filesystem::last_write_time(file, std::filesystem::last_write_time(file) + std::chrono::seconds(5));
  std::ofstream(file, std::ios::binary | std::ios::trunc) << "GGUF other bytes";
  std::filesystem::last_write_time(file, std::filesystem::last_write_time(file) + std::chrono::seconds(10));
  auto changed = server::ollama_import_for(file.string());
  ASSERT_TRUE(changed.has_value() && *changed);
  EXPECT_NE((*changed)->tag, (*import)->tag);
  // Tags and paths that are not GGUF files are not imported.
  EXPECT_FALSE(server::ollama_import_for("qwen3:8b").has_value());
  EXPECT_FALSE(server::ollama_import_for((dir / "absent.gguf").string()).has_value());
  std::filesystem::remove_all(dir);
}

TEST(OllamaLaunch, AGgufModelRunsOnKvsweepsOwnStoreUnlessTheConfigNamesOne) {
  const auto dir = std::filesystem::temp_directory_path() / ("kvsweep-unit-store-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  CellSpec spec;
  spec.model_path = (dir / "m.gguf").string();
  std::ofstream(spec.model_path, std::ios::binary) << "GGUF";
  auto env = server::ollama_launch_env(spec, 1234, {});
  auto value = [&](const std::string& name) -> std::string {
    for (const auto& [k, v] : env.set)
      if (k == name) return v;
    return "<unset>";
  };
  EXPECT_EQ(value("OLLAMA_MODELS"), server::ollama_import_store().string());
  EXPECT_EQ(value("OLLAMA_NO_CLOUD"), "1");
  spec.env = {{"OLLAMA_MODELS", "/mine"}, {"OLLAMA_NO_CLOUD", "0"}};
  env = server::ollama_launch_env(spec, 1234, {});
  EXPECT_EQ(value("OLLAMA_MODELS"), "/mine");
  EXPECT_EQ(value("OLLAMA_NO_CLOUD"), "0");
  spec.env.clear();
  spec.model_path = "qwen3:8b";  // a tag: Ollama's own store
  env = server::ollama_launch_env(spec, 1234, {});
  EXPECT_EQ(value("OLLAMA_MODELS"), "<unset>");
  std::filesystem::remove_all(dir);
}

TEST(OllamaConfig, AGgufPathIsAFileRelativeToTheConfigAndATagStaysATag) {
  json doc = {{"server", {{"backend", "ollama"}}},
              {"models", {{{"name", "a"}, {"path", "models/tiny.GGUF"}}, {{"name", "b"}, {"path", "qwen3:8b"}}}},
              {"grid", {{"k", {"f16", "q8_0"}}, {"v", "tied"}}},
              {"probes", {{{"kind", "complete"}}}}};
  auto cfg = config::from_json(doc, "/work/configs/x.json");
  EXPECT_EQ(cfg.models[0].path, "/work/configs/models/tiny.GGUF");
  EXPECT_EQ(cfg.models[1].path, "qwen3:8b");
  EXPECT_TRUE(config::is_gguf_path("a/b.gguf"));
  EXPECT_FALSE(config::is_gguf_path("gguf"));
  EXPECT_FALSE(config::is_gguf_path("qwen3:8b"));
}

TEST(OllamaGrid, AnOllamaBeforeThirtyRefusesTypesItWouldRunAsF16NamingWhatToChange) {
  json doc = {{"server", {{"backend", "ollama"}}},
              {"models", {{{"name", "a"}, {"path", "qwen3:8b"}}}},
              {"grid", {{"k", {"f16", "q8_0", "q5_0", "q4_1"}}, {"v", "tied"}}},
              {"probes", {{{"kind", "complete"}}}}};
  auto cfg = config::from_json(doc, "/work/configs/x.json");
  try {
    kvsweep::cli::check_ollama_grid(cfg, "0.17.4");
    FAIL() << "expected a refusal";
  } catch (const FatalError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("grid: q5_0, q4_1: Ollama 0.17.4 accepts only f16, q8_0 and q4_0")) << msg;
    EXPECT_THAT(msg, HasSubstr("remove those types from grid.k, or use Ollama 0.30 or newer")) << msg;
  }
  EXPECT_NO_THROW(kvsweep::cli::check_ollama_grid(cfg, "0.30.1"));
  doc["grid"]["k"] = {"f16", "q8_0", "q4_0"};
  EXPECT_NO_THROW(kvsweep::cli::check_ollama_grid(config::from_json(doc, "/work/configs/x.json"), "0.17.4"));
}
