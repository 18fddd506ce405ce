// The presets of servers that cannot run here (vLLM, SGLang: both need a GPU and PyTorch), launched as
// their presets launch them against tests/fakes/fake_openai_server.cpp, a fake that says so: the effective
// dtype confirmed from vLLM's /metrics and SGLang's /server_info, a server that ignored the dtype
// (config_mismatch), one that does not publish it (kv_unverified, never assumed), their error objects,
// and grids refused before their first cell when the server lacks what a probe needs.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kt = kvsweep::testing;

namespace {

/// A sweep of `preset` on the fake, `types` tied, the complete probe.
nlohmann::json preset_config(const std::string& preset, const std::vector<std::string>& types) {
  return {
      {"name", "fake-" + preset},
      {"server",
       {{"preset", preset},
        {"binary", KVSWEEP_FAKE_OPENAI_SERVER},
        {"ctx", 2048},
        {"ready_timeout_s", kt::scaled_s(30)},
        {"request_timeout_s", kt::scaled_s(30)},
        {"stop_grace_s", 2}}},
      {"models", {{{"name", "m"}, {"path", "org/model-7b"}}}},
      {"grid", {{"k", types}, {"v", "tied"}, {"reference", types.front() + "/" + types.front()}, {"order", "as-listed"}}},
      {"probes", {{{"kind", "complete"}, {"max_tokens", 8}}}},
  };
}

std::map<std::string, nlohmann::json> cells(const std::filesystem::path& run) {
  std::map<std::string, nlohmann::json> out;
  const nlohmann::json manifest = kt::read_manifest(run);
  for (const auto& c : manifest["cells"]) out[c["type_k"].get<std::string>()] = c;
  return out;
}

kt::Result run(const kt::TempDir& dir, const nlohmann::json& cfg, const std::filesystem::path& out) {
  return kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", out.string()}, 120);
}

TEST(OtherServers, VllmPresetConfirmsEachDtypeFromItsMetrics) {
  kt::TempDir dir;
  const auto out = dir / "run";
  const auto r = run(dir, preset_config("vllm", {"auto", "fp8", "fp8_e5m2"}), out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto by_type = cells(out);
  ASSERT_EQ(by_type.size(), 3u);
  for (const auto& [type, c] : by_type) {
    EXPECT_EQ(c["outcome"], "ok") << c.dump();
    EXPECT_TRUE(c["effective"]["found"].get<bool>()) << c.dump();
    EXPECT_EQ(c["effective"]["type_k"], type);
    EXPECT_EQ(c["effective"]["type_v"], type);
  }
  // The launch line is vLLM's: the dtype spelled as vLLM takes it, the prefix cache off, bound to loopback.
  const std::string log = kt::read_text(out / "logs" / "m-fp8-fp8.log");
  EXPECT_THAT(log, HasSubstr("serve org/model-7b --host 127.0.0.1 --port "));
  EXPECT_THAT(log, HasSubstr("--kv-cache-dtype fp8 --max-model-len 2048 --no-enable-prefix-caching"));
  // vLLM reports no timings: the record says they are kvsweep's wall clock.
  const auto records = kt::read_records(out);
  ASSERT_FALSE(records.empty());
  for (const auto& rec : records) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    EXPECT_EQ(rec["timings"]["measured_by"], "client") << rec.dump();
    EXPECT_EQ(rec["timings"]["predicted_n"], 8) << rec.dump();
  }
  // The fake's fp8 types change the text from the fourth word on: complete tells them from the reference.
  std::map<std::string, int> matched;
  for (const auto& rec : records) matched[rec["cell"]["type_k"].get<std::string>()] += rec["metrics"]["match_reference"].get<int>();
  EXPECT_EQ(matched["auto"], 4);
  EXPECT_LT(matched["fp8"], 4);
}

TEST(OtherServers, SglangPresetConfirmsTheDtypeFromServerInfo) {
  kt::TempDir dir;
  const auto out = dir / "run";
  const auto r = run(dir, preset_config("sglang", {"auto", "fp8_e4m3"}), out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto by_type = cells(out);
  ASSERT_EQ(by_type.size(), 2u);
  for (const auto& [type, c] : by_type) {
    EXPECT_EQ(c["outcome"], "ok") << c.dump();
    EXPECT_EQ(c["effective"]["type_k"], type) << c.dump();
  }
  EXPECT_THAT(kt::read_text(out / "logs" / "m-fp8_e4m3-fp8_e4m3.log"),
              HasSubstr("-m sglang.launch_server --model-path org/model-7b --host 127.0.0.1 --port "));
}

TEST(OtherServers, AServerThatAllocatedAnotherDtypeIsAConfigMismatch) {
  kt::TempDir dir;
  auto cfg = preset_config("vllm", {"auto", "fp8"});
  cfg["server"]["env"] = {{"FAKE_OPENAI_ALLOCATE", "fp8_e5m2"}};  // the server ignores --kv-cache-dtype
  const auto out = dir / "run";
  const auto r = run(dir, cfg, out);
  EXPECT_NE(r.exit_code, 0) << r.output;
  const auto by_type = cells(out);
  ASSERT_EQ(by_type.size(), 2u);
  for (const auto& [type, c] : by_type) {
    EXPECT_EQ(c["outcome"], "config_mismatch") << c.dump();
    EXPECT_THAT(c["message"].get<std::string>(),
                HasSubstr("requested K=" + type + " V=" + type + ", the server allocated K=fp8_e5m2 V=fp8_e5m2"));
  }
  EXPECT_TRUE(kt::read_records(out).empty());
}

TEST(OtherServers, ADtypeTheServerDoesNotPublishIsKvUnverifiedNeverAssumed) {
  for (const std::string preset : {"vllm", "sglang"}) {
    kt::TempDir dir;
    auto cfg = preset_config(preset, {"auto"});
    cfg["server"]["env"] = {{"FAKE_OPENAI_CONFIRM", "none"}};
    const auto out = dir / "run";
    const auto r = run(dir, cfg, out);
    ASSERT_EQ(r.exit_code, 0) << preset << "\n" << r.output;
    const auto c = cells(out).at("auto");
    EXPECT_EQ(c["outcome"], "kv_unverified") << c.dump();
    EXPECT_FALSE(c["effective"]["found"].get<bool>()) << c.dump();
    EXPECT_THAT(c["message"].get<std::string>(),
                HasSubstr(preset == "vllm" ? "GET /metrics has no vllm:cache_config_info{cache_dtype=…} sample"
                                           : "GET /server_info holds no text at /kv_cache_dtype"));
    EXPECT_THAT(r.output, HasSubstr("kv_unverified")) << r.output;
  }
}

TEST(OtherServers, TheServersErrorObjectReachesTheRecord) {
  kt::TempDir dir;
  auto cfg = preset_config("vllm", {"auto"});
  cfg["server"]["openai"] = {{"model", "not-served"}};  // vLLM answers 404 {"object":"error","message":…}
  const auto out = dir / "run";
  const auto r = run(dir, cfg, out);
  EXPECT_NE(r.exit_code, 0) << r.output;
  const auto records = kt::read_records(out);
  ASSERT_FALSE(records.empty());
  for (const auto& rec : records) {
    EXPECT_EQ(rec["status"], "http_status") << rec.dump();
    EXPECT_THAT(rec.dump(), HasSubstr("HTTP 404: The model `not-served` does not exist.")) << rec.dump();
  }
}

TEST(OtherServers, AGridNeedingLogprobsIsRefusedBeforeItStartsOnAServerWithout) {
  kt::TempDir dir;
  auto cfg = preset_config("vllm", {"auto", "fp8"});
  cfg["server"]["openai"] = {{"capabilities", {{"logprobs", false}}}};
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 8}},
                   {{"kind", "divergence"}, {"mode", "reference"}, {"tokens", 4}, {"top_n", 5}}};
  const auto out = dir / "run";
  const auto r = run(dir, cfg, out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the grid cannot run on vLLM (preset vllm), before its first cell"));
  EXPECT_THAT(r.output, HasSubstr("probe 'divergence-reference' (divergence) needs logprobs (per-token log-probabilities)"));
  EXPECT_THAT(r.output, Not(HasSubstr("probe 'complete'")));
  // Nothing started: no run directory, no server log.
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(OtherServers, SglangHasNoTokenIdsOfAlternativesSoDivergenceIsRefused) {
  kt::TempDir dir;
  auto cfg = preset_config("sglang", {"auto"});
  cfg["probes"] = {{{"kind", "divergence"}, {"mode", "cache"}, {"tokens", 4}, {"top_n", 5}}};
  const auto r = run(dir, cfg, dir / "run");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("needs logprob_ids (the token ids of the top log-probabilities)"));
  EXPECT_THAT(r.output, HasSubstr("needs tokenize (a tokenizer endpoint)"));
  EXPECT_FALSE(std::filesystem::exists(dir / "run"));
}

