// `kvsweep compare` says why, end to end on the real llama-server: the same config run
// twice, the second with LLAMA_ATTN_ROT_DISABLE=1 inherited from kvsweep's own environment (set in the
// shell, not in the config: the config hash is the same). The manifest records the variable; compare
// names it, and the rotation the server reported off, above the regression it explains. A secret-looking
// variable the server reads is recorded redacted and never printed.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kt = kvsweep::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSecret = "hf_not_a_real_token_4f9a";

/// The q4_0 cell's `effective` in the run's manifest.
json q4_0_effective(const fs::path& run) {
  const json manifest = kt::read_manifest(run);
  for (const auto& c : manifest["cells"])
    if (c["type_k"] == "q4_0") return c["effective"];
  return json();
}

}  // namespace

TEST(CompareExplains, AVariableInheritedFromTheShellIsRecordedAndNamedAboveTheRegression) {
  kt::TempDir dir;
  // The copy model: with its K outliers, q4_0 K recalls as f16 does only while llama.cpp rotates K.
  const fs::path config = kt::write_config(dir, kt::copy_recall_config({"f16", "q4_0"}, 8, 3, 20));
  const fs::path before = dir / "before", after = dir / "after";
  // LLAMA_ARG_HF_TOKEN: llama-server reads it (for -hf downloads, unused here); its name looks secret.
  ::setenv("LLAMA_ARG_HF_TOKEN", kSecret, 1);
  ::unsetenv("LLAMA_ATTN_ROT_DISABLE");
  auto first = kt::run_kvsweep({"run", config.string(), "-o", before.string()});
  ::setenv("LLAMA_ATTN_ROT_DISABLE", "1", 1);
  auto second = kt::run_kvsweep({"run", config.string(), "-o", after.string()});
  ::unsetenv("LLAMA_ATTN_ROT_DISABLE");
  ::unsetenv("LLAMA_ARG_HF_TOKEN");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_EQ(second.exit_code, 0) << second.output;

  {
    SCOPED_TRACE("the manifests record what the servers read from the environment, secrets redacted");
    const json a = kt::read_manifest(before), b = kt::read_manifest(after);
    EXPECT_EQ(a["config_hash"], b["config_hash"]);
    ASSERT_TRUE(a.contains("server_env")) << a.dump(2);
    EXPECT_FALSE(a["server_env"].contains("LLAMA_ATTN_ROT_DISABLE")) << a["server_env"];
    EXPECT_EQ(b["server_env"]["LLAMA_ATTN_ROT_DISABLE"], "1") << b["server_env"];
    EXPECT_EQ(b["server_env"]["LLAMA_ARG_HF_TOKEN"], "<redacted>") << b["server_env"];
    EXPECT_FALSE(b["server_env"].contains("PATH")) << b["server_env"];
    EXPECT_THAT(kt::read_text(after / "manifest.json"), Not(HasSubstr(kSecret)));
    EXPECT_EQ(q4_0_effective(before).value("attn_rot_k", -1), 1);
    EXPECT_EQ(q4_0_effective(after).value("attn_rot_k", -1), 0);
  }
  {
    SCOPED_TRACE("compare names the variable and the rotation above the regression it explains");
    auto cmp = kt::run_kvsweep({"compare", after.string(), "--baseline", before.string()});
    EXPECT_EQ(cmp.exit_code, 1) << cmp.output;
    const std::string& out = cmp.output;
    EXPECT_THAT(out, HasSubstr("What changed since the baseline")) << out;
    EXPECT_THAT(out, HasSubstr("- attn_rot_k in copy-q4_0-f16: on → off\n")) << out;
    EXPECT_THAT(out, HasSubstr("- env LLAMA_ATTN_ROT_DISABLE: unset → 1\n")) << out;
    EXPECT_THAT(out, Not(HasSubstr("LLAMA_ARG_HF_TOKEN"))) << out;  // unchanged: not said
    EXPECT_THAT(out, Not(HasSubstr("configs differ"))) << out;
    ASSERT_NE(out.find("REGRESSION"), std::string::npos) << out;
    EXPECT_LT(out.find("env LLAMA_ATTN_ROT_DISABLE"), out.find("REGRESSION")) << out;
    EXPECT_LT(out.find("What changed"), out.find("| cell")) << out;
    EXPECT_THAT(out, Not(HasSubstr(kSecret)));
  }
  {
    SCOPED_TRACE("the same from the baseline's report/summary.json, in JSON and JUnit");
    const fs::path junit = dir / "junit.xml";
    auto cmp = kt::run_kvsweep({"compare", after.string(), "--baseline", (before / "report" / "summary.json").string(),
                                "--format", "json", "--junit", junit.string()});
    EXPECT_EQ(cmp.exit_code, 1) << cmp.output;
    const json doc = json::parse(cmp.output.substr(cmp.output.find('{')));
    json env_change;
    for (const auto& c : doc["changes"])
      if (c["area"] == "env") env_change = c;
    EXPECT_EQ(env_change, (json{{"area", "env"},
                                {"name", "LLAMA_ATTN_ROT_DISABLE"},
                                {"before", nullptr},
                                {"after", "1"},
                                {"text", "env LLAMA_ATTN_ROT_DISABLE: unset → 1"}}))
        << doc["changes"];
    EXPECT_THAT(kt::read_text(junit), HasSubstr("- env LLAMA_ATTN_ROT_DISABLE: unset → 1"));
  }
  {
    SCOPED_TRACE("a baseline summary.json kept apart from its run (the nightly gate's committed baseline)");
    fs::create_directories(dir / "baseline");
    fs::copy_file(before / "report" / "summary.json", dir / "baseline" / "summary.json");
    auto cmp = kt::run_kvsweep({"compare", after.string(), "--baseline", (dir / "baseline" / "summary.json").string()});
    EXPECT_EQ(cmp.exit_code, 1) << cmp.output;
    EXPECT_THAT(cmp.output, HasSubstr("- attn_rot_k in copy-q4_0-f16: on → off")) << cmp.output;
    EXPECT_THAT(cmp.output, HasSubstr("- env LLAMA_ATTN_ROT_DISABLE: unset → 1")) << cmp.output;
    // What only a config says (server args, variants) is not compared against a summary alone.
    EXPECT_THAT(cmp.output, Not(HasSubstr("server args"))) << cmp.output;
    EXPECT_THAT(cmp.output, Not(HasSubstr(kSecret))) << cmp.output;
  }
  {
    SCOPED_TRACE("a run against itself: nothing changed, nothing said");
    auto same = kt::run_kvsweep({"compare", after.string(), "--baseline", after.string()});
    EXPECT_EQ(same.exit_code, 0) << same.output;
    EXPECT_THAT(same.output, Not(HasSubstr("What changed"))) << same.output;
  }
  {
    SCOPED_TRACE("a resume whose shell sets another such variable is refused naming it; nothing is recorded");
    const std::string records = kt::read_text(before / "records.jsonl");
    ::setenv("LLAMA_ATTN_ROT_DISABLE", "1", 1);
    auto resumed = kt::run_kvsweep({"run", config.string(), "--resume", before.string()});
    ::unsetenv("LLAMA_ATTN_ROT_DISABLE");
    EXPECT_EQ(resumed.exit_code, 2) << resumed.output;
    EXPECT_THAT(resumed.output, HasSubstr("the servers would start with another environment than the run's cells did"))
        << resumed.output;
    EXPECT_THAT(resumed.output, HasSubstr("LLAMA_ATTN_ROT_DISABLE: unset → 1")) << resumed.output;
    EXPECT_EQ(kt::read_text(before / "records.jsonl"), records);
    // As the run had it (the secret-named variable set again), the resume goes on and has nothing to run.
    ::setenv("LLAMA_ARG_HF_TOKEN", kSecret, 1);
    auto same = kt::run_kvsweep({"run", config.string(), "--resume", before.string()});
    ::unsetenv("LLAMA_ARG_HF_TOKEN");
    EXPECT_EQ(same.exit_code, 0) << same.output;
    EXPECT_EQ(kt::read_text(before / "records.jsonl"), records);
  }
}
