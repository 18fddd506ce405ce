// The OpenAI-API client's request bodies and answer shapes (llama-server's logprobs.content, the legacy
// completions shape vLLM, SGLang, TabbyAPI and llama-cpp-python answer with, vLLM's "token_id:N"), the
// launch template's placeholders and spellings, and the confirmation readers (Prometheus text, JSON, log).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kvsweep/http/client.hpp"
#include "kvsweep/server/openai/launch_template.hpp"
#include "kvsweep/server/openai/openai_api.hpp"
#include "kvsweep/server/token_logprobs.hpp"

using ::testing::HasSubstr;

namespace server = kvsweep::server;
namespace core = kvsweep::core;
using json = nlohmann::json;

namespace {

TEST(OpenAiBody, EverySamplingFieldIsSentThenTheServersThenTheRequests) {
  server::CompletionRequest r;
  r.prompt = "Once";
  r.n_predict = 7;
  r.top_k = 40;
  r.n_probs = 5;
  r.extra = {{"repetition_penalty", 1.2}};
  server::OpenAiOptions o;
  o.extra = {{"repetition_penalty", 1.0}, {"return_tokens_as_token_ids", true}};
  const auto body = server::openai_body(r, o, "m");
  ASSERT_TRUE(body) << body.error().message;
  EXPECT_EQ((*body)["model"], "m");
  EXPECT_EQ((*body)["prompt"], "Once");
  EXPECT_EQ((*body)["max_tokens"], 7);
  for (const char* key : {"temperature", "top_p", "top_k", "min_p", "seed", "presence_penalty", "frequency_penalty"})
    EXPECT_TRUE(body->contains(key)) << key;
  EXPECT_EQ((*body)["logprobs"], 5);
  EXPECT_EQ((*body)["stream"], false);
  EXPECT_FALSE(body->contains("cache_prompt"));  // llama.cpp's field: only where the server reads it
  EXPECT_EQ((*body)["repetition_penalty"], 1.2);  // the request's extra last
  EXPECT_EQ((*body)["return_tokens_as_token_ids"], true);

  o.cache_prompt = true;
  r.cache_prompt = false;
  r.tokens = {1, 2, 3};
  const auto ids = server::openai_body(r, o, "m");
  ASSERT_TRUE(ids);
  EXPECT_EQ((*ids)["prompt"], json({1, 2, 3}));
  EXPECT_EQ((*ids)["cache_prompt"], false);
}

TEST(OpenAiBody, ChatAsksForTopLogprobsAndAMissingCapabilityIsUnsupported) {
  server::CompletionRequest r;
  r.messages = {{"user", "hi"}};
  r.n_probs = 3;
  server::OpenAiOptions o;
  const auto chat = server::openai_body(r, o, "m");
  ASSERT_TRUE(chat);
  EXPECT_EQ((*chat)["messages"][0]["content"], "hi");
  EXPECT_EQ((*chat)["logprobs"], true);
  EXPECT_EQ((*chat)["top_logprobs"], 3);
  EXPECT_FALSE(chat->contains("prompt"));

  o.capabilities = server::Capabilities{}.set(server::Capability::chat);
  const auto no_logprobs = server::openai_body(r, o, "m");
  ASSERT_FALSE(no_logprobs);
  EXPECT_EQ(no_logprobs.error().kind, core::ErrorKind::unsupported);
  server::CompletionRequest ids;
  ids.tokens = {1};
  const auto no_ids = server::openai_body(ids, o, "m");
  ASSERT_FALSE(no_ids);
  EXPECT_THAT(no_ids.error().message, HasSubstr("token_prompts"));
}

TEST(OpenAiAnswer, LlamaServersContentShapeKeepsIdsAndItsTimings) {
  const json body = {
      {"choices",
       {{{"text", " Paris"},
         {"finish_reason", "length"},
         {"logprobs",
          {{"content",
            {{{"id", 791}, {"token", " Paris"}, {"logprob", -0.5},
              {"top_logprobs", {{{"id", 791}, {"token", " Paris"}, {"logprob", -0.5}}, {{"id", 12}, {"token", " L"}, {"logprob", -2.0}}}}}}}}}}}},
      {"usage", {{"prompt_tokens", 5}, {"completion_tokens", 1}}},
      {"timings", {{"prompt_n", 5}, {"cache_n", 0}, {"prompt_ms", 1.5}, {"predicted_n", 1}, {"predicted_ms", 2.0}}}};
  const auto r = server::parse_openai_completion(body, false, 99.0);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->content, " Paris");
  EXPECT_EQ(r->stop_type, "limit");
  ASSERT_EQ(r->probs.size(), 1u);
  EXPECT_EQ(r->probs[0].id, 791);
  EXPECT_EQ(r->probs[0].top[1].id, 12);
  EXPECT_EQ(r->tokens, std::vector<std::int32_t>{791});
  EXPECT_FALSE(r->timings.client_measured);
  EXPECT_EQ(r->timings.prompt_ms, 1.5);
}