TEST(OtherServers, RecallRunsItsTextOnlyFormAndSaysSo) {
  kt::TempDir dir;
  auto cfg = preset_config("sglang", {"auto"});
  cfg["probes"] = {{{"kind", "recall"}, {"mode", "raw"}, {"corpus", {{"random_bodies", {{"functions", 4}, {"value_len", 4}, {"seed", 1}}}}},
                    {"k", 2}, {"lines", 3}, {"bonus_lines", 0}, {"bounded", false}, {"max_tokens", 8}}};
  const auto out = dir / "run";
  const auto r = run(dir, cfg, out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("note: probe 'recall' runs its text-only form on SGLang (preset sglang), which lacks "
                                  "tokenize"));
  const auto records = kt::read_records(out);
  ASSERT_FALSE(records.empty());
  for (const auto& rec : records) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    EXPECT_EQ(rec["response"]["prompt_as"], "text") << rec.dump();
  }
}

TEST(OtherServers, AnUnknownDtypeNamesTheServersOwnTypes) {
  kt::TempDir dir;
  auto cfg = preset_config("vllm", {"auto", "fp8_e4m4"});
  const auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "--dry-run"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("grid.k[1]: unknown cache type 'fp8_e4m4' (did you mean 'fp8_e4m3'?); valid types for "
                                  "vLLM (preset vllm): auto, float16, bfloat16, fp8,"));
  // One setting for K and V: an asymmetric grid is refused.
  cfg["grid"]["k"] = {"auto", "fp8"};
  cfg["grid"]["v"] = {"auto"};
  const auto asym = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "--dry-run"});
  EXPECT_EQ(asym.exit_code, 2) << asym.output;
  EXPECT_THAT(asym.output, HasSubstr("cell fp8/auto has K != V, but vLLM runs K and V at one precision"));
}

}  // namespace

