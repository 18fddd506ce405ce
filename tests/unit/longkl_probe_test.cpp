// The longkl probe against a fake server::Api that keeps a slot's prompt cache the way llama-server
// does (the common prefix is reused; a prompt the cache already holds re-evaluates its last token)
// and reports timings.prompt_n / cache_n; its next-token distribution is a fixed function of the
// prompt, which a "cell" may perturb. Also the KL bound (score::top_kl_bound) and the depth schedule.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/longkl/longkl.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/score/top_kl.hpp"
#include "fake_api.hpp"

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
using kvsweep::probe::Probe;
using kvsweep::probe::Record;
using kvsweep::score::IdLogprob;
using kvsweep::server::CompletionRequest;
using kvsweep::server::CompletionResponse;
using kvsweep::server::TokenLogprob;
using kvsweep::server::TopLogprob;
using nlohmann::json;
using Tokens = std::vector<std::int32_t>;

// ---- the bound ----

std::vector<IdLogprob> list(std::vector<std::pair<std::int32_t, double>> probs) {
  std::vector<IdLogprob> out;
  for (auto [id, p] : probs) out.push_back({id, std::log(p)});
  return out;
}

TEST(TopKlBound, IdenticalListsAreExactlyZero) {
  const auto p = list({{5, 0.5}, {7, 0.25}, {9, 0.125}});
  const auto b = kvsweep::score::top_kl_bound(p, p);
  EXPECT_EQ(b.kl, 0.0);
  EXPECT_TRUE(b.same_top1);
  EXPECT_EQ(b.dp, 0.0);
  EXPECT_EQ(b.outside, 0);
}

TEST(TopKlBound, SharedIdsAndOneTailBucketByHand) {
  // Reference: 0.5, 0.3 (tail 0.2). Cell: 0.4, 0.4 on the same ids, plus 0.1 on another (tail 0.2).
  const auto p = list({{1, 0.5}, {2, 0.3}});
  const auto q = list({{2, 0.4}, {1, 0.4}, {3, 0.1}});
  const auto b = kvsweep::score::top_kl_bound(p, q);
  const double expected = 0.5 * std::log(0.5 / 0.4) + 0.3 * std::log(0.3 / 0.4) + 0.2 * std::log(0.2 / 0.2);
  EXPECT_NEAR(b.kl, expected, 1e-12);
  EXPECT_FALSE(b.same_top1);  // the cell's first is id 2
  EXPECT_NEAR(b.dp, 0.4 - 0.5, 1e-12);
  EXPECT_EQ(b.outside, 0);
}

TEST(TopKlBound, AReferenceIdTheCellLacksGoesToTheTailAndIsCounted) {
  const auto p = list({{1, 0.6}, {2, 0.3}});
  const auto q = list({{1, 0.7}, {4, 0.2}});
  const auto b = kvsweep::score::top_kl_bound(p, q);
  // Buckets: {1}, {everything else}: P (0.6, 0.4), Q (0.7, 0.3).
  EXPECT_NEAR(b.kl, 0.6 * std::log(0.6 / 0.7) + 0.4 * std::log(0.4 / 0.3), 1e-12);
  EXPECT_EQ(b.outside, 1);
}

TEST(TopKlBound, NeverAboveTheFullKl) {
  // Two full distributions over 40 ids; the bound from their top lists is <= KL over all 40.
  for (int seed = 1; seed <= 20; ++seed) {
    std::vector<double> p(40), q(40);
    double sp = 0, sq = 0;
    for (int i = 0; i < 40; ++i) {
      p[i] = std::exp(-0.3 * i) * (1.0 + 0.5 * std::sin(seed * 1.7 + i));
      q[i] = p[i] * (1.0 + 0.4 * std::cos(seed * 2.3 + i * 0.9));
      sp += p[i];
      sq += q[i];
    }
    double full = 0;
    for (int i = 0; i < 40; ++i) {
      p[i] /= sp;
      q[i] /= sq;
    }
    for (int i = 0; i < 40; ++i) full += p[i] * std::log(p[i] / q[i]);
    auto top = [](const std::vector<double>& d, std::size_t n) {
      std::vector<std::pair<std::int32_t, double>> v;
      for (std::size_t i = 0; i < d.size(); ++i) v.emplace_back(static_cast<std::int32_t>(i), d[i]);
      std::sort(v.begin(), v.end(), [](auto a, auto b) { return a.second > b.second; });
      v.resize(n);
      return list(v);
    };
    const auto b = kvsweep::score::top_kl_bound(top(p, 5), top(q, 15));
    EXPECT_LE(b.kl, full + 1e-12) << "seed " << seed;
    EXPECT_GE(b.kl, 0.0);
  }
}