TEST(OpenAiAnswer, TheLegacyShapeIsSortedAndVllmsTokenIdsAreRead) {
  // A JSON object has no order: the alternatives come back most likely first.
  const json legacy = {{"tokens", {"token_id:42", "token_id:7"}},
                       {"token_logprobs", {-0.1, -0.3}},
                       {"top_logprobs", {{{"token_id:9", -3.0}, {"token_id:42", -0.1}}, {{"token_id:7", -0.3}}}}};
  const auto probs = server::parse_openai_logprobs(legacy);
  ASSERT_TRUE(probs) << probs.error().message;
  ASSERT_EQ(probs->size(), 2u);
  EXPECT_EQ((*probs)[0].id, 42);
  ASSERT_EQ((*probs)[0].top.size(), 2u);
  EXPECT_EQ((*probs)[0].top[0].id, 42);
  EXPECT_EQ((*probs)[0].top[1].logprob, -3.0);
  // Text tokens (SGLang, llama-cpp-python): no ids.
  const auto text = server::parse_openai_logprobs({{"tokens", {" a"}}, {"token_logprobs", {-1.0}}, {"top_logprobs", {{{" a", -1.0}}}}});
  ASSERT_TRUE(text);
  EXPECT_EQ((*text)[0].id, -1);
  EXPECT_EQ((*text)[0].top[0].token, " a");
  // A lost value is not a zero.
  const auto lost = server::parse_openai_logprobs({{"tokens", {" a"}}, {"token_logprobs", {nullptr}}});
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().kind, core::ErrorKind::parse);
  const auto ragged = server::parse_openai_logprobs({{"tokens", {" a", " b"}}, {"token_logprobs", {-1.0}}});
  EXPECT_FALSE(ragged);
}

TEST(OpenAiAnswer, WithoutServerTimingsTheClientsAreUsedAndSaidSo) {
  const json body = {{"choices", {{{"message", {{"role", "assistant"}, {"content", "ok"}, {"tool_calls", {{{"id", "c1"}}}}}},
                                   {"finish_reason", "tool_calls"}}}},
                     {"usage", {{"prompt_tokens", 12}, {"completion_tokens", 3}, {"prompt_tokens_details", {{"cached_tokens", 4}}}}}};
  const auto r = server::parse_openai_completion(body, true, 50.0);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->content, "ok");
  EXPECT_EQ(r->stop_type, "eos");
  EXPECT_EQ(r->tool_calls[0]["id"], "c1");
  EXPECT_TRUE(r->timings.client_measured);
  EXPECT_EQ(r->timings.prompt_n, 8);
  EXPECT_EQ(r->timings.cache_n, 4);
  EXPECT_EQ(r->timings.predicted_n, 3);
  EXPECT_EQ(r->timings.predicted_ms, 50.0);
  EXPECT_EQ(server::to_json(r->timings)["measured_by"], "client");
  EXPECT_FALSE(server::to_json(server::Timings{}).contains("measured_by"));
}

TEST(OpenAiStream, ChunksAddUpAndTheFirstChunkTimesThePrompt) {
  server::OpenAiStream s(false);
  ASSERT_TRUE(s.add(R"({"choices":[{"text":"a","finish_reason":null}]})"));
  ASSERT_TRUE(s.add(R"({"choices":[{"text":"b","finish_reason":"stop"}]})"));
  ASSERT_TRUE(s.add(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}})"));
  ASSERT_TRUE(s.add("[DONE]"));
  EXPECT_TRUE(s.finished());
  const auto r = s.take(10.0, 30.0);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->content, "ab");
  EXPECT_EQ(r->stop_type, "eos");
  EXPECT_TRUE(r->timings.client_measured);
  EXPECT_EQ(r->timings.prompt_ms, 10.0);
  EXPECT_EQ(r->timings.predicted_ms, 20.0);
  EXPECT_EQ(r->timings.predicted_n, 2);
  server::OpenAiStream bad(true);
  const auto error = bad.add(R"({"object":"error","message":"boom","code":500})");
  ASSERT_FALSE(error);
  EXPECT_THAT(error.error().message, HasSubstr("boom"));
}

