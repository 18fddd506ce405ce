// Attaching to a running llama-server (backend "external"), verified before any item: the model and context it serves (/props) must be the cell's, its K/V types are read from
// the log the user names (server.log), one server is never two cells, and types nobody confirmed
// are labelled "declared, unverified" in the record, the recommendation and --strict's exit code.
// A real llama-server on the tiny model, started here as the user would; for api "openai" (a running
// vLLM, which needs a GPU and PyTorch), tests/fakes/fake_openai_server.cpp standing in for it.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "kvsweep/http/client.hpp"
#include "kvsweep/process/launcher.hpp"
#include "kvsweep/server/llama/llama_server.hpp"

namespace kt = kvsweep::testing;
namespace fs = std::filesystem;
using nlohmann::json;
using namespace kvsweep;

namespace {

bool holds(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

/// A llama-server on the tiny model with the given K/V types, logging (-lv 4) to `log`; stopped at scope exit.
struct RunningServer {
  server::LlamaServerBackend backend{{kt::llama_bin_dir() + "/llama-server"}};
  std::unique_ptr<server::Instance> instance;
  std::string url;

  RunningServer(const fs::path& log, const std::string& type_k, const std::string& type_v) {
    server::CellSpec spec;
    spec.model_path = kt::tiny_model().string();
    spec.type_k = type_k;
    spec.type_v = type_v;
    spec.n_ctx = 2048;
    spec.log_path = log;
    spec.extra_args = {"-t", "1", "-fa", "on"};
    spec.ready_timeout = std::chrono::seconds(kt::scaled_s(60));
    spec.stop_grace = std::chrono::seconds(2);
    std::atomic<bool> cancel{false};
    auto started = backend.start(spec, cancel);
    if (!started) throw std::runtime_error(started.error().message);
    instance = std::move(*started);
    url = "http://127.0.0.1:" + std::to_string(instance->info()["port"].get<int>());
  }
  ~RunningServer() {
    if (instance) instance->stop();
  }
};

json attach_config(const std::string& url, const std::vector<std::string>& types, const std::string& reference) {
  auto cfg = kt::base_config(kt::tiny_model());
  cfg["grid"] = {{"k", types}, {"v", "same-as-k"}, {"reference", reference}, {"order", "as-listed"}};
  cfg["server"] = {{"backend", "external"},
                   {"url", url},
                   {"ctx", 2048},
                   {"ready_timeout_s", kt::scaled_s(60)},
                   {"request_timeout_s", kt::scaled_s(60)}};
  return cfg;
}

json cell_of(const json& manifest, const std::string& types) {
  for (const auto& c : manifest.value("cells", json::array()))
    if (c.value("type_k", "") + "/" + c.value("type_v", "") == types) return c;
  return json();
}

}  // namespace

TEST(Attach, OneServerAttachedAsTwoCellsIsRefusedAndItsDeclaredTypesAreLabelledUnverified) {
  kt::TempDir dir;
  RunningServer server(dir / "server.log", "q8_0", "q8_0");
  // A user's likely mistake: one q8_0/q8_0 server, a grid of f16/f16 and q8_0/q8_0.
  const fs::path run = dir / "run";
  auto cfg = attach_config(server.url, {"f16", "q8_0"}, "f16/f16");
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string(), "--strict"});
  EXPECT_EQ(r.exit_code, 1) << r.output;  // --strict: a refused cell and types nobody confirmed
  const json manifest = kt::read_manifest(run);
  const json first = cell_of(manifest, "f16/f16");
  const json second = cell_of(manifest, "q8_0/q8_0");
  EXPECT_EQ(first.value("outcome", ""), "kv_unverified") << first.dump();
  EXPECT_TRUE(holds(first.value("message", ""), "declared by the config, unverified")) << first.dump();
  EXPECT_EQ(second.value("outcome", ""), "config_mismatch") << second.dump();
  EXPECT_TRUE(holds(second.value("message", ""), "already answered as tiny/f16/f16")) << second.dump();
  for (const auto& rec : kt::read_records(run))
    EXPECT_FALSE(rec.at("cell").at("type_k") == "q8_0" && rec.at("status") == "ok") << "the server compared with itself: " << rec.dump();
  // The recommendation never says "answered like f16/f16" of a server measured twice.
  auto advice = kt::run_kvsweep({"recommend", run.string()});
  EXPECT_FALSE(holds(advice.output, "-ctk q8_0 -ctv q8_0 answered like")) << advice.output;
}