TEST(TopKlBound, AnImpossibleLogprobIsNaN) {
  std::vector<IdLogprob> bad = {{1, 0.5}};  // log p > 0
  EXPECT_TRUE(std::isnan(kvsweep::score::top_kl_bound(bad, list({{1, 0.9}})).kl));
  EXPECT_TRUE(std::isnan(kvsweep::score::top_kl_bound(list({{1, 0.9}}), {}).kl));
}

// ---- the schedule ----

TEST(DepthSchedule, BinsDoubleAndTheLastRunsToTheDepth) {
  auto s = kvsweep::probe::make_depth_schedule(1024, 8000, 3, 4);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->bins.size(), 3u);
  EXPECT_EQ(s->bins[0].name, "d1k");
  EXPECT_EQ(s->bins[0].start, 1024);
  EXPECT_EQ(s->bins[0].end, 2048);
  EXPECT_EQ(s->bins[2].name, "d4k");
  EXPECT_EQ(s->bins[2].end, 8001);
  ASSERT_EQ(s->windows.size(), 9u);
  int last_end = 0;
  for (const auto& w : s->windows) {
    const auto& bin = s->bins[w.bin];
    EXPECT_GE(w.start, bin.start) << w.key;
    EXPECT_LE(w.start + w.length, bin.end) << w.key;
    EXPECT_GE(w.start, last_end) << w.key << " overlaps the window before it";
    last_end = w.start + w.length;
  }
  EXPECT_EQ(s->windows.front().key, "d1k-w0");
  EXPECT_EQ(s->positions(), 36);
  // The last prompt is the whole cost: every earlier request only extends the cache.
  EXPECT_EQ(s->evaluated_tokens(), s->windows.back().start + 3);

  auto pow2 = kvsweep::probe::make_depth_schedule(512, 2048, 2, 4);
  ASSERT_TRUE(pow2);
  ASSERT_EQ(pow2->bins.size(), 2u);
  EXPECT_EQ(pow2->bins[0].name, "d512");
  EXPECT_EQ(pow2->bins[1].end, 2049);
}

TEST(DepthSchedule, ABinTooNarrowForItsWindowsIsRefused) {
  auto s = kvsweep::probe::make_depth_schedule(8, 20, 4, 4);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, ErrorKind::invalid);
  EXPECT_THAT(s.error().message, HasSubstr("bin d8"));
  EXPECT_FALSE(kvsweep::probe::make_depth_schedule(0, 20, 1, 1));
  EXPECT_FALSE(kvsweep::probe::make_depth_schedule(30, 20, 1, 1));
}

// ---- the probe against a fake slot ----

/// A one-slot server: a prompt cache as llama-server keeps it, a distribution as a function of the
/// prompt (ids 1000 + f, 1001 + f, … falling by half), and `shift` moving a cell's probabilities.
struct FakeSlot {
  Tokens cached;
  double shift = 0.0;       // 0: the reference's numbers; else the cell's first two probabilities move
  bool reuse = true;        // false: a server that never reuses its cache
  std::size_t document = 4000;
  int tokenize_salt = 0;    // another tokenizer: other ids