TEST(OpenAiAnswer, ImpossibleLogprobsFailTheAnswerInsteadOfScoringAsIdentical) {
  for (const double bad : {1e308, 50.0, 0.01}) {
    const json content = {{"content", {{{"id", 1}, {"token", "a"}, {"logprob", -0.1},
                                        {"top_logprobs", {{{"id", 1}, {"token", "a"}, {"logprob", bad}}}}}}}};
    const auto top = server::parse_openai_logprobs(content);
    ASSERT_FALSE(top) << bad;
    EXPECT_THAT(top.error().message, HasSubstr("at most 0")) << bad;
    const auto legacy = server::parse_openai_logprobs({{"tokens", {" a"}}, {"token_logprobs", {bad}}});
    ASSERT_FALSE(legacy) << bad;
    EXPECT_EQ(legacy.error().kind, core::ErrorKind::parse);
  }
  // Rounding a hair above 0 is a probability of 1.
  EXPECT_TRUE(server::parse_openai_logprobs({{"tokens", {" a"}}, {"token_logprobs", {1e-7}}}));
  EXPECT_EQ(server::impossible_logprob(-3.0), "");
  EXPECT_NE(server::impossible_logprob(std::nan("")), "");
  EXPECT_NE(server::impossible_logprob(-std::numeric_limits<double>::infinity()), "");
}

TEST(OpenAiAnswer, AMissingOrImpossibleUsageIsAnErrorNeverZeroTokens) {
  const json choice = {{"text", "a"}, {"finish_reason", "stop"}};
  for (const json& usage : {json(), json{{"prompt_tokens", 3}}, json{{"prompt_tokens", -1}, {"completion_tokens", 2}},
                            json{{"prompt_tokens", 3}, {"completion_tokens", 1.5}},
                            json{{"prompt_tokens", 3}, {"completion_tokens", "2"}},
                            json{{"prompt_tokens", 3}, {"completion_tokens", 2}, {"prompt_tokens_details", {{"cached_tokens", 9}}}}}) {
    json body = {{"choices", {choice}}};
    if (!usage.is_null()) body["usage"] = usage;
    const auto r = server::parse_openai_completion(body, false, 10.0);
    ASSERT_FALSE(r) << usage.dump();
    EXPECT_THAT(r.error().message, HasSubstr("usage")) << usage.dump();
  }
  server::OpenAiStream s(false);
  ASSERT_TRUE(s.add(R"({"choices":[{"text":"a","finish_reason":"stop"}]})"));
  EXPECT_FALSE(s.take(1.0, 2.0));  // no usage chunk: unknown, not 0 tokens
}

TEST(OpenAiModel, TheLaunchedModelIsAskedForNotTheFirstListed) {
  server::OpenAiOptions o;
  o.fallback_model = "/models/Qwen3-8B-Q8_0.gguf";
  EXPECT_EQ(*server::choose_model({"other-model", "Qwen3-8B-Q8_0"}, o), "Qwen3-8B-Q8_0");
  EXPECT_EQ(*server::choose_model({"other-model", "/models/Qwen3-8B-Q8_0.gguf"}, o), "/models/Qwen3-8B-Q8_0.gguf");
  EXPECT_EQ(*server::choose_model({"served-name"}, o), "served-name");  // the only one: vLLM's --served-model-name
  EXPECT_EQ(*server::choose_model({}, o), o.fallback_model);            // nothing listed: asked by path
  const auto several = server::choose_model({"a-model", "b-model"}, o);
  ASSERT_FALSE(several);
  EXPECT_THAT(several.error().message, HasSubstr("a-model, b-model"));
  EXPECT_THAT(several.error().message, HasSubstr("openai.model"));
  o.model = "b-model";
  EXPECT_EQ(*server::choose_model({"a-model", "b-model"}, o), "b-model");
}

TEST(ServerErrors, EveryServersErrorObjectGivesItsMessage) {
  namespace http = kvsweep::http;
  EXPECT_EQ(http::error_message(R"({"error":{"message":"llama says","code":400}})"), "llama says");
  EXPECT_EQ(http::error_message(R"({"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","code":404})"),
            "The model `x` does not exist.");
  EXPECT_EQ(http::error_message(R"({"detail":"Not Found"})"), "Not Found");
  EXPECT_EQ(http::error_message("plain text"), "plain text");
}

