// The divergence probe in both modes against a fake server::Api whose next-token distribution
// is a fixed function of the token prefix (0.6 / 0.3 / 0.05 on three ids, tail 0.05), with
// hooks that perturb the one-token (recomputed) answers at chosen steps.

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/divergence/divergence.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/server/api.hpp"
#include "kvsweep/server/llama/llama_api.hpp"
#include "fake_api.hpp"
#include "metric_declarations.hpp"

using ::testing::HasSubstr;

namespace {

using kvsweep::core::ErrorKind;
using kvsweep::core::Expected;
using kvsweep::core::FatalError;
using kvsweep::probe::CellInfo;
using kvsweep::probe::ConfigSource;
using kvsweep::probe::Context;
using kvsweep::probe::Item;
using kvsweep::probe::ItemResult;
using kvsweep::probe::Record;
using kvsweep::probe::Probe;
using kvsweep::server::CompletionRequest;
using kvsweep::server::CompletionResponse;
using kvsweep::server::TokenLogprob;
using kvsweep::server::TopLogprob;
using nlohmann::json;
using Tokens = std::vector<std::int32_t>;

constexpr std::int32_t kEos = 2;
const Tokens kPrompt = {1, 10, 11, 12};

/// The fake model: after `seq`, ids a, a+1, a+2 with probabilities 0.6, 0.3, 0.05 (tail 0.05).
std::vector<TopLogprob> model_top(const Tokens& seq) {
  const auto a = static_cast<std::int32_t>(100 + (seq.size() * 7 + static_cast<std::size_t>(seq.back())) % 50);
  return {{a, "", std::log(0.6)}, {a + 1, "", std::log(0.3)}, {a + 2, "", std::log(0.05)}};
}

std::int32_t argmax(const std::vector<TopLogprob>& top) {
  const TopLogprob* best = &top.front();
  for (const auto& t : top)
    if (t.logprob > best->logprob) best = &t;
  return best->id;
}

/// Swaps the probabilities of the first two listed ids (the argmax changes).
void swap_first_two(std::vector<TopLogprob>& top) { std::swap(top[0].logprob, top[1].logprob); }

/// The fake model behind a scripted FakeApi: a completion runs it (ids, top logprobs), any text
/// tokenizes to kPrompt, ids detokenize to "w<id>". Its knobs perturb the one-token (recomputed)
/// answers, end the generation at a step, fail one call or drop the ids.
struct ModelServer {
  std::function<void(std::size_t step, std::vector<TopLogprob>&)> perturb;
  std::optional<std::size_t> eos_at;
  int fail_on_call = 0;
  bool no_ids = false;
  kvsweep::testing::FakeApi api;

  ModelServer() {
    api.on_complete = [this](const CompletionRequest& r, int call) { return complete(r, call); };
    api.on_tokenize = [](const std::string&, bool) -> Expected<Tokens> { return kPrompt; };
    api.on_detokenize = [](const Tokens& tokens) -> Expected<std::string> {
      std::string s;
      for (auto t : tokens) s += "w" + std::to_string(t);
      return s;
    };
  }
  ModelServer(const ModelServer&) = delete;  // the api's scripts point at this one
  ModelServer& operator=(const ModelServer&) = delete;

  Expected<CompletionResponse> complete(const CompletionRequest& r, int call) const {
    if (fail_on_call == call) return kvsweep::core::fail(ErrorKind::connect, "fake: connection refused");
    Tokens seq = r.tokens;
    CompletionResponse out;
    out.stop_type = "limit";
    for (int i = 0; i < r.n_predict; ++i) {
      const std::size_t step = seq.size() - kPrompt.size();
      std::vector<TopLogprob> top = model_top(seq);
      if (eos_at == step) top = {{kEos, "", std::log(0.7)}, {top[0].id, "", std::log(0.2)}, {top[1].id, "", std::log(0.05)}};
      if (r.n_predict == 1 && perturb) perturb(step, top);
      if (no_ids) for (auto& t : top) t.id = -1;
      const std::int32_t token = no_ids ? -1 : argmax(top);
      double lp = 0;
      for (const auto& t : top)
        if (t.id == token) lp = t.logprob;
      out.probs.push_back({token, "", lp, top});
      out.tokens.push_back(token);
      out.content += "w" + std::to_string(token);
      seq.push_back(token);
      if (token == kEos) {
        out.stop_type = "eos";
        break;
      }
    }
    out.timings.prompt_n = static_cast<int>(r.tokens.size());
    out.timings.predicted_n = static_cast<int>(out.tokens.size());
    out.timings.prompt_ms = 1.0;
    out.timings.predicted_ms = 0.5;
    return out;
  }

