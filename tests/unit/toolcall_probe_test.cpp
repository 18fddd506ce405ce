// The toolcall probe against a scripted fake server::Api: items, requests in JSON and native
// mode, the filler calibrated against the server's tokenizer, and lengths beyond the context.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/toolcall/toolcall.hpp"
#include "kvsweep/server/api.hpp"
#include "fake_api.hpp"
#include "metric_declarations.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {

using kvsweep::core::ErrorKind;
using kvsweep::core::Expected;
using kvsweep::probe::ConfigSource;
using nlohmann::json;

ConfigSource site() { return {{"sweep.json", "probes[0]"}, "/tmp"}; }

/// The probe against a server that answers every chat with `answer`, or fails as llama-server does
/// past its context (`fail_exceed`), and tokenizes at `chars_per_token` (0: no tokenizer).
struct ProbeRun {
  std::unique_ptr<kvsweep::probe::Probe> probe;
  kvsweep::server::CompletionResponse answer;
  double chars_per_token = 0;
  bool fail_exceed = false;
  kvsweep::testing::FakeApi api;
  kvsweep::probe::CellInfo cell;

  explicit ProbeRun(const json& cfg) : probe(kvsweep::probe::make_toolcall_probe(cfg, site())) {
    cell.n_ctx = 1 << 20;
    api.on_complete = [this](const kvsweep::server::CompletionRequest&,
                             int) -> Expected<kvsweep::server::CompletionResponse> {
      if (fail_exceed)
        // What http::Client makes of llama-server's exceed_context_size_error (servers.md A3).
        return kvsweep::core::fail(ErrorKind::http_status,
                                   "POST /v1/chat/completions: HTTP 400: request (3000 tokens) exceeds the available "
                                   "context size (2048 tokens), try increasing it",
                                   400);
      kvsweep::server::CompletionResponse out = answer;
      out.timings.prompt_n = 100;
      out.timings.cache_n = 20;
      return out;
    };
    api.on_tokenize = [this](const std::string& text, bool) -> Expected<std::vector<std::int32_t>> {
      if (chars_per_token <= 0) return kvsweep::core::fail(ErrorKind::unsupported, "fake: no tokenizer");
      return std::vector<std::int32_t>(static_cast<std::size_t>(static_cast<double>(text.size()) / chars_per_token), 1);
    };
  }
  ProbeRun(const ProbeRun&) = delete;  // the api's scripts point at this one
  ProbeRun& operator=(const ProbeRun&) = delete;

  Expected<kvsweep::probe::ItemResult> run(std::size_t i) {
    kvsweep::probe::Context ctx{api, cell, nullptr, nullptr};
    return probe->run(probe->items().at(i), ctx);
  }
};

TEST(ToolcallProbe, ItemsAreLengthsTimesSeeds) {
  ProbeRun r({{"kind", "toolcall"}, {"lengths", {1024, 4096}}, {"seeds", {5, 9}}, {"tools", 5}, {"max_tokens", 64}});
  auto items = r.probe->items();
  std::vector<std::string> keys;
  for (const auto& i : items) keys.push_back(i.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"L1024-s5", "L1024-s9", "L4096-s5", "L4096-s9"}));
  EXPECT_EQ(items[0].spec["tool"], items[2].spec["tool"]);
  EXPECT_EQ(items[0].spec["arguments"], items[2].spec["arguments"]);
  EXPECT_EQ(r.probe->min_context(), 4096 + 64 + 512);
  auto metrics = r.probe->metrics();
  ASSERT_EQ(metrics.size(), 6u + 12u);
  EXPECT_EQ(metrics[0].name, "all_correct");
  EXPECT_EQ(metrics[6].name, "all_correct_L1024");
  EXPECT_EQ(metrics[17].name, "args_exact_L4096");
}

TEST(ToolcallProbe, JsonModeScoresTheAnswerAndSendsGreedyCachedChat) {
  ProbeRun r({{"kind", "toolcall"}, {"lengths", {1024, 2048}}, {"seeds", {5}}, {"tools", 4}, {"max_tokens", 64}});
  auto item = r.probe->items().at(1);
  json answer = {{"tool", item.spec["tool"]}, {"arguments", item.spec["arguments"]}};
  r.answer.content = "```json\n" + answer.dump() + "\n```";
  auto res = r.run(1);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->metrics["all_correct"], 1);
  EXPECT_EQ(res->metrics["all_correct_L2048"], 1);
  EXPECT_FALSE(res->metrics.contains("all_correct_L1024"));
  EXPECT_EQ(res->response["prompt_tokens"], 120);
  EXPECT_EQ(res->response["call"]["name"], item.spec["tool"]);
  ASSERT_EQ(r.api.requests.size(), 1u);
  const auto& req = r.api.requests[0];
  ASSERT_EQ(req.messages.size(), 2u);
  EXPECT_EQ(req.messages[0].role, "system");
  EXPECT_THAT(req.messages[0].content, HasSubstr("\"name\":\"" + item.spec["tool"].get<std::string>() + "\""));
  EXPECT_EQ(req.temperature, 0.0);
  EXPECT_TRUE(req.cache_prompt);
  EXPECT_EQ(req.n_predict, 64);
  EXPECT_FALSE(req.extra.contains("tools"));
  // Without a tokenizer the characters stand at 3.5 per token.
  const double chars = static_cast<double>(req.messages[0].content.size() + req.messages[1].content.size());
  EXPECT_NEAR(chars / 2048.0, kvsweep::corpus::kCharsPerToken, 0.3);

  // A wrong answer is a scored 0, not an error.
  r.answer.content = "I cannot help with that.";
  res = r.run(0);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->metrics["parsed"], 0);
  EXPECT_EQ(res->metrics["all_correct_L1024"], 0);
}