TEST(LaunchTemplate, PlaceholdersExpandAndTypesAreSpelledTheServersWay) {
  server::TemplateOptions o;
  o.binary = "/usr/bin/python3";
  o.command = {"{binary}", "-m", "llama_cpp.server", "--model", "{model}", "--host", "{host}", "--port", "{port}",
               "--type_k", "{type_k}", "--type_v", "{type_v}", "--n_ctx", "{ctx}", "--x={type_k}/{unknown}"};
  o.spelling = {{"f16", "1"}, {"q8_0", "8"}};
  server::CellSpec spec;
  spec.model_path = "/m.gguf";
  spec.type_k = "q8_0";
  spec.type_v = "f16";
  spec.n_ctx = 2048;
  spec.extra_args = {"--verbose", "true"};
  const auto argv = server::template_argv(o, spec, 5123);
  const std::vector<std::string> want = {"/usr/bin/python3", "-m", "llama_cpp.server", "--model", "/m.gguf", "--host",
                                         "127.0.0.1", "--port", "5123", "--type_k", "8", "--type_v", "1", "--n_ctx", "2048",
                                         "--x=8/{unknown}", "--verbose", "true"};
  EXPECT_EQ(argv, want);
  EXPECT_EQ(server::unspell(o, "8"), "q8_0");
  EXPECT_EQ(server::unspell(o, "bf16"), "bf16");  // not spelled: as it came
  // A variant's own binary replaces {binary}.
  spec.binary = "/other/python3";
  EXPECT_EQ(server::template_argv(o, spec, 1).front(), "/other/python3");
}

TEST(LaunchTemplate, PrometheusLabelsAreReadFromTheExactMetric) {
  const std::string text =
      "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
      "# TYPE vllm:cache_config_info gauge\n"
      "vllm:cache_config_info_total{cache_dtype=\"wrong\"} 1.0\n"
      "vllm:cache_config_info{block_size=\"16\",cache_dtype=\"fp8_e4m3\",note=\"a \\\"quoted\\\", b\"} 1.0\n";
  EXPECT_EQ(server::prometheus_label(text, "vllm:cache_config_info", "cache_dtype"), "fp8_e4m3");
  EXPECT_EQ(server::prometheus_label(text, "vllm:cache_config_info", "note"), "a \"quoted\", b");
  EXPECT_EQ(server::prometheus_label(text, "vllm:cache_config_info", "swap_space"), std::nullopt);
  EXPECT_EQ(server::prometheus_label(text, "vllm:other", "cache_dtype"), std::nullopt);
}

TEST(LaunchTemplate, ConfirmationFromJsonLogsAndRegexes) {
  server::TemplateOptions o;
  o.spelling = {{"q8_0", "8"}};
  server::KvConfirm json_confirm{server::KvConfirm::Source::http_json, "", "/server_info", "/kv_cache_dtype", "", "", ""};
  std::string why;
  auto e = server::confirm_from_body(json_confirm, o, R"({"kv_cache_dtype":"fp8_e5m2"})", why);
  EXPECT_TRUE(e.found);
  EXPECT_EQ(e.type_k, "fp8_e5m2");
  EXPECT_EQ(e.type_v, "fp8_e5m2");
  e = server::confirm_from_body(json_confirm, o, R"({"model_path":"m"})", why);
  EXPECT_FALSE(e.found);
  EXPECT_EQ(why, "GET /server_info holds no text at /kv_cache_dtype");
  // Two pointers: K and V apart; a number is read as its text, then unspelled.
  server::KvConfirm two{server::KvConfirm::Source::http_json, "", "/props", "/k", "/v", "", ""};
  e = server::confirm_from_body(two, o, R"({"k":8,"v":"f16"})", why);
  EXPECT_EQ(e.type_k, "q8_0");
  EXPECT_EQ(e.type_v, "f16");

  server::KvConfirm regex{server::KvConfirm::Source::log_regex, R"(K \(([a-z0-9_]+)\):[^,]*, V \(([a-z0-9_]+)\))", "", "", "", "", ""};
  const std::string log = "llama_kv_cache: size = 4.00 MiB, K (f16): 2.00 MiB, V (f16): 2.00 MiB\n"
                          "llama_kv_cache: size = 4.00 MiB, K (q8_0): 1.06 MiB, V (q4_0): 0.56 MiB\n";
  e = server::confirm_from_log(regex, o, log);
  EXPECT_TRUE(e.found);
  EXPECT_EQ(e.type_k, "q8_0");  // the newest
  EXPECT_EQ(e.type_v, "q4_0");
  EXPECT_FALSE(server::confirm_from_log(regex, o, "nothing here\n").found);
  server::KvConfirm llama{server::KvConfirm::Source::llama_log, "", "", "", "", "", ""};
  e = server::confirm_from_log(llama, o, "llama_kv_cache: size =   16.00 MiB (  4096 cells,   2 layers,  1/1 seqs), "
                                         "K (q4_0):    4.50 MiB, V (f16):   8.00 MiB\n");
  EXPECT_TRUE(e.found);
  EXPECT_EQ(e.type_k, "q4_0");
  EXPECT_EQ(e.k_mib, 4.5);
  EXPECT_FALSE(server::confirm_from_log(server::KvConfirm{}, o, log).found);  // nothing to read: unverified
}

}  // namespace