  kvsweep::testing::FakeApi api() {
    kvsweep::testing::FakeApi a;
    a.on_tokenize = [this](const std::string&, bool) -> Expected<Tokens> {
      Tokens t(document);
      for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<std::int32_t>((i * 31 + 7 + tokenize_salt) % 500);
      return t;
    };
    a.on_complete = [this](const CompletionRequest& r, int) -> Expected<CompletionResponse> {
      std::size_t n_past = 0;
      if (r.cache_prompt && reuse) {
        while (n_past < cached.size() && n_past < r.tokens.size() && cached[n_past] == r.tokens[n_past]) ++n_past;
        if (n_past == r.tokens.size() && n_past > 0) --n_past;
      }
      CompletionResponse out;
      out.timings.prompt_n = static_cast<int>(r.tokens.size() - n_past);
      out.timings.cache_n = static_cast<int>(n_past);
      out.timings.requests = 1;
      cached = r.tokens;
      const auto f = static_cast<std::int32_t>(r.tokens.size() % 13);
      TokenLogprob tp;
      double p = 0.5;
      for (int i = 0; i < r.n_probs; ++i, p /= 2) {
        double v = p;
        if (i == 0) v = p - shift;
        if (i == 1) v = p / 2 + shift;  // keeps the order: shift is small
        tp.top.push_back({1000 + f + i, "", std::log(v)});
      }
      tp.id = tp.top.front().id;
      out.probs.push_back(tp);
      return out;
    };
    return a;
  }
};

json config(json extra = json::object()) {
  json c = {{"kind", "longkl"}, {"corpus", {{"builtin", "english"}}}, {"depth", 2000},
            {"min_depth", 500},  {"windows", 2},                      {"window", 3}};
  c.update(extra);
  return c;
}

std::unique_ptr<Probe> make(json c = config()) {
  return kvsweep::probe::make_probe(c, ConfigSource{{"sweep.json", "probes[0]"}, "."});
}

CellInfo cell(bool reference) {
  CellInfo c;
  c.model = "m";
  c.type_k = reference ? "f16" : "q4_0";
  c.type_v = "f16";
  c.is_reference = reference;
  return c;
}

/// Runs `items` (all, in order, by default) and returns the records they made.
std::vector<Record> run_all(Probe& probe, kvsweep::testing::FakeApi& api, const CellInfo& c,
                            const std::vector<Record>* reference, std::vector<Item> items = {}) {
  if (items.empty()) items = probe.items();
  std::vector<Record> out;
  for (const auto& item : items) {
    Context ctx{api, c, nullptr, reference};
    auto r = probe.run(item, ctx);
    EXPECT_TRUE(r) << item.key << ": " << (r ? "" : r.error().message);
    if (!r) continue;
    Record rec;
    rec.item = item.key;
    rec.status = kvsweep::probe::ItemStatus::ok;
    rec.response = r->response;
    rec.metrics = r->metrics;
    rec.timings = kvsweep::server::to_json(r->timings);
    out.push_back(std::move(rec));
  }
  return out;
}

TEST(LongKlProbe, TheReferenceCostsOnePrefillAndScoresExactlyZero) {
  auto probe = make();
  FakeSlot slot;
  auto api = slot.api();
  const auto records = run_all(*probe, api, cell(true), nullptr);
  ASSERT_EQ(records.size(), probe->items().size());
  int evaluated = 0;
  for (const auto& r : records) {
    evaluated += r.timings.at("prompt_n").get<int>();
    EXPECT_EQ(r.metrics.at("mean_kl").get<double>(), 0.0) << r.item;
    EXPECT_EQ(r.metrics.at("same_top1_rate").get<double>(), 1.0) << r.item;
    EXPECT_EQ(r.response.at("replayed_requests").get<int>(), 0) << r.item;
  }
  auto schedule = kvsweep::probe::make_depth_schedule(500, 2000, 2, 3);
  ASSERT_TRUE(schedule);
  EXPECT_EQ(evaluated, schedule->evaluated_tokens());
  // Only the very first request starts from nothing; the reference asks for top_k, 20 by default.
  ASSERT_FALSE(api.requests.empty());
  EXPECT_FALSE(api.requests.front().cache_prompt);
  for (std::size_t i = 1; i < api.requests.size(); ++i) EXPECT_TRUE(api.requests[i].cache_prompt) << i;
  EXPECT_EQ(api.requests.front().n_probs, 20);
}