namespace {

TEST(OtherServers, ALaunchTemplatesMissingOrNonExecutableProgramFailsTheDryRunBeforeAnyCell) {
  kt::TempDir dir;
  const std::filesystem::path plain = dir / "server.sh";
  std::ofstream(plain) << "#!/bin/sh\n";  // no execute bit
  for (const auto& [program, words] : std::vector<std::pair<std::string, std::string>>{
           {(dir / "absent-server").string(), "is not found"}, {plain.string(), "is not executable"}}) {
    auto cfg = preset_config("vllm", {"auto"});
    cfg["server"]["command"] = {program, "--model", "{model}", "--host", "{host}", "--port", "{port}", "--kv-cache-dtype", "{type_k}"};
    for (const std::string mode : {"--dry-run", ""}) {
      std::vector<std::string> args = {"run", kt::write_config(dir, cfg).string(), "-o", (dir / "run").string()};
      if (!mode.empty()) args.push_back(mode);
      const auto r = kt::run_kvsweep(args, 60);
      EXPECT_EQ(r.exit_code, 2) << program << " " << mode << "\n" << r.output;
      EXPECT_THAT(r.output, HasSubstr("'" + program + "' " + words)) << r.output;
      EXPECT_THAT(r.output, Not(HasSubstr("[cell "))) << r.output;
    }
  }
}

TEST(OtherServers, EveryPresetsExampleConfigDryRunsUpToTheMissingServer) {
  for (const std::string name : {"vllm", "sglang", "tabbyapi", "llama-cpp-python"}) {
    const auto file = std::filesystem::path(KVSWEEP_SOURCE_DIR) / "configs" / (name + ".json");
    const auto r = kt::run_kvsweep({"run", file.string(), "--dry-run"});
    // The server is not installed here: its binary is missing (vllm), or the dry run plans it whole
    // (the others start from python3).
    if (r.exit_code != 0) {
      EXPECT_EQ(r.exit_code, 2) << name << "\n" << r.output;
      EXPECT_THAT(r.output, HasSubstr("server binary '")) << name << "\n" << r.output;
      EXPECT_THAT(r.output, HasSubstr("not found")) << name << "\n" << r.output;
    } else {
      EXPECT_THAT(r.output, HasSubstr("cells (")) << name << "\n" << r.output;
      // The plan shows the command line each cell gets, bound to loopback, its port chosen per cell.
      EXPECT_THAT(r.output, HasSubstr("--host 127.0.0.1 --port {port}")) << name << "\n" << r.output;
    }
    EXPECT_THAT(r.output, Not(HasSubstr("error: " + file.string()))) << name << "\n" << r.output;
  }
}

}  // namespace

