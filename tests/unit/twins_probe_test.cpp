// The twins probe: its table generated from a seed, the margin read off literal top-N
// lists, the bins, the answer's classification, config errors, and run() over a fake server whose
// tokenizer splits words and whose top-N list a test scripts.

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/twins/twins.hpp"
#include "fake_api.hpp"
#include "metric_declarations.hpp"

using ::testing::HasSubstr;

namespace {

using namespace kvsweep::probe;
using kvsweep::core::ErrorKind;
using kvsweep::core::FatalError;
using nlohmann::json;
using Tokens = std::vector<std::int32_t>;

const ConfigSource kSite{{"sweep.json", "probes[0]"}, "/nonexistent"};

TwinsConfig config_of(const json& j) { return parse_twins_config(j, kSite); }

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string config_error(const json& j) {
  try {
    make_probe(j, kSite);
  } catch (const FatalError& e) {
    return e.message;
  }
  return "";
}

TEST(TwinsGeneration, TheSameSeedGivesTheSameTableAndPromptAnotherSeedAnother) {
  const json cfg = {{"kind", "twins"}, {"families", 6}, {"twins", 3}, {"distance", json::array({1, 2})}, {"at", "both"}};
  const TwinsSet a = generate_twins(config_of(cfg));
  const TwinsSet b = generate_twins(config_of(cfg));
  ASSERT_EQ(a.records.size(), 18u);
  ASSERT_EQ(a.asked, b.asked);
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    EXPECT_EQ(a.records[i].key, b.records[i].key);
    EXPECT_EQ(a.records[i].value, b.records[i].value);
  }
  EXPECT_EQ(twins_prompt(a, a.records[a.asked[0]]), twins_prompt(b, b.records[b.asked[0]]));
  json other = cfg;
  other["seed"] = 43;
  const TwinsSet c = generate_twins(config_of(other));
  std::size_t same = 0;
  for (std::size_t i = 0; i < c.records.size(); ++i) same += c.records[i].key == a.records[i].key;
  EXPECT_LT(same, c.records.size());
  // Every key is asked once, and keys are unique across the table.
  std::set<std::string> keys;
  for (const auto& r : a.records) keys.insert(r.key);
  EXPECT_EQ(keys.size(), a.records.size());
  EXPECT_EQ(std::set<std::size_t>(a.asked.begin(), a.asked.end()).size(), 18u);
}

TEST(TwinsGeneration, TwinsDifferInExactlyTheirDistanceInWordsAtTheirSide) {
  for (const char* side : {"end", "start"}) {
    const TwinsSet set = generate_twins(
        config_of({{"families", 4}, {"twins", 4}, {"key_words", 6}, {"distance", 2}, {"at", side}}));
    for (std::size_t i = 0; i < set.records.size(); ++i) {
      for (std::size_t j = i + 1; j < set.records.size(); ++j) {
        if (set.records[i].family != set.records[j].family) continue;
        const auto a = words(set.records[i].key), b = words(set.records[j].key);
        ASSERT_EQ(a.size(), 6u);
        for (std::size_t w = 0; w < 6; ++w) {
          const bool edited = std::string(side) == "end" ? w >= 4 : w < 2;
          EXPECT_EQ(a[w] != b[w], edited) << side << " " << set.records[i].key << " | " << set.records[j].key;
        }
        EXPECT_NE(set.records[i].value, set.records[j].value);
      }
    }
  }
}

TEST(TwinsGeneration, DistanceListsCycleOverFamiliesAndNearValuesShareAllButTheirEdits) {
  const TwinsSet set = generate_twins(config_of(
      {{"families", 4}, {"twins", 2}, {"value_words", 3}, {"distance", json::array({1, 3})}, {"value", "near"}}));
  for (const auto& r : set.records) EXPECT_EQ(r.distance, r.family % 2 == 0 ? 1 : 3) << r.key;
  for (std::size_t i = 0; i < set.records.size(); ++i) {
    for (std::size_t j = i + 1; j < set.records.size(); ++j) {
      if (set.records[i].family != set.records[j].family) continue;
      const auto a = words(set.records[i].value), b = words(set.records[j].value);
      const int d = set.records[i].distance;
      for (int w = 0; w < 3; ++w) EXPECT_EQ(a[w] != b[w], w >= 3 - d) << set.records[i].value << " | " << set.records[j].value;
    }
  }
}