TEST(LongKlProbe, ACellIsScoredAgainstTheReferencesListsPerBin) {
  auto probe = make();
  FakeSlot ref_slot;
  auto ref_api = ref_slot.api();
  const auto reference = run_all(*probe, ref_api, cell(true), nullptr);
  FakeSlot cell_slot;
  cell_slot.shift = 0.05;
  auto api = cell_slot.api();
  const auto records = run_all(*probe, api, cell(false), &reference);
  ASSERT_EQ(records.size(), reference.size());
  EXPECT_EQ(api.requests.front().n_probs, 100);  // cell_top_k
  for (const auto& r : records) {
    EXPECT_GT(r.metrics.at("mean_kl").get<double>(), 0.0) << r.item;
    EXPECT_LT(r.metrics.at("mean_dp").get<double>(), 0.0) << r.item;
    const std::string bin = r.item.substr(0, r.item.find("-w"));
    for (const char* b : {"d500", "d1000"}) {
      const json& v = r.metrics.at(std::string("mean_kl_") + b);
      if (bin == b) EXPECT_EQ(v, r.metrics.at("mean_kl")) << r.item;
      else EXPECT_TRUE(v.is_null()) << r.item << " has a value for bin " << b;
    }
  }
}

TEST(LongKlProbe, AResumedWindowReplaysTheScheduleAndGetsTheSameLists) {
  auto probe = make();
  FakeSlot slot;
  auto api = slot.api();
  const auto in_order = run_all(*probe, api, cell(true), nullptr);
  // A fresh probe (a resumed run) runs only the last window on a fresh server.
  auto resumed = make();
  FakeSlot fresh;
  auto fresh_api = fresh.api();
  const Item last = resumed->items().back();
  const auto one = run_all(*resumed, fresh_api, cell(true), nullptr, {last});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_GT(one[0].response.at("replayed_requests").get<int>(), 0);
  EXPECT_EQ(one[0].response.at("top"), in_order.back().response.at("top"));
  EXPECT_EQ(one[0].response.at("positions"), in_order.back().response.at("positions"));
}

TEST(LongKlProbe, AServerThatReEvaluatesFailsTheItem) {
  auto probe = make();
  FakeSlot slot;
  slot.reuse = false;
  auto api = slot.api();
  Context ctx{api, cell(true), nullptr, nullptr};
  const auto items = probe->items();
  auto r = probe->run(items.front(), ctx);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("where the schedule expected 1"));
}

TEST(LongKlProbe, ADocumentShorterThanTheDepthIsRefused) {
  auto probe = make();
  FakeSlot slot;
  slot.document = 1500;
  auto api = slot.api();
  Context ctx{api, cell(true), nullptr, nullptr};
  auto r = probe->run(probe->items().front(), ctx);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message, HasSubstr("the document is 1500 tokens"));
}

TEST(LongKlProbe, ACellThatTokenizesOtherwiseIsRefused) {
  auto probe = make();
  FakeSlot ref_slot;
  auto ref_api = ref_slot.api();
  const auto reference = run_all(*probe, ref_api, cell(true), nullptr);
  FakeSlot other;
  other.tokenize_salt = 3;
  auto api = other.api();
  Context ctx{api, cell(false), nullptr, &reference};
  auto r = probe->run(probe->items().front(), ctx);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("tokenizes the document differently"));
}

TEST(LongKlProbe, GateBinsGiveThatBinsMeanKlItsThreshold) {
  auto probe = make(config({{"gate_bins", {"d1000"}}}));
  bool gated = false, open = false;
  for (const auto& m : probe->metrics()) {
    if (m.name == "mean_kl_d1000") gated = m.gated_by_default();
    if (m.name == "mean_kl_d500") open = !m.gated_by_default();
  }
  EXPECT_TRUE(gated);
  EXPECT_TRUE(open);
}

TEST(LongKlProbe, BadConfigNamesFileAndKey) {
  auto fails = [](json c, const std::string& needle) {
    try {
      make(c);
      ADD_FAILURE() << "accepted " << c.dump();
    } catch (const FatalError& e) {
      EXPECT_THAT(e.what(), HasSubstr("sweep.json")) << c.dump();
      EXPECT_THAT(e.what(), HasSubstr(needle)) << c.dump();
    }
  };
  fails(config({{"cell_top_k", 5}}), "cell_top_k");
  fails(config({{"gate_bins", {"d100"}}}), "not a bin");
  fails(config({{"windows", 400}}), "has room for");
  fails(config({{"depths", 3}}), "depths");
  fails(config({{"corpus", 5}}), "corpus");
}

}  // namespace
