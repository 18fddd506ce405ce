// The one "did you mean" hint every config message uses: one quoting rule ('x'), letters compared
// without case, a prefix counts as near, and the candidates listed when nothing is near.

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/core/error.hpp"

namespace {

using kvsweep::config::did_you_mean;
using kvsweep::config::did_you_mean_or_list;
using kvsweep::config::Site;

const std::vector<std::string> kModes = {"chat", "raw"};

std::string failure(const Site& site, const std::string& what) {
  try {
    site.fail(what);
  } catch (const kvsweep::core::FatalError& e) {
    return e.message;
  }
  return "(no error)";
}

TEST(ConfigKeys, DidYouMeanQuotesTheNearestCandidate) {
  EXPECT_EQ(did_you_mean("chta", kModes), " (did you mean 'chat'?)");
  EXPECT_EQ(did_you_mean("zzzzzz", kModes), "");
}

TEST(ConfigKeys, LettersCompareWithoutCase) {
  EXPECT_EQ(did_you_mean("CHAT", kModes), " (did you mean 'chat'?)");
  EXPECT_EQ(did_you_mean("Hops", {"hops", "seeds"}), " (did you mean 'hops'?)");
}

TEST(ConfigKeys, APrefixIsNearEvenFarInEdits) {
  EXPECT_EQ(did_you_mean("perez", {"published", "perez2025", "mohamed2025"}), " (did you mean 'perez2025'?)");
}

TEST(ConfigKeys, NothingNearListsTheCandidates) {
  EXPECT_EQ(did_you_mean_or_list("zzzzzz", kModes), " (one of: chat, raw)");
  EXPECT_EQ(did_you_mean_or_list("rwa", kModes), " (did you mean 'raw'?)");
}

TEST(ConfigKeys, UnknownKeyMessageNamesFileAndPath) {
  const Site site("sweep.json", "probes[2]");
  std::string message;
  try {
    kvsweep::config::check_keys(nlohmann::json{{"nmae", "x"}}, {"kind", "name"}, site);
  } catch (const kvsweep::core::FatalError& e) {
    message = e.message;
  }
  EXPECT_EQ(message, "sweep.json: probes[2]: unknown key 'nmae' (did you mean 'name'?)");
}

TEST(ConfigKeys, SiteFailLeavesOutWhatIsEmpty) {
  EXPECT_EQ(failure(Site("a.json", "grid.k"), "bad"), "a.json: grid.k: bad");
  EXPECT_EQ(failure(Site("", "grid.k"), "bad"), "grid.k: bad");
  EXPECT_EQ(failure(Site("a.json", ""), "bad"), "a.json: bad");
  EXPECT_EQ(failure(Site("", ""), "bad"), "bad");
}

template <class Read>
std::string read_error(Read read) {
  try {
    read();
  } catch (const kvsweep::core::FatalError& e) {
    return e.message;
  }
  return "(no error)";
}

TEST(ConfigKeys, EveryGetterShowsTheTypeAndTheValueItGot) {
  using namespace kvsweep::config;
  const Site site("cfg.json", "probes[0]");
  const nlohmann::json obj{{"s", 3}, {"n", "30"}, {"b", "false"}, {"list", {"a", 1}}};
  EXPECT_EQ(read_error([&] { get_string(obj, "s", "", site); }), "cfg.json: probes[0].s: expected a string, got number 3");
  EXPECT_EQ(read_error([&] { get_int(obj, "n", 0, site); }), "cfg.json: probes[0].n: expected an integer, got string \"30\"");
  EXPECT_EQ(read_error([&] { get_number(obj, "n", 0, site); }), "cfg.json: probes[0].n: expected a number, got string \"30\"");
  EXPECT_EQ(read_error([&] { get_bool(obj, "b", true, site); }), "cfg.json: probes[0].b: expected true or false, got string \"false\"");
  EXPECT_EQ(read_error([&] { get_strings(obj, "list", {}, site); }), "cfg.json: probes[0].list[1]: expected a string, got number 1");
  EXPECT_EQ(shown(nlohmann::json(std::string(100, 'x'))).size(), std::string("string ").size() + 60);
}

TEST(ConfigKeys, OneOfHintsTheNearestOrListsThemAll) {
  using namespace kvsweep::config;
  const Site site("cfg.json", "probes[1]");
  const nlohmann::json obj{{"mode", "chta"}, {"align", "zzzzzz"}, {"ok", "raw"}};
  EXPECT_EQ(read_error([&] { get_one_of(obj, "mode", "chat", kModes, site); }),
            "cfg.json: probes[1].mode: unknown value 'chta' (did you mean 'chat'?)");
  EXPECT_EQ(read_error([&] { get_one_of(obj, "align", "chat", kModes, site); }),
            "cfg.json: probes[1].align: unknown value 'zzzzzz' (one of: chat, raw)");
  EXPECT_EQ(get_one_of(obj, "ok", "chat", kModes, site), "raw");
  EXPECT_EQ(get_one_of(obj, "absent", "chat", kModes, site), "chat");
}

TEST(ConfigKeys, RequiredValuesAndRanges) {
  using namespace kvsweep::config;
  const Site site("", "source");
  const nlohmann::json obj{{"empty", ""}, {"p", 0.0}, {"big", 18446744073709551615ull}, {"t", 150}};
  EXPECT_EQ(read_error([&] { get_required_string(obj, "file", site); }), "source.file: missing (a string)");
  EXPECT_EQ(read_error([&] { get_required_string(obj, "empty", site); }), "source.empty: must not be empty");
  EXPECT_EQ(read_error([&] { get_member(obj, "rows", site); }), "source.rows: missing");
  EXPECT_EQ(read_error([&] { get_number_in(obj, "p", 0.5, 0.0, 1.0, site, Bound::open); }),
            "source.p: must be greater than 0 and at most 1, got 0.0");
  EXPECT_EQ(get_number_in(obj, "p", 0.5, 0.0, 1.0, site), 0.0);
  EXPECT_EQ(read_error([&] { get_number_in(obj, "t", 0, 0.0, 100.0, site); }), "source.t: must be at least 0 and at most 100, got 150");
  EXPECT_EQ(read_error([&] { get_int_in(obj, "big", 1, 1, 100, site); }),
            "source.big: must be between 1 and 100, got 18446744073709551615");
  EXPECT_EQ(get_number_in(obj, "absent", 7.5, 0.0, std::numeric_limits<double>::infinity(), site), 7.5);
}

}  // namespace