TEST(ToolcallProbe, NativeModeSendsToolsAndReadsToolCalls) {
  ProbeRun r({{"kind", "toolcall"}, {"lengths", {2048}}, {"seeds", {2}}, {"tools", 4}, {"mode", "native"},
              {"chat_template_kwargs", {{"enable_thinking", false}}}});
  auto item = r.probe->items().at(0);
  r.answer.content = "";
  r.answer.tool_calls = json::array({{{"type", "function"},
                                          {"function", {{"name", item.spec["tool"]}, {"arguments", item.spec["arguments"].dump()}}}}});
  auto res = r.run(0);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->metrics["all_correct"], 1);
  EXPECT_FALSE(res->metrics.contains("all_correct_L2048"));  // one length: no per-length copies
  const auto& req = r.api.requests.at(0);
  ASSERT_TRUE(req.extra.contains("tools"));
  EXPECT_EQ(req.extra["tools"].size(), 4u);
  EXPECT_EQ(req.extra["tools"][0]["type"], "function");
  EXPECT_EQ(req.extra["tool_choice"], "auto");
  EXPECT_EQ(req.extra["chat_template_kwargs"]["enable_thinking"], false);
  // The schemas travel as tools, not in the system message.
  EXPECT_THAT(req.messages[0].content, Not(HasSubstr("\"parameters\"")));
}

TEST(ToolcallProbe, CalibratesTheFillerAgainstTheServersTokenizer) {
  ProbeRun r({{"kind", "toolcall"}, {"lengths", {4096}}, {"seeds", {3}}, {"tools", 4}});
  r.chars_per_token = 2.0;  // a tokenizer much denser than the 3.5 estimate
  r.answer.content = "{}";
  auto res = r.run(0);
  ASSERT_TRUE(res) << res.error().message;
  ASSERT_EQ(r.api.tokenized.size(), 2u);  // the prompt without filler, then with it
  EXPECT_NEAR(res->response["calibration"]["filler_chars_per_token"].get<double>(), 2.0, 0.01);
  EXPECT_GT(res->response["calibration"]["fixed_tokens"].get<int>(), 500);
  EXPECT_LT(res->response["calibration"]["fixed_tokens"].get<int>(), res->response["calibration"]["first_tokens"].get<int>());
  const auto& req = r.api.requests.at(0);
  const double chars = static_cast<double>(req.messages[0].content.size() + req.messages[1].content.size());
  EXPECT_NEAR(chars / 4096.0, 2.0, 0.1);
}

TEST(ToolcallProbe, LengthsBeyondTheContextAreItemErrors) {
  ProbeRun r({{"kind", "toolcall"}, {"lengths", {1024, 8192}}, {"seeds", {1}}, {"tools", 4}, {"max_tokens", 64}});
  r.cell.n_ctx = 4096;
  auto res = r.run(1);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::exceeds_context);
  EXPECT_EQ(res.error().message.rfind("exceeds context: L8192-s1 needs 8192 prompt + 64 answer tokens", 0), 0u)
      << res.error().message;
  EXPECT_TRUE(r.api.requests.empty());
  // The server's own refusal (its context turned out smaller than asked) reads the same.
  r.fail_exceed = true;
  res = r.run(0);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::exceeds_context);
  EXPECT_EQ(res.error().message.rfind("exceeds context: L1024-s1: ", 0), 0u) << res.error().message;
}

}  // namespace

TEST(ToolcallProbe, DeclaresExactlyTheMetricsItsItemsEmit) {
  for (const json& lengths : {json::array({1024}), json::array({1024, 2048})}) {
    ProbeRun r({{"kind", "toolcall"}, {"lengths", lengths}, {"seeds", {5}}, {"tools", 4}, {"max_tokens", 64}});
    std::vector<json> emitted;
    for (std::size_t i = 0; i < r.probe->items().size(); ++i) {
      r.answer.content = "not a call";
      auto res = r.run(i);
      ASSERT_TRUE(res) << res.error().message;
      emitted.push_back(res->metrics);
    }
    kvsweep::probe::testing::expect_declarations_match(*r.probe, emitted);
    for (const auto& m : r.probe->metrics()) EXPECT_EQ(m.kind, kvsweep::probe::MetricKind::binary) << m.name;
  }
}
