// The files a probe's config names are read once, as regular files, and recorded with the sha256 of
// what was read: "a changed prompts file is not noticed" (the hash is of the content, not
// the path), and "a prompts_file that is a directory, empty or unreadable silently falls back to the
// built-in prompts; a FIFO hangs even --dry-run".

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/core/error.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/probe/complete/complete.hpp"
#include "kvsweep/probe/divergence/divergence.hpp"
#include "kvsweep/probe/kld/kld.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/telephone/telephone.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;
using json = nlohmann::json;
namespace probe = kvsweep::probe;
namespace kt = kvsweep::testing;

namespace {

class ProbeInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = kt::temp_file("-dir");
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  probe::ConfigSource site() const { return {{"sweep.json", "probes[0]"}, dir}; }
  /// The FatalError message making a probe of `kind` with `cfg` throws ("" when it is made).
  std::string error(const std::string& kind, json cfg) const {
    cfg["kind"] = kind;
    try {
      kind == "complete" ? probe::make_complete_probe(cfg, site()) : probe::make_divergence_probe(cfg, site());
    } catch (const kvsweep::core::FatalError& e) {
      return e.message;
    }
    return "";
  }
  /// The FatalError message making a telephone probe with `cfg` throws ("" when it is made).
  std::string error_of_telephone(json cfg) const {
    cfg["kind"] = "telephone";
    try {
      probe::make_telephone_probe(cfg, site());
    } catch (const kvsweep::core::FatalError& e) {
      return e.message;
    }
    return "";
  }
  std::filesystem::path dir;
};

}  // namespace

TEST_F(ProbeInputs, AChangedPromptsFileIsNoticedByItsContentNotItsPath) {
  std::ofstream(dir / "p.txt") << "alpha\nbeta\n";
  const json cfg = {{"kind", "complete"}, {"prompts_file", "p.txt"}};
  const json then = probe::manifest_entry(*probe::make_complete_probe(cfg, site()));
  ASSERT_EQ(then["inputs"].size(), 1u) << then.dump(2);
  EXPECT_EQ(then["inputs"][0]["key"], "prompts_file");
  EXPECT_EQ(then["inputs"][0]["path"], (dir / "p.txt").string());
  EXPECT_EQ(then["inputs"][0]["sha256"], kvsweep::core::sha256_hex("alpha\nbeta\n"));

  std::ofstream(dir / "p.txt") << "alpha\ngamma\n";  // the same path, the same number of prompts
  const json now = probe::manifest_entry(*probe::make_complete_probe(cfg, site()));
  EXPECT_EQ(now["inputs"][0]["sha256"], kvsweep::core::sha256_hex("alpha\ngamma\n"));

  // Divergence and telephone record theirs the same way; a probe that reads no file records none.
  std::ofstream(dir / "t.txt") << "a text\n";
  EXPECT_EQ(probe::manifest_entry(*probe::make_divergence_probe({{"kind", "divergence"}, {"prompts_file", "p.txt"}}, site()))
                ["inputs"][0]["sha256"],
            now["inputs"][0]["sha256"]);
  const auto telephone = probe::make_telephone_probe({{"kind", "telephone"}, {"texts_file", "t.txt"}}, site());
  EXPECT_EQ(telephone->inputs().at(0).key, "texts_file");
  EXPECT_EQ(telephone->inputs().at(0).sha256, kvsweep::core::sha256_hex("a text\n"));
  EXPECT_FALSE(probe::manifest_entry(*probe::make_complete_probe({{"kind", "complete"}}, site())).contains("inputs"));
}

TEST_F(ProbeInputs, TelephoneLimitRunsTheFirstTextsOfItsFileWhichStaysTheWholeFilesHash) {
  std::ofstream(dir / "t.txt") << "first text\nsecond text\nthird text\n";
  const auto all = probe::make_telephone_probe({{"kind", "telephone"}, {"texts_file", "t.txt"}}, site());
  const auto two = probe::make_telephone_probe({{"kind", "telephone"}, {"texts_file", "t.txt"}, {"limit", 2}}, site());
  ASSERT_EQ(all->items().size(), 3 * two->items().size() / 2);
  EXPECT_EQ(two->items().back().spec, all->items()[two->items().size() - 1].spec);
  EXPECT_EQ(two->inputs().at(0).sha256, all->inputs().at(0).sha256);
  EXPECT_THAT(error_of_telephone({{"texts_file", "t.txt"}, {"limit", 0}}), HasSubstr("probes[0].limit"));
}

TEST_F(ProbeInputs, KldsCorpusFileIsPartOfTheRunsIdentityAndAGeneratedOneIsNot) {
  std::ofstream(dir / "c.txt") << "some text to score\n";
  const json cfg = {{"kind", "kld"}, {"corpus", "c.txt"}};
  const auto kld = probe::make_kld_probe(cfg, site());
  ASSERT_EQ(kld->inputs().size(), 1u);
  EXPECT_EQ(kld->inputs()[0].key, "corpus");
  EXPECT_EQ(kld->inputs()[0].sha256, kvsweep::core::sha256_hex("some text to score\n"));
  std::ofstream(dir / "c.txt") << "other text\n";
  EXPECT_EQ(probe::make_kld_probe(cfg, site())->inputs()[0].sha256, kvsweep::core::sha256_hex("other text\n"));
  EXPECT_TRUE(probe::make_kld_probe({{"kind", "kld"}, {"corpus", {{"random_bodies", {{"functions", 2}}}}}}, site())
                  ->inputs()
                  .empty());
  std::filesystem::create_directories(dir / "cd");
  EXPECT_THROW((void)probe::make_kld_probe({{"kind", "kld"}, {"corpus", "cd"}}, site()), kvsweep::core::FatalError);
}

TEST_F(ProbeInputs, APromptsFileThatIsADirectoryEmptyOrAFifoIsRefusedNotReplacedByTheBuiltInPrompts) {
  std::filesystem::create_directories(dir / "d");
  std::ofstream(dir / "empty.txt");
  std::ofstream(dir / "blank.txt") << "\n  \n";
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  for (const std::string kind : {"complete", "divergence"}) {
    SCOPED_TRACE(kind);
    const std::string d = error(kind, {{"prompts_file", "d"}});
    EXPECT_THAT(d, HasSubstr("sweep.json: probes[0].prompts_file: ")) << d;
    EXPECT_THAT(d, HasSubstr("is a directory")) << d;
    EXPECT_THAT(error(kind, {{"prompts_file", "empty.txt"}}), HasSubstr("holds no prompts"));
    EXPECT_THAT(error(kind, {{"prompts_file", "blank.txt"}}), HasSubstr("holds no prompts"));
    EXPECT_THAT(error(kind, {{"prompts_file", "missing.txt"}}), HasSubstr("no such file"));
    // Refused before it is opened: opening a FIFO without a writer would block here.
    EXPECT_THAT(error(kind, {{"prompts_file", "fifo"}}), HasSubstr("is not a regular file"));
  }
}