TEST(TwinsGeneration, GapPutsThatManyRecordsBetweenTwoTwinsAndRivalsAreTheFamily) {
  const TwinsSet set = generate_twins(config_of({{"families", 8}, {"twins", 3}, {"gap", 3}}));
  std::map<int, std::vector<std::size_t>> at;
  for (std::size_t i = 0; i < set.records.size(); ++i) at[set.records[i].family].push_back(i);
  for (const auto& [family, positions] : at) {
    ASSERT_EQ(positions.size(), 3u);
    EXPECT_EQ(positions[1] - positions[0], 4u) << family;
    EXPECT_EQ(positions[2] - positions[1], 4u) << family;
  }
  EXPECT_EQ(twins_rivals(set, 0).size(), 2u);
  const TwinsSet unique = generate_twins(config_of({{"families", 5}, {"twins", 1}}));
  EXPECT_EQ(twins_rivals(unique, 2).size(), 4u);  // every other record (values differ by chance alone)
}

TEST(TwinsGeneration, TablesAreIndependentPromptsWithTheirOwnKeysAndRivals) {
  const TwinsSet one = generate_twins(config_of({{"families", 3}, {"twins", 2}}));
  const TwinsSet two = generate_twins(config_of({{"families", 3}, {"twins", 2}, {"tables", 2}}));
  ASSERT_EQ(two.records.size(), 12u);
  ASSERT_EQ(two.asked.size(), 12u);
  // Table 0 is the single table's draw (the same seed), keyed apart.
  EXPECT_EQ(twins_item_key(one.records[0]), "f0.t0");
  EXPECT_EQ(twins_item_key(two.records[0]), "s0.f0.t0");
  EXPECT_EQ(two.records[0].key, one.records[0].key);
  EXPECT_EQ(twins_item_key(two.records[6]).substr(0, 3), "s1.");
  const std::string p0 = twins_prompt(two, two.records[0]);
  EXPECT_THAT(p0, HasSubstr(two.records[5].key));
  EXPECT_THAT(p0, ::testing::Not(HasSubstr("- " + two.records[6].key + ": ")));
  for (const std::size_t j : twins_rivals(two, 0)) EXPECT_EQ(two.records[j].table, 0);
}

TEST(TwinsMargin, IsReadOffTheTopListWithABoundWhereATokenIsNotListed) {
  const std::vector<TwinsTop> top = {{7, -0.25}, {9, -2.0}, {4, -6.5}};
  const TwinsMargin exact = margin_from_top(top, 7, 9);
  EXPECT_EQ(exact.bound, MarginBound::exact);
  EXPECT_DOUBLE_EQ(exact.value, 1.75);
  const TwinsMargin wrong_way = margin_from_top(top, 9, 7);
  EXPECT_DOUBLE_EQ(wrong_way.value, -1.75);  // the twin is the likelier
  const TwinsMargin at_least = margin_from_top(top, 7, 55);
  EXPECT_EQ(at_least.bound, MarginBound::at_least);
  EXPECT_DOUBLE_EQ(at_least.value, 6.25);  // the rival below the list's lowest, -6.5
  const TwinsMargin at_most = margin_from_top(top, 55, 9);
  EXPECT_EQ(at_most.bound, MarginBound::at_most);
  EXPECT_DOUBLE_EQ(at_most.value, -4.5);
  const TwinsMargin unknown = margin_from_top(top, 55, 56);
  EXPECT_EQ(unknown.bound, MarginBound::unknown);
  EXPECT_TRUE(std::isnan(unknown.value));
}

TEST(TwinsMargin, BinsCountTheEdgesAtOrBelowTheMargin) {
  const std::vector<double> edges = {1, 4, 10};
  EXPECT_EQ(margin_bin(-3.0, edges), 0);
  EXPECT_EQ(margin_bin(0.99, edges), 0);
  EXPECT_EQ(margin_bin(1.0, edges), 1);
  EXPECT_EQ(margin_bin(9.5, edges), 2);
  EXPECT_EQ(margin_bin(10.0, edges), 3);
  EXPECT_EQ(margin_bin(std::nan(""), edges), std::nullopt);
  EXPECT_EQ(margin_bin_label(0, edges), "< 1");
  EXPECT_EQ(margin_bin_label(2, edges), "4–10");
  EXPECT_EQ(margin_bin_label(3, edges), "≥ 10");
  EXPECT_EQ(margin_bin_label(1, {0.5, 2.25}), "0.5–2.25");
}

TEST(TwinsMargin, DivergenceAndTokenDistance) {
  EXPECT_EQ(first_divergence({1, 2, 3}, {1, 2, 4}), 2u);
  EXPECT_EQ(first_divergence({5}, {6, 7}), 0u);
  EXPECT_EQ(first_divergence({1, 2}, {1, 2, 3}), std::nullopt);
  // kitten → sitting, one id per letter: 3 edits.
  EXPECT_EQ(token_edit_distance({'k', 'i', 't', 't', 'e', 'n'}, {'s', 'i', 't', 't', 'i', 'n', 'g'}), 3u);
  EXPECT_EQ(token_edit_distance({}, {1, 2}), 2u);
}