  /// Each complete_each call's cache_prompt.
  std::vector<bool> each_cache_prompt() const {
    std::vector<bool> out;
    for (const auto& r : api.each_requests) out.push_back(r.cache_prompt);
    return out;
  }
};

std::unique_ptr<Probe> make(json cfg) {
  cfg["kind"] = "divergence";
  if (!cfg.contains("prompts")) cfg["prompts"] = {"Once upon a time"};
  return kvsweep::probe::make_divergence_probe(cfg, ConfigSource{{"test.json", "probes[0]"}, "/nonexistent"});
}

Expected<ItemResult> run(Probe& probe, ModelServer& server, bool is_reference = false,
                         const std::vector<Record>* reference = nullptr) {
  CellInfo cell;
  cell.model = "tiny";
  cell.type_k = is_reference ? "f16" : "q4_0";
  cell.type_v = cell.type_k;
  cell.is_reference = is_reference;
  Context ctx{server.api, cell, nullptr, reference};
  return probe.run(probe.items().at(0), ctx);
}

/// The greedy path of the fake model after kPrompt.
Tokens greedy(std::size_t n) {
  Tokens seq = kPrompt;
  for (std::size_t i = 0; i < n; ++i) seq.push_back(argmax(model_top(seq)));
  return Tokens(seq.begin() + static_cast<std::ptrdiff_t>(kPrompt.size()), seq.end());
}

Tokens prefix(const Tokens& path, std::size_t t) {
  Tokens out = kPrompt;
  out.insert(out.end(), path.begin(), path.begin() + static_cast<std::ptrdiff_t>(t));
  return out;
}

void expect_greedy_and_explicit(const CompletionRequest& r, int top_n) {
  EXPECT_EQ(r.temperature, 0.0);
  EXPECT_EQ(r.top_p, 1.0);
  EXPECT_EQ(r.min_p, 0.0);
  EXPECT_EQ(r.top_k, 40);
  EXPECT_EQ(r.seed, 42u);
  EXPECT_EQ(r.n_probs, top_n);
  EXPECT_TRUE(r.prompt.empty());
  EXPECT_TRUE(r.messages.empty());
  // Every sampling field reaches the wire, and the prompt is a token array.
  const json body = kvsweep::server::completion_body(r);
  for (const char* key : {"temperature", "top_k", "top_p", "min_p", "seed", "typical_p", "repeat_penalty",
                          "repeat_last_n", "presence_penalty", "frequency_penalty", "dry_multiplier",
                          "xtc_probability", "top_n_sigma", "mirostat", "n_probs", "cache_prompt", "n_predict"})
    EXPECT_TRUE(body.contains(key)) << key;
  EXPECT_TRUE(body["prompt"].is_array());
  EXPECT_EQ(body["prompt"].get<Tokens>(), r.tokens);
}

// ---- mode cache ------------------------------------------------------------------------------

TEST(DivergenceProbe, CacheModeIdenticalPathsScoreZeroWithACensoredFlipIndex) {
  ModelServer server;
  auto probe = make({{"tokens", 5}, {"top_n", 3}});
  auto res = run(*probe, server);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->metrics["diverged"], 0);
  EXPECT_EQ(res->metrics["flip_index"], 5);  // no flip: `tokens`, the first step outside the window
  EXPECT_EQ(res->metrics["mean_kl"], 0.0);
  EXPECT_EQ(res->metrics["max_kl"], 0.0);
  EXPECT_EQ(res->metrics["mean_js"], 0.0);
  EXPECT_EQ(res->metrics["same_top1_rate"], 1.0);
  EXPECT_EQ(res->metrics["n_steps"], 5);
  EXPECT_EQ(res->response["tokens"].get<Tokens>(), greedy(5));
  EXPECT_EQ(res->response["free_tokens"].get<Tokens>(), greedy(5));
  EXPECT_EQ(res->response["kl"].size(), 5u);
  EXPECT_EQ(res->response["top"], res->response["forced_top"]);
  // One generation and five recomputed steps; the free-running path reuses them (identical requests).
  EXPECT_EQ(server.api.requests.size(), 6u);
  EXPECT_TRUE(server.api.detokenized.empty());
  // Timings are summed over the requests.
  EXPECT_EQ(res->timings.predicted_n, 5 + 5);
}

