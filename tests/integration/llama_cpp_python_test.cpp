// The llama-cpp-python preset against the real llama-cpp-python server, when one is installed:
// KVSWEEP_LLAMA_CPP_PYTHON names a Python that has `llama_cpp.server` (pip install
// 'llama-cpp-python[server]' compiles llama.cpp from source: too long for scripts/setup, so the test is
// skipped, saying why, where it is not set).
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

namespace kt = kvsweep::testing;

namespace {

TEST(LlamaCppPython, PresetLaunchesConfirmsTheTypesFromItsLogAndAnswers) {
  const char* python = std::getenv("KVSWEEP_LLAMA_CPP_PYTHON");
  if (!python || !*python)
    GTEST_SKIP() << "KVSWEEP_LLAMA_CPP_PYTHON is not set (a Python with llama-cpp-python[server]; not installed by "
                    "scripts/setup: pip builds llama.cpp from source)";
  kt::TempDir dir;
  const nlohmann::json cfg = {
      {"name", "llama-cpp-python"},
      {"server",
       {{"preset", "llama-cpp-python"},
        {"binary", python},
        {"ctx", 2048},
        {"ready_timeout_s", kt::scaled_s(120)},
        {"request_timeout_s", kt::scaled_s(120)},
        {"stop_grace_s", 5}}},
      {"models", {{{"name", "tiny"}, {"path", kt::tiny_model().string()}}}},
      {"grid", {{"k", {"f16", "q8_0"}}, {"v", {"f16"}}, {"reference", "f16/f16"}, {"order", "as-listed"}}},
      {"probes", {{{"kind", "complete"}, {"max_tokens", 8}}}},
  };
  const auto out = dir / "run";
  const auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", out.string()}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json manifest = kt::read_manifest(out);
  ASSERT_EQ(manifest["cells"].size(), 2u);
  for (const auto& c : manifest["cells"]) {
    EXPECT_EQ(c["outcome"], "ok") << c.dump();
    EXPECT_EQ(c["effective"]["type_k"], c["type_k"]) << c.dump();
    EXPECT_EQ(c["effective"]["type_v"], "f16") << c.dump();
  }
  // The types went in as ggml's numbers: q8_0 is 8.
  EXPECT_THAT(kt::read_text(out / "logs" / "tiny-q8_0-f16.log"), ::testing::HasSubstr("--type_k 8 --type_v 1"));
  const auto records = kt::read_records(out);
  ASSERT_EQ(records.size(), 8u);  // 2 cells × complete's 4 default prompts
  for (const auto& rec : records) {
    EXPECT_EQ(rec["status"], "ok") << rec.dump();
    EXPECT_EQ(rec["timings"]["measured_by"], "client") << rec.dump();  // it reports no timings
  }
}

}  // namespace