TEST(TwinsAnswer, IsCorrectATwinOrOtherByItsFirstLine) {
  const std::vector<std::string> rivals = {"blue cat", "gold dog"};
  EXPECT_EQ(classify_answer(" red fox\n- apple", "red fox", rivals), TwinsOutcome::correct);
  EXPECT_EQ(classify_answer(" gold dog", "red fox", rivals), TwinsOutcome::twin);
  EXPECT_EQ(classify_answer(" red", "red fox", rivals), TwinsOutcome::other);
  EXPECT_EQ(classify_answer("", "red fox", rivals), TwinsOutcome::other);
  EXPECT_EQ(classify_answer(" red fox cat", "red fox", rivals), TwinsOutcome::other);
}

TEST(TwinsConfig, ErrorsNameTheFileAndTheKey) {
  EXPECT_THAT(config_error({{"kind", "twins"}, {"families", 6}, {"gap", 3}}),
              HasSubstr("sweep.json: probes[0].gap: families (6) must be a multiple of gap + 1 (4)"));
  EXPECT_THAT(config_error({{"kind", "twins"}, {"bins", json::array({1, 0.5})}}),
              HasSubstr("sweep.json: probes[0].bins[1]: must be greater than bins[0]"));
  EXPECT_THAT(config_error({{"kind", "twins"}, {"famlies", 4}}), HasSubstr("did you mean 'families'"));
  EXPECT_THAT(config_error({{"kind", "twins"}, {"distance", 5}}),
              HasSubstr("sweep.json: probes[0].distance: expected a number of words from 1 to 4, got number 5"));
  EXPECT_THAT(config_error({{"kind", "twins"}, {"distance", json::array({1, 5})}}),
              HasSubstr("sweep.json: probes[0].distance[1]:"));
  EXPECT_THAT(config_error({{"kind", "twins"}, {"key_words", 3}, {"distance", 2}}),
              HasSubstr("probes[0].distance: must leave at least 2 of the key's 3 words"));
  EXPECT_THAT(config_error({{"kind", "twins"}, {"at", "middle"}}), HasSubstr("sweep.json: probes[0].at:"));
  EXPECT_THAT(config_error({{"kind", "twins"}, {"gate", json::array({"margin"})}}),
              HasSubstr("'margin' is not a quality metric of twins"));
  EXPECT_EQ(config_error({{"kind", "twins"}, {"gate", json::array({"recalled_low"})}}), "");
}

/// A tokenizer of words: a letter run with its leading space is one token, any other byte one token.
class WordTokens {
 public:
  std::int32_t id(const std::string& piece) {
    auto [it, added] = m_ids.emplace(piece, static_cast<std::int32_t>(m_ids.size()) + 10);
    return it->second;
  }
  Tokens tokenize(const std::string& text, bool add_special) {
    Tokens out;
    if (add_special) out.push_back(1);
    for (std::size_t i = 0; i < text.size();) {
      std::size_t j = i + (text[i] == ' ' ? 1 : 0);
      while (j < text.size() && std::isalpha(static_cast<unsigned char>(text[j]))) ++j;
      if (j == i || (j == i + 1 && text[i] == ' ')) j = i + 1;
      out.push_back(id(text.substr(i, j - i)));
      i = j;
    }
    return out;
  }

 private:
  std::map<std::string, std::int32_t> m_ids;
};

/// The fake server: generation answers `answer`; a top-N request lists the true value's first word at
/// `truth_lp`, the rival's at `rival_lp` and one more word lower.
struct Scripted {
  WordTokens tokens;
  std::string answer;
  std::string truth_word, rival_word;
  double truth_lp = -0.2, rival_lp = -2.7;
  bool list_rival = true;

  kvsweep::testing::FakeApi api() {
    kvsweep::testing::FakeApi fake;
    fake.on_tokenize = [this](const std::string& text, bool add_special) -> kvsweep::core::Expected<Tokens> {
      return tokens.tokenize(text, add_special);
    };
    fake.on_complete = [this](const kvsweep::server::CompletionRequest& req, int) {
      kvsweep::server::CompletionResponse res;
      if (req.n_probs == 0) {
        res.content = answer;
        return kvsweep::core::Expected<kvsweep::server::CompletionResponse>(res);
      }
      kvsweep::server::TokenLogprob p;
      p.id = tokens.id(" " + truth_word);
      p.top = {{tokens.id(" " + truth_word), "", truth_lp}};
      if (list_rival) p.top.push_back({tokens.id(" " + rival_word), "", rival_lp});
      p.top.push_back({tokens.id(" zzz"), "", -9.0});
      res.probs = {p};
      return kvsweep::core::Expected<kvsweep::server::CompletionResponse>(res);
    };
    return fake;
  }
};