TEST(DivergenceProbe, CacheModeRequestShapes) {
  ModelServer server;
  auto probe = make({{"tokens", 4}, {"top_n", 3}});
  ASSERT_TRUE(run(*probe, server));
  ASSERT_EQ(server.api.tokenized.size(), 1u);
  EXPECT_EQ(server.api.tokenized[0].first, "Once upon a time");
  EXPECT_TRUE(server.api.tokenized[0].second);  // add_special: BOS as a string prompt would get it
  ASSERT_EQ(server.api.requests.size(), 5u);
  // (a) cache-ON: one greedy generation; the prompt prefilled from scratch.
  const auto& gen = server.api.requests[0];
  expect_greedy_and_explicit(gen, 3);
  EXPECT_EQ(gen.tokens, kPrompt);
  EXPECT_EQ(gen.n_predict, 4);
  EXPECT_FALSE(gen.cache_prompt);
  // (b) cache-OFF teacher-forced: prompt + the first t generated tokens, one token, no cache.
  const Tokens path = greedy(4);
  for (std::size_t t = 0; t < 4; ++t) {
    const auto& r = server.api.requests[1 + t];
    expect_greedy_and_explicit(r, 3);
    EXPECT_EQ(r.tokens, prefix(path, t)) << "step " << t;
    EXPECT_EQ(r.n_predict, 1);
    EXPECT_FALSE(r.cache_prompt);
  }
}

TEST(DivergenceProbe, CacheModeFlipAtStepTwoContinuesFreeRunningOnItsOwnTokens) {
  ModelServer server;
  server.perturb = [](std::size_t step, std::vector<TopLogprob>& top) {
    if (step == 2) swap_first_two(top);
  };
  auto probe = make({{"tokens", 5}, {"top_n", 3}});
  auto res = run(*probe, server);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->metrics["diverged"], 1);
  EXPECT_EQ(res->metrics["flip_index"], 2);
  EXPECT_DOUBLE_EQ(res->metrics["same_top1_rate"].get<double>(), 4.0 / 5.0);
  // Step 2: KL(cache-ON {0.6, 0.3, 0.05 | tail 0.05} ‖ cache-OFF {0.3, 0.6, 0.05 | 0.05})
  // = 0.6 ln(0.6/0.3) + 0.3 ln(0.3/0.6) = 0.3 ln 2 = 0.2079442; JS with M = {0.45, 0.45, …} = 0.0509697.
  const auto kl = res->response["kl"].get<std::vector<double>>();
  const auto js = res->response["js"].get<std::vector<double>>();
  ASSERT_EQ(kl.size(), 5u);
  EXPECT_NEAR(kl[2], 0.2079442, 1e-6);
  EXPECT_NEAR(js[2], 0.0509697, 1e-6);
  for (std::size_t t : {0u, 1u, 3u, 4u}) EXPECT_NEAR(kl[t], 0.0, 1e-12) << t;
  EXPECT_NEAR(res->metrics["max_kl"].get<double>(), 0.2079442, 1e-6);
  EXPECT_NEAR(res->metrics["mean_kl"].get<double>(), 0.2079442 / 5, 1e-6);
  EXPECT_NEAR(res->metrics["mean_js"].get<double>(), 0.0509697 / 5, 1e-6);

  // The free-running path takes the recomputed token at step 2, then asks for steps 3 and 4 on
  // its own prefix, from scratch.
  const Tokens on = greedy(5);
  Tokens free = res->response["free_tokens"].get<Tokens>();
  ASSERT_EQ(free.size(), 5u);
  EXPECT_EQ(Tokens(free.begin(), free.begin() + 2), Tokens(on.begin(), on.begin() + 2));
  EXPECT_EQ(free[2], on[2] + 1);  // the second listed id won after the swap
  ASSERT_EQ(server.api.requests.size(), 1u + 5u + 2u);
  for (std::size_t t = 3; t < 5; ++t) {
    const auto& r = server.api.requests[6 + t - 3];
    EXPECT_EQ(r.tokens, prefix(free, t));
    EXPECT_EQ(r.n_predict, 1);
    EXPECT_FALSE(r.cache_prompt);
  }
  ASSERT_EQ(server.api.detokenized.size(), 1u);
  EXPECT_EQ(server.api.detokenized[0], free);
}

