// The one "did you mean" hint every config message uses: one quoting rule ('x'), letters compared
// without case, a prefix counts as near, and the candidates listed when nothing is near.

#include <gtest/gtest.h>

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

}  // namespace