namespace {

/// longkl over a preset: the built-in English text (one id per byte on the fake), a short schedule.
nlohmann::json longkl_config(const std::string& preset, const std::vector<std::string>& types) {
  auto cfg = preset_config(preset, types);
  cfg["probes"] = {{{"kind", "longkl"}, {"corpus", {{"builtin", "english"}}}, {"depth", 600}, {"min_depth", 128},
                    {"windows", 2}, {"window", 4}, {"top_k", 10}, {"cell_top_k", 20}}};
  return cfg;
}

/// Per K type: the longkl records' mean_kl values and the tokens they evaluated.
struct LongKlRun {
  std::map<std::string, std::vector<double>> mean_kl;
  std::map<std::string, long long> evaluated;
};

LongKlRun longkl_records(const std::filesystem::path& run) {
  LongKlRun out;
  for (const auto& rec : kt::read_records(run)) {
    EXPECT_EQ(rec["status"], "ok") << rec.dump().substr(0, 400);
    if (rec["status"] != "ok") continue;
    const std::string type = rec["cell"]["type_k"].get<std::string>();
    out.mean_kl[type].push_back(rec["metrics"]["mean_kl"].get<double>());
    out.evaluated[type] += rec["response"]["evaluated"].get<long long>();
  }
  return out;
}

}  // namespace

// vLLM answers every prompt position's top-n in one request (prompt_logprobs), asked with the ids up to
// the deepest position; SGLang's /generate with logprob_start_len answers with the prompt's ids, so it
// needs no tokenizer (it reads the whole document). One request per cell either way.
TEST(OtherServers, LongKlReadsEveryPositionInOneRequestOnVllmAndSglang) {
  const std::vector<std::pair<std::string, std::string>> presets = {{"vllm", "fp8"}, {"sglang", "fp8_e4m3"}};
  for (const auto& [preset, low] : presets) {
    SCOPED_TRACE(preset);
    kt::TempDir dir;
    const auto out = dir / "run";
    const auto r = run(dir, longkl_config(preset, {"auto", low}), out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto got = longkl_records(out);
    ASSERT_EQ(got.mean_kl.at("auto").size(), 6u);  // 3 bins × 2 windows
    for (double v : got.mean_kl.at("auto")) EXPECT_EQ(v, 0.0);
    for (double v : got.mean_kl.at(low)) EXPECT_GT(v, 0.0);
    // vLLM evaluated the document up to the deepest position (below 600), and no more.
    if (preset == "vllm")
      for (const auto& [type, n] : got.evaluated) {
        EXPECT_GT(n, 500) << type;
        EXPECT_LE(n, 600) << type;
      }
  }
}

// TabbyAPI offers neither token-id prompts nor prompt log-probabilities: refused before any server starts.
TEST(OtherServers, LongKlIsRefusedOnAServerWithNeitherWay) {
  kt::TempDir dir;
  auto cfg = longkl_config("tabbyapi", {"FP16"});
  cfg["grid"]["reference"] = "FP16/FP16";
  const auto r = run(dir, cfg, dir / "run");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("probe 'longkl' (longkl) needs token_prompts (prompts given as token ids) or else "
                                  "prompt_logprobs (every prompt position's top log-probabilities in one request)"));
  EXPECT_FALSE(std::filesystem::exists(dir / "run"));
}