TEST(Attach, TheServerLogVerifiesTheTypesAndRefusesACellItDoesNotRun) {
  kt::TempDir dir;
  const fs::path log = dir / "server.log";
  RunningServer server(log, "q8_0", "q8_0");
  {
    SCOPED_TRACE("the log says q8_0/q8_0: a cell declared f16/f16 is refused before any item");
    auto cfg = attach_config(server.url, {"f16"}, "f16/f16");
    cfg["server"]["log"] = log.string();
    const fs::path run = dir / "declared-f16";
    auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
    const json cell = cell_of(kt::read_manifest(run), "f16/f16");
    EXPECT_EQ(cell.value("outcome", ""), "config_mismatch") << cell.dump() << r.output;
    EXPECT_TRUE(holds(cell.value("message", ""), "the server allocated K=q8_0 V=q8_0")) << cell.dump();
    EXPECT_TRUE(kt::read_records(run).empty() || !std::filesystem::exists(run / "records.jsonl"));
  }
  {
    SCOPED_TRACE("the log confirms q8_0/q8_0: an ok cell, --strict passes");
    auto cfg = attach_config(server.url, {"q8_0"}, "q8_0/q8_0");
    cfg["server"]["log"] = log.string();
    const fs::path run = dir / "verified";
    auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string(), "--strict"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const json cell = cell_of(kt::read_manifest(run), "q8_0/q8_0");
    EXPECT_EQ(cell.value("outcome", ""), "ok") << cell.dump();
    EXPECT_FALSE(cell.value("effective", json::object()).value("declared", true)) << cell.dump();
    EXPECT_GT(cell.value("effective", json::object()).value("k_mib", 0.0), 0.0) << cell.dump();
  }
  {
    SCOPED_TRACE("a log of another server (another port) cannot vouch for this one");
    auto cfg = attach_config(server.url, {"q8_0"}, "q8_0/q8_0");
    const fs::path other = dir / "other.log";
    std::ofstream(other) << "0.00.001 I srv  llama_server: initializing ...\n"
                            "llama_kv_cache: size =    0.56 MiB (  2048 cells,   2 layers,  1/1 seqs), K (q8_0):    "
                            "0.28 MiB, V (q8_0):    0.28 MiB\n"
                            "srv  llama_server: listening on http://127.0.0.1:1\n";
    cfg["server"]["log"] = other.string();
    const fs::path run = dir / "other-log";
    kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
    const json cell = cell_of(kt::read_manifest(run), "q8_0/q8_0");
    EXPECT_EQ(cell.value("outcome", ""), "config_mismatch") << cell.dump();
    EXPECT_TRUE(holds(cell.value("message", ""), "does not say it listens on port")) << cell.dump();
  }
}

TEST(Attach, AServerOfAnotherModelIsNotRecordedAsTheConfigsModel) {
  kt::TempDir dir;
  RunningServer server(dir / "server.log", "f16", "f16");
  auto cfg = attach_config(server.url, {"f16"}, "f16/f16");
  cfg["models"] = {{{"name", "copy"}, {"path", kt::copy_model().string()}}};  // the server runs the tiny model
  const fs::path run = dir / "run";
  auto r = kt::run_kvsweep({"run", kt::write_config(dir, cfg).string(), "-o", run.string()});
  const json cell = cell_of(kt::read_manifest(run), "f16/f16");
  EXPECT_EQ(cell.value("outcome", ""), "config_mismatch") << cell.dump() << r.output;
  EXPECT_TRUE(holds(cell.value("message", ""), "(/props model_path), the config names")) << cell.dump();
  EXPECT_FALSE(fs::exists(run / "records.jsonl") && !kt::read_records(run).empty());
}

namespace {

/// The fake vLLM (tests/fakes: vLLM cannot run here) started as a user starts vLLM, serving `model` at
/// `dtype`; stopped at scope exit. A port taken between choosing and binding is tried again.
struct RunningFakeVllm {
  std::unique_ptr<process::Process> child;
  std::string url;