TEST(DivergenceProbe, TailMassOutsideTheTopNIsOneBucket) {
  ModelServer server;
  server.perturb = [](std::size_t step, std::vector<TopLogprob>& top) {
    if (step == 0) top[1].logprob = std::log(0.2);  // tail grows from 0.05 to 0.15
  };
  auto probe = make({{"tokens", 3}, {"top_n", 3}});
  auto res = run(*probe, server);
  ASSERT_TRUE(res) << res.error().message;
  // KL(cache-ON {0.6, 0.3, 0.05 | tail 0.05} ‖ cache-OFF {0.6, 0.2, 0.05 | tail 0.15})
  // = 0.3 ln(0.3/0.2) + 0.05 ln(0.05/0.15) = 0.0667089. Renormalising each top-n to 1 instead
  // would give 0.0168; dropping the tail bucket, 0.1216.
  EXPECT_NEAR(res->response["kl"][0].get<double>(), 0.0667089, 1e-6);
  EXPECT_EQ(res->metrics["diverged"], 0);
}

TEST(DivergenceProbe, EosEndsBothPaths) {
  ModelServer server;
  server.eos_at = 3;
  auto probe = make({{"tokens", 6}, {"top_n", 3}});
  auto res = run(*probe, server);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->response["stop_type"], "eos");
  const auto tokens = res->response["tokens"].get<Tokens>();
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens.back(), kEos);
  EXPECT_EQ(res->response["free_tokens"].get<Tokens>(), tokens);
  EXPECT_EQ(res->metrics["n_steps"], 4);
  EXPECT_EQ(res->metrics["diverged"], 0);
  EXPECT_EQ(res->metrics["flip_index"], 6);
  EXPECT_EQ(server.api.requests.size(), 1u + 4u);  // nothing is asked after the end-of-generation token
}

TEST(DivergenceProbe, ARepeatedRunGivesIdenticalNumbers) {
  auto once = [] {
    ModelServer server;
    server.perturb = [](std::size_t step, std::vector<TopLogprob>& top) {
      if (step == 1) top[2].logprob = std::log(0.01);
    };
    auto probe = make({{"tokens", 8}, {"top_n", 3}});
    auto res = run(*probe, server);
    EXPECT_TRUE(res);
    return json{{"metrics", res->metrics}, {"response", res->response}}.dump();
  };
  EXPECT_EQ(once(), once());
}

TEST(DivergenceProbe, AFailedRequestFailsTheItem) {
  ModelServer server;
  server.fail_on_call = 3;
  auto probe = make({{"tokens", 4}});
  auto res = run(*probe, server);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::connect);
}

TEST(DivergenceProbe, TopListsWithoutIdsAreUnsupported) {
  ModelServer server;
  server.no_ids = true;
  auto probe = make({{"tokens", 2}});
  auto res = run(*probe, server);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::unsupported);
}

// ---- mode reference --------------------------------------------------------------------------

