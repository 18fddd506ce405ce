// Inputs refused, one test each: a key given twice in a config,
// a run name leaving output_dir, a name too long for a file name, a --flag=value argument that
// llama-server echoes (secret included) into its log, `recommend --vram nan`, records.jsonl that
// is a directory, and run-directory files that are symbolic links.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_error.hpp"
#include "kvsweep/cli/commands.hpp"
#include "kvsweep/config/config.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/kld/kld.hpp"
#include "kvsweep/sweep/store/run_store.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using kvsweep::testing::config_error;
namespace kt = kvsweep::testing;
namespace config = kvsweep::config;
namespace sweep = kvsweep::sweep;

namespace {

json minimal() {
  return {{"models", {{{"name", "tiny"}, {"path", "/models/tiny.gguf"}}}},
          {"grid", {{"k", {"f16", "q8_0"}}, {"v", {"f16"}}}},
          {"probes", {{{"kind", "complete"}}}}};
}

// The message config::load throws for `text` written to a file ("" when accepted).
std::string load_error(const std::string& text) {
  const auto file = kt::temp_file(".json");
  std::ofstream(file) << text;
  try {
    config::load(file);
  } catch (const kvsweep::core::FatalError& e) {
    std::filesystem::remove(file);
    return e.message;
  }
  std::filesystem::remove(file);
  return "";
}

std::filesystem::path fresh_dir() {
  auto dir = kt::temp_file("-run");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST(RefusedInputs, AKeyGivenTwiceInAConfigIsAnErrorNamingItsPath) {
  const std::string base = R"({"models": [{"name": "tiny", "path": "/m.gguf"}], "grid": {"k": ["f16"], "v": ["f16"]},
                               "probes": [{"kind": "complete"}])";
  EXPECT_EQ(load_error(base + "}"), "");
  EXPECT_THAT(load_error(base + R"(, "name": "a", "name": "b"})"), HasSubstr(": name: given twice in one object"));
  const std::string nested = R"({"server": {"ctx": 4096, "args": [], "ctx": 8192}, "models": [{"name": "t", "path": "/m.gguf"}],
                                 "grid": {"k": ["f16"], "v": ["f16"]}, "probes": [{"kind": "complete"}]})";
  EXPECT_THAT(load_error(nested), HasSubstr(": server.ctx: given twice"));
  const std::string in_array = R"({"models": [{"name": "t", "path": "/m.gguf"}], "grid": {"k": ["f16"], "v": ["f16"]},
                                   "probes": [{"kind": "complete"}, {"kind": "complete", "kind": "speed"}]})";
  EXPECT_THAT(load_error(in_array), HasSubstr(": probes[].kind: given twice"));
  // The same key in two different objects is fine.
  const std::string two_objects = R"({"models": [{"name": "a", "path": "/a.gguf"}, {"name": "b", "path": "/b.gguf"}],
                                      "grid": {"k": ["f16"], "v": ["f16"]}, "probes": [{"kind": "complete"}]})";
  EXPECT_EQ(load_error(two_objects), "");
}

TEST(RefusedInputs, ARunNameThatWouldLeaveOutputDirIsRefused) {
  for (const char* name : {"../../x", "a/b", ".hidden"}) {
    json doc = minimal();
    doc["name"] = name;
    const std::string e = config_error(doc);
    EXPECT_THAT(e, HasSubstr("sweep.json: name: ")) << name;
    EXPECT_THAT(e, HasSubstr("cannot hold '/' or start with '.'")) << e;
  }
  json doc = minimal();
  doc["name"] = "kv-sweep_1.2";
  EXPECT_EQ(config_error(doc), "");
}

TEST(RefusedInputs, AThousandCharacterNameIsRefusedBeforeTheRun) {
  json doc = minimal();
  doc["models"][0]["name"] = std::string(1000, 'm');
  const std::string e = config_error(doc);
  EXPECT_THAT(e, HasSubstr("models[0].name: is 1000 bytes long")) << e;
  doc = minimal();
  doc["name"] = std::string(101, 'r');
  EXPECT_THAT(config_error(doc), HasSubstr("name: is 101 bytes long"));
  doc = minimal();
  doc["variants"] = {{{"name", std::string(200, 'v')}}};
  EXPECT_THAT(config_error(doc), HasSubstr("variants[0].name: is 200 bytes long"));
}