  RunningFakeVllm(const fs::path& log, const std::string& model, const std::string& dtype) {
    for (int attempt = 0; attempt < 3 && url.empty(); ++attempt) {
      const int port = server::free_port();
      process::LaunchSpec launch;
      launch.argv = {KVSWEEP_FAKE_OPENAI_SERVER, "serve", model, "--host", "127.0.0.1", "--port", std::to_string(port),
                     "--kv-cache-dtype", dtype};
      launch.log_path = log;
      auto started = process::child_launcher().launch(launch);
      if (!started) throw std::runtime_error(started.error().message);
      child = std::move(*started);
      const std::string candidate = "http://127.0.0.1:" + std::to_string(port);
      http::Client client(candidate, {std::chrono::milliseconds(200), std::chrono::milliseconds(1000)});
      const bool up = kt::wait_until(
          [&] {
            if (child->poll()) return true;
            auto h = client.get("/health");
            return h && h->status == 200;
          },
          60);
      if (up && !child->poll()) url = candidate;
    }
    if (url.empty()) throw std::runtime_error("the fake vLLM did not start: " + kt::read_text(log));
  }
  ~RunningFakeVllm() {
    if (child) child->stop(std::chrono::milliseconds(2000));
  }
};

json openai_attach_config(const std::string& url, const std::string& model, const std::vector<std::string>& types) {
  return {{"name", "attached-vllm"},
          {"server",
           {{"backend", "external"},
            {"api", "openai"},
            {"preset", "vllm"},
            {"url", url},
            {"ctx", 2048},
            {"ready_timeout_s", kt::scaled_s(30)},
            {"request_timeout_s", kt::scaled_s(30)}}},
          {"models", {{{"name", "m"}, {"path", model}}}},
          {"grid", {{"k", types}, {"v", "tied"}, {"reference", types.front() + "/" + types.front()}, {"order", "as-listed"}}},
          {"probes", {{{"kind", "complete"}, {"max_tokens", 8}}}}};
}

}  // namespace

TEST(Attach, ARunningOpenAiServerIsAttachedWithItsModelAndTypesChecked) {
  kt::TempDir dir;
  RunningFakeVllm vllm(dir / "vllm.log", "org/model-7b", "fp8");
  {
    SCOPED_TRACE("the preset's /metrics confirms fp8: an ok cell, nothing launched");
    const fs::path run = dir / "fp8";
    auto r = kt::run_kvsweep(
        {"run", kt::write_config(dir, openai_attach_config(vllm.url, "org/model-7b", {"fp8"})).string(), "-o", run.string(), "--strict"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const json manifest = kt::read_manifest(run);
    EXPECT_EQ(manifest["server"]["backend"], "external");
    EXPECT_EQ(manifest["server"]["api"], "openai");
    const json cell = cell_of(manifest, "fp8/fp8");
    EXPECT_EQ(cell.value("outcome", ""), "ok") << cell.dump();
    EXPECT_EQ(kt::read_records(run).size(), 4u);
  }
  {
    SCOPED_TRACE("declared auto on a server that allocated fp8: refused");
    const fs::path run = dir / "auto";
    kt::run_kvsweep({"run", kt::write_config(dir, openai_attach_config(vllm.url, "org/model-7b", {"auto"})).string(), "-o",
                     run.string()});
    const json cell = cell_of(kt::read_manifest(run), "auto/auto");
    EXPECT_EQ(cell.value("outcome", ""), "config_mismatch") << cell.dump();
  }
  {
    SCOPED_TRACE("a server of another model: refused, never 'the only id listed'");
    const fs::path run = dir / "other-model";
    kt::run_kvsweep({"run", kt::write_config(dir, openai_attach_config(vllm.url, "org/other-3b", {"fp8"})).string(), "-o",
                     run.string()});
    const json cell = cell_of(kt::read_manifest(run), "fp8/fp8");
    EXPECT_EQ(cell.value("outcome", ""), "config_mismatch") << cell.dump();
    EXPECT_TRUE(holds(cell.value("message", ""), "it serves 'org/model-7b' (GET /v1/models), the config names 'org/other-3b'"))
        << cell.dump();
  }
  {
    SCOPED_TRACE("two cells on one server: the second refused");
    const fs::path run = dir / "two";
    kt::run_kvsweep({"run", kt::write_config(dir, openai_attach_config(vllm.url, "org/model-7b", {"fp8", "auto"})).string(),
                     "-o", run.string()});
    const json second = cell_of(kt::read_manifest(run), "auto/auto");
    EXPECT_EQ(second.value("outcome", ""), "config_mismatch") << second.dump();
    EXPECT_TRUE(holds(second.value("message", ""), "already answered as m/fp8/fp8")) << second.dump();
  }
}