/// The record the reference cell writes for p0 (as the run store would hold it).
Record reference_record(std::size_t tokens) {
  ModelServer server;
  auto probe = make({{"mode", "reference"}, {"tokens", tokens}, {"top_n", 3}});
  auto res = run(*probe, server, /*is_reference=*/true);
  EXPECT_TRUE(res);
  Record r;
  r.item = "p0";
  r.status = kvsweep::probe::ItemStatus::ok;
  r.response = res->response;
  r.metrics = res->metrics;
  return r;
}

TEST(DivergenceProbe, ReferenceModeOnTheReferenceCellRecordsItsPathAndItsOwnFloor) {
  ModelServer server;
  auto probe = make({{"mode", "reference"}, {"tokens", 4}, {"top_n", 3}});
  EXPECT_EQ(probe->name(), "divergence-reference");
  auto res = run(*probe, server, /*is_reference=*/true);
  ASSERT_TRUE(res) << res.error().message;
  const Tokens path = greedy(4);
  EXPECT_EQ(res->response["prompt_tokens"].get<Tokens>(), kPrompt);
  EXPECT_EQ(res->response["tokens"].get<Tokens>(), path);
  ASSERT_EQ(res->response["top"].size(), 4u);
  EXPECT_EQ(res->response["top"][0][0][0].get<std::int32_t>(), path[0]);
  EXPECT_NEAR(res->response["top"][0][0][1].get<double>(), std::log(0.6), 1e-12);
  EXPECT_EQ(res->metrics["mean_kl"], 0.0);
  EXPECT_EQ(res->metrics["same_top1_rate"], 1.0);
  EXPECT_EQ(res->metrics["flip_index"], 4);
  // The generation, then the path recomputed one step per request: the first step from
  // scratch, later ones reusing the slot's cache (each evaluates one new token).
  ASSERT_EQ(server.api.requests.size(), 5u);
  EXPECT_FALSE(server.api.requests[0].cache_prompt);
  EXPECT_EQ(server.api.requests[0].n_predict, 4);
  for (std::size_t t = 0; t < 4; ++t) {
    const auto& r = server.api.requests[1 + t];
    expect_greedy_and_explicit(r, 3);
    EXPECT_EQ(r.tokens, prefix(path, t));
    EXPECT_EQ(r.n_predict, 1);
    EXPECT_EQ(r.cache_prompt, t > 0) << "step " << t;
  }
}

TEST(DivergenceProbe, ReferenceModeComparesACellWithTheReferenceDistributions) {
  const std::vector<Record> reference = {reference_record(5)};
  ModelServer server;
  server.perturb = [](std::size_t step, std::vector<TopLogprob>& top) {
    if (step == 1) swap_first_two(top);
    if (step == 3) top[1].logprob = std::log(0.2);
  };
  auto probe = make({{"mode", "reference"}, {"tokens", 5}, {"top_n", 3}});
  auto res = run(*probe, server, /*is_reference=*/false, &reference);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_TRUE(server.api.tokenized.empty());  // the reference's prompt tokens are used as recorded
  const Tokens path = greedy(5);
  ASSERT_EQ(server.api.requests.size(), 5u);  // teacher-forced only: no generation of its own
  for (std::size_t t = 0; t < 5; ++t) {
    EXPECT_EQ(server.api.requests[t].tokens, prefix(path, t));
    EXPECT_EQ(server.api.requests[t].n_predict, 1);
    EXPECT_EQ(server.api.requests[t].cache_prompt, t > 0);
  }
  // KL(reference ‖ cell): step 1 swapped, 0.3 ln 2; step 3 with a larger tail, by the tail bucket
  // KL({0.6, 0.3, 0.05 | 0.05} ‖ {0.6, 0.2, 0.05 | 0.15}) = 0.3 ln(0.3/0.2) + 0.05 ln(0.05/0.15).
  const auto kl = res->response["kl"].get<std::vector<double>>();
  EXPECT_NEAR(kl[1], 0.3 * std::log(2.0), 1e-9);
  EXPECT_NEAR(kl[3], 0.3 * std::log(1.5) + 0.05 * std::log(1.0 / 3.0), 1e-9);
  EXPECT_NEAR(kl[0] + kl[2] + kl[4], 0.0, 1e-12);
  EXPECT_EQ(res->metrics["flip_index"], 1);  // the cell's argmax leaves the reference token at step 1
  EXPECT_EQ(res->metrics["diverged"], 1);
  EXPECT_DOUBLE_EQ(res->metrics["same_top1_rate"].get<double>(), 4.0 / 5.0);
  EXPECT_EQ(res->response["argmax"][1].get<std::int32_t>(), path[1] + 1);
  // The cell's own lists are kept raw, for rescoring.
  ASSERT_EQ(res->response["forced_top"].size(), 5u);
  EXPECT_NEAR(res->response["forced_top"][3][1][1].get<double>(), std::log(0.2), 1e-12);
  EXPECT_FALSE(res->response.contains("top"));
}