TEST(RefusedInputs, AFlagEqualsValueArgumentIsRefusedWithoutShowingItsValue) {
  json doc = minimal();
  doc["server"] = {{"args", {"-t", "1", "--api-key=SECRET-VALUE-42"}}};
  const std::string e = config_error(doc);
  EXPECT_THAT(e, HasSubstr("server.args: '--api-key=…': llama.cpp takes no --api-key=value form")) << e;
  EXPECT_THAT(e, Not(HasSubstr("SECRET-VALUE-42"))) << e;
  doc = minimal();
  doc["variants"] = {{{"name", "ub"}, {"args", {"--ubatch-size=256"}}}};
  EXPECT_THAT(config_error(doc), HasSubstr("variants[0].args: '--ubatch-size=…'"));
  // A value holding '=' is a value, not a flag: -ot's "exps=CPU".
  doc = minimal();
  doc["server"] = {{"args", {"-ot", "exps=CPU"}}};
  EXPECT_EQ(config_error(doc), "");
}

TEST(RefusedInputs, RecommendVramNanIsRefusedInsteadOfDroppingTheLimit) {
  for (const char* value : {"nan", "inf", "-nan"}) {
    CLI::App app;
    kvsweep::cli::Commands commands;
    kvsweep::cli::register_recommend(app, commands);
    EXPECT_THROW(app.parse(std::vector<std::string>{value, "--vram", "run", "recommend"}), CLI::ValidationError) << value;
  }
  CLI::App app;
  kvsweep::cli::Commands commands;
  kvsweep::cli::register_recommend(app, commands);
  // CLI11 takes the vector in reverse order: "recommend run --vram 24".
  EXPECT_NO_THROW(app.parse(std::vector<std::string>{"24", "--vram", "run", "recommend"}));
}

TEST(RefusedInputs, RecordsJsonlThatIsADirectoryIsAnErrorNotZeroRecords) {
  const auto dir = fresh_dir();
  std::filesystem::create_directories(dir / "records.jsonl");
  auto records = sweep::RunStore::read_records(dir);
  ASSERT_FALSE(records);
  EXPECT_THAT(records.error().message, HasSubstr("records.jsonl is not a regular file (a directory)"));
  auto store = sweep::RunStore::open(dir);
  ASSERT_FALSE(store);
  EXPECT_THAT(store.error().message, HasSubstr("is not a regular file"));
  std::filesystem::remove_all(dir);
}

namespace {
// Plants `name` in a fresh run directory as a link to a file holding "precious\n"; opening the
// store must fail naming the link and leave the target as it was.
void expect_link_refused(const std::string& name) {
  const auto dir = fresh_dir();
  const auto target = kt::temp_file("-target");
  std::ofstream(target) << "precious\n";
  std::filesystem::create_symlink(target, dir / name);
  auto store = sweep::RunStore::open(dir);
  ASSERT_FALSE(store);
  EXPECT_THAT(store.error().message, HasSubstr(name + " is a symbolic link")) << store.error().message;
  std::ifstream in(target);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "precious\n");
  std::filesystem::remove_all(dir);
  std::filesystem::remove(target);
}
}  // namespace

TEST(RefusedInputs, ASymlinkedLockFileIsRefusedAndItsTargetUntouched) { expect_link_refused(".kvsweep.lock"); }

TEST(RefusedInputs, ASymlinkedRecordsFileIsNotAppendedThrough) { expect_link_refused("records.jsonl"); }

TEST(RefusedInputs, PerplexityStoppingEarlyOnATruncatedBaseFileIsNotAnOkItem) {
  const std::string head =
      "kl_divergence: computing over 4 chunks, n_ctx=256, batch_size=2048, n_seq=8\n"
      "chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS            Same top p\n"
      "   1     119.5341 ±   27.9379      -0.02253 ±    0.01386       0.01130 ±    0.00107     1.220 ±  0.305 %    77.165 ±  3.740 %\n"
      "   2     110.9387 ±   16.8418      -0.00395 ±    0.01325       0.01242 ±    0.00078     1.246 ±  0.253 %    73.622 ±  2.771 %\n";
  // As llama-perplexity prints it on a truncated base file, exiting 0.
  auto stopped = kvsweep::probe::parse_kld_output(head + "failed reading log-probs for chunk 3\n");
  ASSERT_FALSE(stopped);
  EXPECT_THAT(stopped.error().message,
              HasSubstr("stopped early (\"failed reading log-probs for chunk 3\") after 2 of 4 chunks"));
  auto short_table = kvsweep::probe::parse_kld_output(head);
  ASSERT_FALSE(short_table);
  EXPECT_THAT(short_table.error().message, HasSubstr("computed 2 of the 4 chunks it announced"));
  const std::string whole =
      head +
      "   3     114.1579 ±   14.4223       0.00128 ±    0.00986       0.01209 ±    0.00056     1.259 ±  0.195 %    75.066 ±  2.219 %\n"
      "   4     128.6984 ±   14.5613       0.00123 ±    0.00885       0.01368 ±    0.00092     1.148 ±  0.162 %    75.591 ±  1.908 %\n";
  auto ok = kvsweep::probe::parse_kld_output(whole);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_NEAR(ok->mean_kld, 0.01368, 1e-9);
}
