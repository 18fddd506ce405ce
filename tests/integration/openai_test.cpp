// The OpenAI-API path on the real llama-server: configs/openai-llama-server.json (a launch template,
// server.command, and the OpenAI endpoints only) against the native backend on the same cells, probes
// and model. Greedy answers, metrics and verdicts must be the same: the path changes how kvsweep talks
// to the server, never what the server computes.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.hpp"

using ::testing::HasSubstr;

namespace kt = kvsweep::testing;

namespace {

/// configs/openai-llama-server.json on the test's tiny model, its runs in the test's directory.
nlohmann::json shipped_openai_config(const kt::TempDir& dir) {
  std::ifstream in(std::filesystem::path(KVSWEEP_SOURCE_DIR) / "configs" / "openai-llama-server.json");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json cfg = nlohmann::json::parse(ss.str(), nullptr, true, /*ignore_comments=*/true);
  cfg["models"] = {{{"name", "tiny"}, {"path", kt::tiny_model().string()}}};
  cfg["output_dir"] = (dir / "runs").string();
  cfg["server"]["ready_timeout_s"] = kt::scaled_s(60);
  cfg["server"]["request_timeout_s"] = kt::scaled_s(60);
  return cfg;
}

/// The same sweep on the native llama-server backend: the same args, context and timeouts.
nlohmann::json native_config(const nlohmann::json& openai) {
  nlohmann::json cfg = openai;
  const nlohmann::json& s = openai["server"];
  cfg["name"] = "native-llama-server";
  cfg["server"] = {{"backend", "llama-server"},          {"args", s["args"]},
                   {"ctx", s["ctx"]},                    {"ready_timeout_s", s["ready_timeout_s"]},
                   {"request_timeout_s", s["request_timeout_s"]}, {"stop_grace_s", s["stop_grace_s"]}};
  return cfg;
}

using Key = std::tuple<std::string, std::string, std::string>;  // cell id, probe, item

std::string cell_id(const nlohmann::json& cell) {
  return cell["model"].get<std::string>() + "-" + cell["type_k"].get<std::string>() + "-" + cell["type_v"].get<std::string>();
}

std::map<Key, nlohmann::json> ok_records(const std::filesystem::path& run) {
  std::map<Key, nlohmann::json> out;
  for (const auto& r : kt::read_records(run))
    if (r.value("status", "") == "ok") out[{cell_id(r["cell"]), r["probe"], r["item"]}] = r;
  return out;
}

/// What a probe answered greedily: complete's text, recall's text, divergence's recomputed path.
nlohmann::json answer_of(const nlohmann::json& record) {
  const nlohmann::json& resp = record["response"];
  const std::string kind = record.value("kind", "");
  if (kind == "complete") return resp["content"];
  if (kind == "recall") return resp["text"];
  return {{"argmax", resp.value("argmax", nlohmann::json())}, {"tokens", resp.value("tokens", nlohmann::json())}};
}

/// Every (cell, probe, metric) verdict of `kvsweep recommend --format json`, and the recommended cell.
std::map<std::string, std::string> verdicts(const std::filesystem::path& run) {
  const auto r = kt::run_kvsweep({"recommend", run.string(), "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  std::map<std::string, std::string> out;
  for (const auto& m : doc["models"]) {
    out[m["model"].get<std::string>() + " recommended"] = m["recommended"].dump();
    for (const auto& c : m["cells"])
      for (const auto& v : c["metrics"])
        out[c["id"].get<std::string>() + " " + v["probe"].get<std::string>() + "." + v["metric"].get<std::string>()] =
            v["verdict"].get<std::string>();
  }
  return out;
}

TEST(OpenAiPath, RealLlamaServerGivesTheNativeBackendsAnswersAndVerdicts) {
  kt::TempDir dir;
  const nlohmann::json openai = shipped_openai_config(dir);
  const auto openai_run = dir / "openai";
  const auto native_run = dir / "native";
  const auto a = kt::run_kvsweep({"run", kt::write_config(dir, openai, "openai.json").string(), "-o", openai_run.string()});
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const auto b = kt::run_kvsweep(
      {"run", kt::write_config(dir, native_config(openai), "native.json").string(), "-o", native_run.string()});
  ASSERT_EQ(b.exit_code, 0) << b.output;

  // The OpenAI path's cells were confirmed from llama.cpp's log, as the native ones are.
  const auto manifest = kt::read_manifest(openai_run);
  ASSERT_EQ(manifest["cells"].size(), 3u);
  for (const auto& c : manifest["cells"]) {
    EXPECT_EQ(c["outcome"], "ok") << c.dump();
    EXPECT_TRUE(c["effective"]["found"].get<bool>()) << c.dump();
    EXPECT_EQ(c["effective"]["type_k"], c["type_k"]);
    EXPECT_EQ(c["effective"]["type_v"], c["type_v"]);
  }
  EXPECT_EQ(manifest["server"]["backend"], "command");

  const auto via_openai = ok_records(openai_run);
  const auto native = ok_records(native_run);
  ASSERT_FALSE(native.empty());
  std::set<std::string> probes;
  for (const auto& [key, record] : native) {
    probes.insert(std::get<1>(key));
    const auto it = via_openai.find(key);
    ASSERT_NE(it, via_openai.end()) << std::get<0>(key) << " " << std::get<1>(key) << " " << std::get<2>(key);
    EXPECT_EQ(answer_of(it->second), answer_of(record)) << std::get<0>(key) << " " << std::get<1>(key) << " " << std::get<2>(key);
    EXPECT_EQ(it->second["metrics"], record["metrics"]) << std::get<0>(key) << " " << std::get<1>(key);
  }
  EXPECT_EQ(via_openai.size(), native.size());
  EXPECT_EQ(probes, (std::set<std::string>{"complete", "recall", "divergence-reference"}));
  // Recall's raw prompt went as token ids over /v1/completions, as natively over /completion.
  for (const auto& [key, record] : via_openai) {
    if (std::get<1>(key) == "recall") {
      EXPECT_EQ(record["response"]["prompt_as"], "ids") << record.dump();
    }
  }
  // llama-server reports its timings on /v1 too: the server's, not the client's.
  for (const auto& [key, record] : via_openai) EXPECT_FALSE(record["timings"].contains("measured_by")) << record.dump();

  const auto v_openai = verdicts(openai_run);
  const auto v_native = verdicts(native_run);
  EXPECT_FALSE(v_native.empty());
  EXPECT_EQ(v_openai, v_native);
}

TEST(OpenAiPath, ALaunchTemplateLogsItsExpandedCommand) {
  kt::TempDir dir;
  nlohmann::json cfg = shipped_openai_config(dir);
  cfg["probes"] = {{{"kind", "complete"}, {"max_tokens", 8}}};
  cfg["grid"]["k"] = {"f16"};
  const auto run = dir / "run";
  const auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The launch line is the template expanded: 127.0.0.1, the port kvsweep picked, the cell's types.
  const std::string log = kt::read_text(run / "logs" / "tiny-f16-f16.log");
  EXPECT_THAT(log, HasSubstr("# kvsweep: launching: "));
  EXPECT_THAT(log, HasSubstr("--host 127.0.0.1 --port "));
  EXPECT_THAT(log, HasSubstr("-ctk f16 -ctv f16 -c 4096"));
  EXPECT_THAT(log, HasSubstr("-fa on -t 1"));  // server.args after the command
}

}  // namespace