// ---- requests per item (one request per step would mostly wait on the network) -----

TEST(DivergenceProbe, CacheModeSendsAllForcedStepsInOneMultiPromptCall) {
  ModelServer server;
  auto probe = make({{"tokens", 5}, {"top_n", 3}});
  ASSERT_TRUE(run(*probe, server));
  EXPECT_EQ(server.api.each_prompts, (std::vector<std::size_t>{5}));
  EXPECT_EQ(server.each_cache_prompt(), (std::vector<bool>{false}));  // every step from scratch
}

TEST(DivergenceProbe, ReferenceModeSendsTheFirstStepAloneAndTheRestInOneCall) {
  // The first step is prefilled from scratch, the rest reuse the slot: cache_prompt is per request.
  ModelServer server;
  auto probe = make({{"tokens", 5}, {"top_n", 3}, {"mode", "reference"}});
  auto res = run(*probe, server, /*is_reference=*/true);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(server.api.each_prompts, (std::vector<std::size_t>{1, 4}));
  EXPECT_EQ(server.each_cache_prompt(), (std::vector<bool>{false, true}));
  // The answers come back in step order: the reference cell recomputes its own path exactly.
  EXPECT_EQ(res->response["argmax"].get<Tokens>(), greedy(5));
}

TEST(DivergenceProbe, LongPathsAreSplitIntoCallsOfAtMost64Steps) {
  ModelServer server;
  auto probe = make({{"tokens", 100}, {"top_n", 3}});
  auto res = run(*probe, server);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(server.api.each_prompts, (std::vector<std::size_t>{64, 36}));
  EXPECT_EQ(res->response["argmax"].get<Tokens>(), greedy(100));
}

TEST(DivergenceProbe, ReferenceModeWithoutAReferenceRecordIsAnItemError) {
  ModelServer server;
  auto probe = make({{"mode", "reference"}, {"tokens", 3}});
  const std::vector<Record> none;
  auto res = run(*probe, server, false, &none);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::invalid);
  EXPECT_THAT(res.error().message, HasSubstr("p0"));
  EXPECT_TRUE(server.api.requests.empty());

  Record broken_record;
  broken_record.item = "p0";
  broken_record.status = kvsweep::probe::ItemStatus::ok;
  broken_record.response = {{"content", "x"}};
  const std::vector<Record> broken = {broken_record};
  auto res2 = run(*probe, server, false, &broken);
  ASSERT_FALSE(res2);
  EXPECT_EQ(res2.error().kind, ErrorKind::parse);
}

// ---- config ----------------------------------------------------------------------------------

std::string config_error(json cfg) {
  try {
    make(std::move(cfg));
  } catch (const FatalError& e) {
    return e.message;
  }
  return "";
}

TEST(DivergenceProbeConfig, DefaultsItemsAndNames) {
  auto probe = make(json::object());
  EXPECT_EQ(probe->kind(), "divergence");
  EXPECT_EQ(probe->name(), "divergence-cache");
  auto items = probe->items();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].key, "p0");
  EXPECT_EQ(items[0].spec["prompt"], "Once upon a time");
  EXPECT_EQ(make({{"name", "div"}})->name(), "div");
  auto defaults = kvsweep::probe::make_divergence_probe({{"kind", "divergence"}}, ConfigSource{{"t.json", "probes[0]"}, "."});
  EXPECT_GE(defaults->items().size(), 4u);  // the built-in prompt set
}