struct RunTwins {
  std::unique_ptr<Probe> probe = make_probe(
      {{"kind", "twins"}, {"families", 2}, {"twins", 2}, {"key_words", 3}, {"value_words", 2}, {"bins", {1, 4}}}, kSite);
  std::vector<Item> items = probe->items();
  const Item& item = items.front();
  std::string value = item.spec["value"];
  std::string rival_value = [&] {
    for (const auto& i : items) {
      if (i.key == item.spec["rivals"][0]) return i.spec["value"].get<std::string>();
    }
    return std::string();
  }();

  kvsweep::core::Expected<ItemResult> run(Scripted& s, bool reference, const std::vector<Record>* ref_records) {
    s.truth_word = words(value)[0];
    s.rival_word = words(rival_value)[0];
    auto api = s.api();
    CellInfo cell;
    cell.is_reference = reference;
    Context ctx{api, cell, nullptr, ref_records};
    return probe->run(item, ctx);
  }
};

TEST(TwinsProbe, TheReferenceMeasuresTheMarginAndAnotherCellIsBinnedByIt) {
  RunTwins t;
  ASSERT_FALSE(t.rival_value.empty());
  EXPECT_EQ(t.item.spec["distance"], 1);  // the dial the item was made with, in its record's spec
  EXPECT_EQ(t.item.spec["at"], "end");
  Scripted s;
  s.answer = " " + t.value + "\n";
  auto ref = t.run(s, true, nullptr);
  ASSERT_TRUE(ref) << ref.error().message;
  EXPECT_EQ(ref->metrics["recalled"], 1);
  EXPECT_EQ(ref->metrics["took_twin"], 0);
  EXPECT_DOUBLE_EQ(ref->metrics["margin"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(ref->metrics["cell_margin"].get<double>(), 2.5);
  EXPECT_TRUE(ref->metrics["recalled_low"].is_null());  // 2.5 is bin 1 of [1, 4]
  EXPECT_EQ(ref->response["bin"], 1);
  EXPECT_EQ(ref->response["bin_label"], "1–4");
  EXPECT_EQ(ref->response["margin_bound"], "exact");
  EXPECT_EQ(ref->response["diverge_at"], 0);
  EXPECT_EQ(ref->metrics["token_distance"], 1);  // one word of three differs
  kvsweep::probe::testing::expect_declarations_match(*t.probe, ref->metrics);

  // Another cell: it takes the twin's value and its own gap turns; the bin stays the reference's.
  Record record;
  record.item = t.item.key;
  record.status = kvsweep::probe::ItemStatus::ok;
  record.response = ref->response;
  const std::vector<Record> refs = {record};
  s.answer = " " + t.rival_value;
  s.truth_lp = -1.5;
  s.rival_lp = -0.4;
  auto cell = t.run(s, false, &refs);
  ASSERT_TRUE(cell) << cell.error().message;
  EXPECT_EQ(cell->metrics["recalled"], 0);
  EXPECT_EQ(cell->metrics["took_twin"], 1);
  EXPECT_DOUBLE_EQ(cell->metrics["margin"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(cell->metrics["cell_margin"].get<double>(), -1.1);
  EXPECT_EQ(cell->response["bin"], 1);
  EXPECT_EQ(cell->response["took"], t.item.spec["rivals"][0]);
}

TEST(TwinsProbe, ALowMarginItemIsGatedByRecalledLowAndAnUnlistedRivalIsABound) {
  RunTwins t;
  Scripted s;
  s.answer = " " + t.value;
  s.truth_lp = -0.5;
  s.rival_lp = -0.9;
  auto low = t.run(s, true, nullptr);
  ASSERT_TRUE(low) << low.error().message;
  EXPECT_EQ(low->response["bin"], 0);
  EXPECT_EQ(low->metrics["recalled_low"], 1);

  s.list_rival = false;
  auto bound = t.run(s, true, nullptr);
  ASSERT_TRUE(bound) << bound.error().message;
  EXPECT_EQ(bound->response["margin_bound"], "at_least");
  EXPECT_DOUBLE_EQ(bound->metrics["margin"].get<double>(), 8.5);  // -0.5 against the list's lowest, -9
}

TEST(TwinsProbe, AnotherCellWithoutTheReferencesRecordFailsNamingTheItem) {
  RunTwins t;
  Scripted s;
  s.answer = " " + t.value;
  const std::vector<Record> none;
  auto r = t.run(s, false, &none);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message, HasSubstr("no ok record of the reference cell for item " + t.item.key));
}

}  // namespace