TEST(DivergenceProbeConfig, ErrorsNameTheKeyAndSuggest) {
  EXPECT_EQ(config_error({{"tokns", 3}}).find("test.json: probes[0]"), 0u);
  EXPECT_THAT(config_error({{"tokns", 3}}), HasSubstr("tokens"));
  const std::string mode = config_error({{"mode", "refrence"}});
  EXPECT_THAT(mode, HasSubstr("probes[0].mode")) << mode;
  EXPECT_THAT(mode, HasSubstr("did you mean 'reference'")) << mode;
  EXPECT_THAT(config_error({{"tokens", 0}}), HasSubstr("probes[0].tokens"));
  EXPECT_THAT(config_error({{"top_n", 0}}), HasSubstr("probes[0].top_n"));
}

TEST(DivergenceProbeConfig, PromptsFilePlainAndJsonl) {
  const auto dir = std::filesystem::temp_directory_path() / ("kvsweep-div-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "p.txt") << "first prompt\n\nsecond prompt\r\n";
  std::ofstream(dir / "p.jsonl") << "{\"prompt\": \"a \\\"quoted\\\" one\"}\n\n{\"prompt\": \"line\\nbreak\"}\n";
  std::ofstream(dir / "bad.jsonl") << "{\"prompt\": \"ok\"}\n{\"text\": \"no\"}\n";
  const ConfigSource site{{"c.json", "probes[1]"}, dir};
  auto plain = kvsweep::probe::make_divergence_probe({{"kind", "divergence"}, {"prompts_file", "p.txt"}}, site);
  ASSERT_EQ(plain->items().size(), 2u);
  EXPECT_EQ(plain->items()[1].spec["prompt"], "second prompt");
  auto jsonl = kvsweep::probe::make_divergence_probe({{"kind", "divergence"}, {"prompts_file", "p.jsonl"}}, site);
  ASSERT_EQ(jsonl->items().size(), 2u);
  EXPECT_EQ(jsonl->items()[0].spec["prompt"], "a \"quoted\" one");
  EXPECT_EQ(jsonl->items()[1].spec["prompt"], "line\nbreak");
  try {
    kvsweep::probe::make_divergence_probe({{"kind", "divergence"}, {"prompts_file", "bad.jsonl"}}, site);
    FAIL() << "expected a FatalError";
  } catch (const FatalError& e) {
    EXPECT_THAT(e.message, HasSubstr("probes[1].prompts_file")) << e.message;
    EXPECT_THAT(e.message, HasSubstr("bad.jsonl:2")) << e.message;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace

TEST(DivergenceProbe, DeclaresExactlyTheMetricsBothModesEmit) {
  ModelServer server;
  auto cache = make({{"tokens", 4}, {"top_n", 3}});
  auto res = run(*cache, server);
  ASSERT_TRUE(res) << res.error().message;
  kvsweep::probe::testing::expect_declarations_match(*cache, res->metrics);
  EXPECT_TRUE(cache->deterministic());

  const std::vector<Record> reference = {reference_record(4)};
  ModelServer server2;
  auto ref = make({{"mode", "reference"}, {"tokens", 4}, {"top_n", 3}});
  auto cell = run(*ref, server2, /*is_reference=*/false, &reference);
  ASSERT_TRUE(cell) << cell.error().message;
  kvsweep::probe::testing::expect_declarations_match(*ref, cell->metrics);
  // n_steps counts steps: reported, never gated; the divergence metrics are gated in their direction.
  const auto specs = ref->metrics();
  EXPECT_EQ(kvsweep::probe::find_metric(specs, "n_steps")->role, kvsweep::probe::MetricRole::diagnostic);
  EXPECT_EQ(kvsweep::probe::find_metric(specs, "diverged")->kind, kvsweep::probe::MetricKind::binary);
  EXPECT_FALSE(kvsweep::probe::find_metric(specs, "mean_kl")->higher_is_better());
}
