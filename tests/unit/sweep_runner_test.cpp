// The runner's failure paths with a fake backend and a scripted probe (no children, no network):
// a crash after ready restarts the server once and resumes the unfinished items, a second crash
// is `crashed`, a failed restart is `crashed`, no answer is `wedged`, the lifecycle's refusals
// (config_mismatch, unsupported) end only their cell, a log without the KV line is
// `kv_unverified`, and a probe item that throws fails that item while the sweep goes on.

#include <atomic>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/sweep/run/runner.hpp"
#include "kvsweep/sweep/store/merge.hpp"
#include "fake_api.hpp"
#include "full_disk.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {

/// The store's records as their JSON lines (probe::to_json), as records.jsonl holds them.
std::vector<nlohmann::json> lines_of(const kvsweep::sweep::RunStore& store) {
  std::vector<nlohmann::json> out;
  for (const auto& r : store.records()) out.push_back(kvsweep::probe::to_json(r));
  return out;
}

using namespace kvsweep;
using server::CellOutcome;
namespace kt = kvsweep::testing;

/// The run's manifest as the store reads it back (its journal folded in), as JSON; null when unreadable.
nlohmann::json manifest_json(const std::filesystem::path& dir) {
  const auto manifest = sweep::RunStore::read_manifest(dir);
  EXPECT_TRUE(manifest) << manifest.error().message;
  return manifest ? sweep::to_json(*manifest) : nlohmann::json();
}

/// A server that lives until the test kills it.
class FakeInstance final : public server::Instance {
 public:
  FakeInstance(server::EffectiveKv effective, int& stops) : m_effective(std::move(effective)), m_stops(stops) {}
  server::Api& api() override { return m_api; }
  bool alive() override { return m_alive; }
  void stop() override {
    if (m_alive) ++m_stops;
    m_alive = false;
  }
  server::EffectiveKv effective() const override { return m_effective; }
  double ready_seconds() const override { return 0.5; }
  nlohmann::json info() const override { return nlohmann::json::object(); }
  std::string log_tail(std::size_t) const override { return "E the last words of the server"; }
  std::string exit_description() override { return "killed by signal 9 (Killed)"; }

  void kill() { m_alive = false; }

 private:
  kt::FakeApi m_api;  // the probe is scripted: it asks the server nothing
  server::EffectiveKv m_effective;
  int& m_stops;
  bool m_alive = true;
};

/// Starts scripted servers: each start() takes the next failure from `failures` (if any) or
/// starts a FakeInstance with the KV types the cell asked for (or `effective` when set).
class FakeBackend final : public server::Backend {
 public:
  std::deque<std::optional<server::StartFailure>> failures;
  std::optional<server::EffectiveKv> effective;
  std::vector<server::CellSpec> started;
  FakeInstance* current = nullptr;
  int stops = 0;  // servers stopped while alive

  std::string kind() const override { return "fake"; }
  nlohmann::json describe() override { return {{"backend", "fake"}}; }
  std::expected<std::unique_ptr<server::Instance>, server::StartFailure> start(const server::CellSpec& spec,
                                                                             const std::atomic<bool>&) override {
    started.push_back(spec);
    if (!failures.empty()) {
      auto f = failures.front();
      failures.pop_front();
      if (f) return std::unexpected(*f);
    }
    server::EffectiveKv e;
    e.found = true;
    e.type_k = spec.type_k;
    e.type_v = spec.type_v;
    auto instance = std::make_unique<FakeInstance>(effective.value_or(e), stops);
    current = instance.get();
    return instance;
  }
};

/// Items a, b, c; what each run does is up to the test (default: ok).
class ScriptedProbe final : public probe::Probe {
 public:
  std::function<core::Expected<probe::ItemResult>(const std::string& key, int run)> script;
  std::map<std::string, int> runs;
  std::vector<std::string> seen;  // per run: "variant/K: reference records of this variant"

  std::string kind() const override { return "scripted"; }
  std::vector<probe::Item> items() const override { return {{"a", {}}, {"b", {}}, {"c", {}}}; }
  core::Expected<probe::ItemResult> run(const probe::Item& item, probe::Context& ctx) override {
    const int n = ++runs[item.key];
    std::size_t same_variant = 0;
    for (const auto& r : *ctx.reference_records) same_variant += r.cell.variant == ctx.cell.variant;
    seen.push_back(ctx.cell.variant + "/" + ctx.cell.type_k + ": " + std::to_string(ctx.reference_records->size()) +
                   " reference, " + std::to_string(same_variant) + " of its variant");
    if (script) return script(item.key, n);
    return probe::ItemResult{};
  }
  std::vector<probe::MetricSpec> metrics() const override { return {}; }
  bool deterministic() const override { return true; }
};

class Silent final : public sweep::ProgressSink {
 public:
  std::vector<std::string> notes;
  void plan(std::size_t, std::size_t) override {}
  void cell_started(std::size_t, std::size_t, const sweep::Cell&, int) override {}
  void item_done(const sweep::Cell&, const std::string&, const std::string&, const std::string&, double) override {}
  void cell_done(const sweep::CellResult&) override {}
  void note(const std::string& message) override { notes.push_back(message); }
};

class Runner : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = kt::temp_file("-run");
    std::filesystem::remove_all(dir);
    config.name = "fake";
    config.file = dir / "fake.json";
    config.models = {{"tiny", "/models/tiny.gguf"}};
    config.grid.k = {"f16"};
    config.grid.v = {"f16"};
    config.grid.order = config::Order::as_listed;
    config.server.request_timeout_s = 5;
    auto p = std::make_unique<ScriptedProbe>();
    scripted = p.get();
    probes.push_back(std::move(p));
  }

  sweep::RunResult run(bool resume = false) {
    auto store = resume ? sweep::RunStore::open(dir) : sweep::RunStore::create(dir);
    EXPECT_TRUE(store) << store.error().message;
    sweep::Runner runner(config, probes, backend, *store, progress, cancel, {});
    auto result = runner.run();
    records = lines_of(*store);
    return result;
  }

  std::vector<std::string> statuses() const {
    std::vector<std::string> out;
    for (const auto& r : records) out.push_back(r["item"].get<std::string>() + ":" + r["status"].get<std::string>());
    return out;
  }

  /// The item kills the server and answers as a dead server does.
  core::Expected<probe::ItemResult> crash() {
    backend.current->kill();
    return core::fail(core::ErrorKind::connect, "connection refused");
  }

  /// Every run of item b kills the server.
  void crash_on_b() {
    scripted->script = [&](const std::string& key, int) -> core::Expected<probe::ItemResult> {
      if (key == "b") return crash();
      return probe::ItemResult{};
    };
  }

  std::filesystem::path dir;
  config::Config config;
  std::vector<std::unique_ptr<probe::Probe>> probes;
  ScriptedProbe* scripted = nullptr;
  FakeBackend backend;
  Silent progress;
  std::atomic<bool> cancel{false};
  std::vector<nlohmann::json> records;
};

TEST_F(Runner, ARunFolderThatIsASymlinkIsRefusedNamingItsPath) {
  const auto elsewhere = kt::temp_file("-elsewhere");
  std::filesystem::remove_all(elsewhere);
  std::filesystem::create_directories(elsewhere);
  for (const char* folder : {"logs", "kld", "report"}) {
    std::filesystem::remove_all(dir);
    auto store = sweep::RunStore::create(dir);
    ASSERT_TRUE(store) << store.error().message;
    std::filesystem::remove_all(dir / folder);
    std::filesystem::create_directory_symlink(elsewhere, dir / folder);
    sweep::Runner runner(config, probes, backend, *store, progress, cancel, {});
    try {
      runner.run();
      ADD_FAILURE() << folder << ": a linked run folder was written through";
    } catch (const core::FatalError& e) {
      EXPECT_THAT(e.what(), HasSubstr((dir / folder).string() + " is a symbolic link")) << folder;
    }
    EXPECT_TRUE(std::filesystem::is_empty(elsewhere)) << folder;
    EXPECT_TRUE(backend.started.empty()) << folder << ": nothing starts";
  }
}

TEST_F(Runner, CrashAfterReadyRestartsOnceAndResumesTheUnfinishedItems) {
  scripted->script = [&](const std::string& key, int n) -> core::Expected<probe::ItemResult> {
    if (key == "b" && n == 1) return crash();
    return probe::ItemResult{};
  };
  auto result = run();
  ASSERT_EQ(result.cells.size(), 1u);
  const auto& cell = result.cells[0];
  EXPECT_EQ(cell.outcome, CellOutcome::ok) << cell.message;
  EXPECT_EQ(cell.restarts, 1);
  EXPECT_EQ(cell.items_ok, 3);
  EXPECT_EQ(backend.started.size(), 2u);
  EXPECT_EQ(statuses(), (std::vector<std::string>{"a:ok", "b:ok", "c:ok"}));
  EXPECT_EQ(records[1]["attempt"], 2);
  EXPECT_EQ(scripted->runs["a"], 1);  // a is not run again after the restart
}

TEST_F(Runner, CrashAgainAfterTheRestartIsCrashed) {
  crash_on_b();
  auto result = run();
  const auto& cell = result.cells.at(0);
  EXPECT_EQ(cell.outcome, CellOutcome::crashed);
  EXPECT_THAT(cell.message, HasSubstr("again after a restart")) << cell.message;
  EXPECT_EQ(statuses(), (std::vector<std::string>{"a:ok", "b:crashed"}));
  EXPECT_EQ(scripted->runs["c"], 0);
  const nlohmann::json manifest = manifest_json(dir);
  ASSERT_TRUE(manifest.is_object());
  EXPECT_EQ(manifest["cells"][0]["outcome"], "crashed");
}

TEST_F(Runner, ARestartThatFailsIsCrashed) {
  backend.failures = {std::nullopt, server::StartFailure{CellOutcome::load_failed, "not ready", "E out of memory", {}}};
  crash_on_b();
  auto result = run();
  const auto& cell = result.cells.at(0);
  EXPECT_EQ(cell.outcome, CellOutcome::crashed);
  EXPECT_THAT(cell.message, HasSubstr("restart failed: not ready")) << cell.message;
  EXPECT_THAT(cell.message, HasSubstr("E out of memory")) << cell.message;
  EXPECT_EQ(statuses(), (std::vector<std::string>{"a:ok"}));
}

TEST_F(Runner, NoAnswerWithinTheRequestTimeoutIsWedgedAndTheServerIsStopped) {
  scripted->script = [&](const std::string& key, int) -> core::Expected<probe::ItemResult> {
    if (key == "b") return core::fail(core::ErrorKind::timeout, "read timeout");
    return probe::ItemResult{};
  };
  auto result = run();
  EXPECT_EQ(result.cells.at(0).outcome, CellOutcome::wedged);
  EXPECT_EQ(statuses(), (std::vector<std::string>{"a:ok", "b:timeout"}));
  EXPECT_EQ(backend.started.size(), 1u);
  EXPECT_EQ(backend.stops, 1);
  EXPECT_EQ(scripted->runs["c"], 0);
}

TEST_F(Runner, TheLifecyclesRefusalsEndOnlyTheirCell) {
  config.grid.k = {"f16", "q4_0", "q8_0"};
  config.grid.v = {"f16"};
  server::EffectiveKv allocated;
  allocated.found = true;
  allocated.type_k = "f16";
  allocated.type_v = "f16";
  backend.failures = {std::nullopt,
                      server::StartFailure{CellOutcome::config_mismatch, "requested K=q4_0 V=f16, the server allocated K=f16 V=f16", "", allocated},
                      server::StartFailure{CellOutcome::unsupported, "refused", "E Unsupported cache type", {}}};
  auto result = run();
  ASSERT_EQ(result.cells.size(), 3u);
  EXPECT_EQ(result.cells[0].outcome, CellOutcome::ok);
  EXPECT_EQ(result.cells[1].outcome, CellOutcome::config_mismatch);
  EXPECT_EQ(result.cells[1].effective.type_k, "f16");
  EXPECT_EQ(result.cells[2].outcome, CellOutcome::unsupported);
  EXPECT_THAT(result.cells[2].message, HasSubstr("E Unsupported cache type"));
  EXPECT_EQ(records.size(), 3u);  // only the first cell ran items
  const nlohmann::json manifest = manifest_json(dir);
  ASSERT_TRUE(manifest.is_object());
  EXPECT_EQ(manifest["cells"][1]["outcome"], "config_mismatch");
  EXPECT_EQ(manifest["cells"][1]["effective"]["type_k"], "f16");
}

TEST_F(Runner, ALogWithoutTheKvLineIsKvUnverifiedNeverSilentlyOk) {
  backend.effective = server::EffectiveKv{};  // found = false, declared = false
  auto result = run();
  const auto& cell = result.cells.at(0);
  EXPECT_EQ(cell.outcome, CellOutcome::kv_unverified);
  EXPECT_EQ(cell.items_ok, 3);
  ASSERT_EQ(progress.notes.size(), 1u);
  EXPECT_THAT(progress.notes[0], HasSubstr("no KV cache line"));
  const nlohmann::json manifest = manifest_json(dir);
  ASSERT_TRUE(manifest.is_object());
  EXPECT_EQ(manifest["cells"][0]["outcome"], "kv_unverified");
}

TEST_F(Runner, AJournalLineOfACellOutsideTheGridDoesNotBecomeACellOnResume) {
  run();
  {
    auto store = sweep::RunStore::open(dir);
    ASSERT_TRUE(store) << store.error().message;
    ASSERT_TRUE(store->append_cell(*sweep::ManifestCell::from_json(
        nlohmann::json{{"model", "tiny"}, {"type_k", "q4_0"}, {"type_v", "q4_0"}, {"outcome", "ok"}, {"items_ok", 3}})));
  }
  run(/*resume=*/true);
  const nlohmann::json manifest = manifest_json(dir);
  ASSERT_TRUE(manifest.is_object());
  ASSERT_EQ(manifest["cells"].size(), 1u) << manifest["cells"].dump();
  EXPECT_EQ(manifest["cells"][0]["type_k"], "f16");
  EXPECT_THAT(progress.notes.back(), HasSubstr("tiny/q4_0/q4_0 is not in this config's grid: left out"));
}

TEST_F(Runner, DeclaredTypesAreRecordedUnverifiedNeverOk) {
  // An attached server's types the user only declared: the items run, the cell says nobody confirmed them.
  server::EffectiveKv declared;
  declared.declared = true;
  backend.effective = declared;
  const auto result = run();
  EXPECT_EQ(result.cells.at(0).outcome, CellOutcome::kv_unverified);
  EXPECT_EQ(result.cells.at(0).items_ok, 3);
  EXPECT_THAT(result.cells.at(0).message, HasSubstr("declared by the config, unverified"));
}

TEST_F(Runner, AProbeItemThatThrowsFailsThatItemAndTheSweepGoesOn) {
  scripted->script = [&](const std::string& key, int) -> core::Expected<probe::ItemResult> {
    if (key == "b") throw std::out_of_range("[json.exception.out_of_range.403] key 'tools' not found");
    return probe::ItemResult{};
  };
  auto result = run();
  const auto& cell = result.cells.at(0);
  EXPECT_EQ(cell.outcome, CellOutcome::ok);
  EXPECT_EQ(cell.items_ok, 2);
  EXPECT_EQ(cell.items_failed, 1);
  EXPECT_EQ(statuses(), (std::vector<std::string>{"a:ok", "b:internal", "c:ok"}));
  EXPECT_THAT(records[1]["error"].get<std::string>(),
              HasSubstr("scripted/b threw: [json.exception.out_of_range.403] key 'tools'"))
      << records[1].dump();
}

TEST_F(Runner, AFullDiskStopsTheRunAndResumeCompletesItWithNothingLostOrDuplicated) {
  std::optional<kt::FullDisk> full;
  scripted->script = [&](const std::string& key, int n) -> core::Expected<probe::ItemResult> {
    // Item b's first run fails (a failure record, not an ok one) on a disk with no room for it.
    if (key == "b" && n == 1) {
      full.emplace(std::filesystem::file_size(dir / "records.jsonl") + 10);
      return core::fail(core::ErrorKind::http_status, "HTTP 500", 500);
    }
    return probe::ItemResult{};
  };
  auto stopped = run();
  full.reset();  // space freed
  EXPECT_THAT(stopped.store_error, HasSubstr("cannot append to " + (dir / "records.jsonl").string()))
      << stopped.store_error;
  EXPECT_EQ(stopped.cells.at(0).outcome, CellOutcome::pending);
  EXPECT_EQ(scripted->runs["c"], 0);  // nothing ran after the failed write
  EXPECT_EQ(statuses(), (std::vector<std::string>{"a:ok"}));

  auto resumed = run(/*resume=*/true);
  EXPECT_TRUE(resumed.store_error.empty()) << resumed.store_error;
  EXPECT_EQ(resumed.cells.at(0).outcome, CellOutcome::ok);
  EXPECT_EQ(statuses(), (std::vector<std::string>{"a:ok", "b:ok", "c:ok"}));
  EXPECT_EQ(scripted->runs["a"], 1);
}

}  // namespace

// Variants: each cell's server gets the server's settings, then its variant's (args later on the
// command line, environment later, its own context and binary); records and manifest cells carry the
// variant; each variant's cells are compared with that variant's reference; a resume is per variant.
TEST_F(Runner, EachVariantsCellsStartWithItsSettingsAndRecordItsName) {
  config.grid.k = {"f16", "q4_0"};
  config.server.args = {"-fa", "on"};
  config.server.env = {{"LLAMA_ATTN_ROT_DISABLE", "1"}};
  config.variants = {{"rot-on", {}, {{"LLAMA_ATTN_ROT_DISABLE", "0"}}, 0, ""},
                     {"short", {"-fa", "off"}, {{"HF_TOKEN", "s3cret"}}, 3000, "/opt/b/llama-server"}};
  scripted->script = [&](const std::string&, int) -> core::Expected<probe::ItemResult> { return probe::ItemResult{}; };
  ASSERT_FALSE(run().interrupted);

  ASSERT_EQ(backend.started.size(), 4u);  // 2 variants × (f16 reference, q4_0)
  std::map<std::string, server::CellSpec> by_log;
  for (const auto& s : backend.started) by_log[s.log_path.filename().string()] = s;
  ASSERT_TRUE(by_log.contains("tiny-rot-on-f16-f16.log"));
  ASSERT_TRUE(by_log.contains("tiny-short-q4_0-f16.log"));
  const auto& on = by_log["tiny-rot-on-q4_0-f16.log"];
  EXPECT_EQ(on.env.back(), (std::pair<std::string, std::string>{"LLAMA_ATTN_ROT_DISABLE", "0"}));
  EXPECT_EQ(on.extra_args, (std::vector<std::string>{"-fa", "on"}));
  EXPECT_EQ(on.binary, "");
  const auto& shorter = by_log["tiny-short-q4_0-f16.log"];
  EXPECT_EQ(shorter.extra_args, (std::vector<std::string>{"-fa", "on", "-fa", "off"}));
  EXPECT_EQ(shorter.n_ctx, 3072);  // rounded up to 256 like server.ctx
  EXPECT_EQ(shorter.binary, "/opt/b/llama-server");
  EXPECT_NE(on.n_ctx, 3072);

  ASSERT_EQ(records.size(), 12u);
  std::set<std::string> keys;
  for (const auto& r : records) {
    ASSERT_TRUE(r["cell"].contains("variant")) << r.dump();
    keys.insert(sweep::triple_key_of(*probe::Record::from_json(r)));
  }
  EXPECT_EQ(keys.size(), 12u) << "the variant is part of the key";
  const nlohmann::json manifest = manifest_json(dir);
  ASSERT_TRUE(manifest.is_object());
  std::set<std::string> ids;
  for (const auto& c : manifest["cells"]) ids.insert(c["id"].get<std::string>() + ":" + c.value("variant", "?"));
  EXPECT_EQ(ids, (std::set<std::string>{"tiny-rot-on-f16-f16:rot-on", "tiny-rot-on-q4_0-f16:rot-on",
                                        "tiny-short-f16-f16:short", "tiny-short-q4_0-f16:short"}));
  // A variant's secret-looking environment reaches its server, never the run directory.
  EXPECT_EQ(shorter.env.back(), (std::pair<std::string, std::string>{"HF_TOKEN", "s3cret"}));
  EXPECT_EQ(manifest["config"]["variants"][1]["env"]["HF_TOKEN"], "<redacted>");
  EXPECT_THAT(manifest.dump(), Not(HasSubstr("s3cret")));

  // A variant's cells see its own reference cell's records (3 items), never the other variant's.
  EXPECT_EQ(scripted->seen.back(), "short/q4_0: 3 reference, 3 of its variant");
  EXPECT_NE(std::find(scripted->seen.begin(), scripted->seen.end(), "rot-on/q4_0: 3 reference, 3 of its variant"),
            scripted->seen.end());

  // A resume has nothing left in either variant.
  backend.started.clear();
  ASSERT_FALSE(run(true).interrupted);
  EXPECT_TRUE(backend.started.empty());
  EXPECT_EQ(records.size(), 12u);
}

TEST_F(Runner, AConfigWithoutVariantsKeepsItsRecordsAndIds) {
  ASSERT_FALSE(run().interrupted);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0]["cell"], (nlohmann::json{{"model", "tiny"}, {"type_k", "f16"}, {"type_v", "f16"}}));
  EXPECT_EQ(backend.started.at(0).log_path.filename(), "tiny-f16-f16.log");
}

/// Twenty items scoring `matched` by the cell's K type: f16 and q8_0 copy every line (10), q4_0 none.
class ScoredProbe final : public probe::Probe {
 public:
  std::map<std::string, int> runs;  // by cell K type
  std::string kind() const override { return "scored"; }
  std::vector<probe::Item> items() const override {
    std::vector<probe::Item> out;
    for (int i = 0; i < 20; ++i) out.push_back({"i" + std::to_string(i), {}});
    return out;
  }
  core::Expected<probe::ItemResult> run(const probe::Item&, probe::Context& ctx) override {
    ++runs[ctx.cell.type_k];
    probe::ItemResult r;
    r.metrics["matched"] = ctx.cell.type_k == "q4_0" ? 0 : 10;
    return r;
  }
  std::vector<probe::MetricSpec> metrics() const override {
    return {probe::quality("matched", probe::Direction::higher_better, probe::MetricKind::count)};
  }
  bool deterministic() const override { return true; }
};

class Adaptive : public Runner {
 protected:
  void SetUp() override {
    Runner::SetUp();
    config.grid.k = {"f16", "q8_0", "q4_0"};
    probes.clear();
    auto p = std::make_unique<ScoredProbe>();
    scored = p.get();
    probes.push_back(std::move(p));
    config.sweep.adaptive.enabled = true;
  }
  int count(const std::string& type_k, const std::string& status) const {
    int n = 0;
    for (const auto& r : records) n += r["cell"]["type_k"] == type_k && r["status"] == status;
    return n;
  }
  ScoredProbe* scored = nullptr;
};

TEST_F(Adaptive, ACellStopsOnceSettledAndRecordsTheRestSkippedSettled) {
  auto result = run();
  ASSERT_EQ(result.cells.size(), 3u);
  // The reference runs every item; the others stop at min_items (5): equal outputs decide non-inferior
  // and a constant loss of 10 lines decides inferior, both at the first look.
  EXPECT_EQ(scored->runs["f16"], 20);
  EXPECT_EQ(scored->runs["q8_0"], 5);
  EXPECT_EQ(scored->runs["q4_0"], 5);
  EXPECT_EQ(count("q8_0", "skipped"), 15);
  EXPECT_EQ(count("f16", "skipped"), 0);
  for (const auto& r : records) {
    if (r["status"] != "skipped") continue;
    EXPECT_EQ(r["reason"], "settled");
    const std::string expected = r["cell"]["type_k"] == "q8_0" ? "non-inferior" : "inferior";
    EXPECT_EQ(r["adaptive"]["metrics"]["matched"]["verdict"], expected);
    EXPECT_EQ(r["adaptive"]["metrics"]["matched"]["decided_at"], 5);
  }
  EXPECT_EQ(result.cells[1].items_settled, 15);
  // The items ran in the seeded order.
  const auto order = sweep::adaptive_order(scored->items(), config.sweep.adaptive.seed);
  std::vector<std::string> ran, first_five;
  for (const auto& r : records)
    if (r["cell"]["type_k"] == "q8_0" && r["status"] == "ok") ran.push_back(r["item"]);
  for (int i = 0; i < 5; ++i) first_five.push_back(order[static_cast<std::size_t>(i)].key);
  EXPECT_EQ(ran, first_five);
}

TEST_F(Adaptive, ResumeContinuesTheDecisionAndWithoutAdaptiveCompletesTheSettledItems) {
  run();
  const std::size_t after_first = records.size();
  // Resumed adaptive: every cell is settled or done; no server starts, nothing is recorded twice.
  backend.started.clear();
  auto again = run(/*resume=*/true);
  EXPECT_TRUE(backend.started.empty());
  EXPECT_EQ(records.size(), after_first);
  EXPECT_EQ(again.cells[1].outcome, CellOutcome::skipped);
  EXPECT_EQ(again.cells[1].items_settled, 15);
  // Without adaptive the settled items are not ok: they run now.
  config.sweep.adaptive.enabled = false;
  run(/*resume=*/true);
  EXPECT_EQ(scored->runs["q8_0"], 20);
  EXPECT_EQ(count("q8_0", "ok"), 20);
  EXPECT_EQ(count("q4_0", "ok"), 20);
}

TEST_F(Adaptive, AShardRunsASupportCopyOfTheReferenceAndMergeKeepsTheSettledRecords) {
  // Shard 1/2 owns only q8_0/f16 (cell 1 of f16, q8_0, q4_0): its stop needs the reference's items.
  const auto run_shard = [&](int index, const std::filesystem::path& where) {
    auto store = sweep::RunStore::create(where);
    EXPECT_TRUE(store) << store.error().message;
    sweep::RunOptions options;
    options.shard = sweep::Shard{index, 2};
    sweep::Runner runner(config, probes, backend, *store, progress, cancel, options);
    return runner.run();
  };
  const auto one = run_shard(1, dir / "shard1");
  ASSERT_EQ(one.cells.size(), 2u);
  EXPECT_TRUE(one.cells[0].cell.support);
  EXPECT_EQ(one.cells[1].items_ok, 5);
  EXPECT_EQ(one.cells[1].items_settled, 15);
  run_shard(0, dir / "shard0");
  auto merged = sweep::merge_runs({dir / "shard0", dir / "shard1"}, dir / "merged");
  ASSERT_TRUE(merged) << merged.error().message;
  auto store = sweep::RunStore::open(dir / "merged");
  ASSERT_TRUE(store);
  records = lines_of(*store);
  EXPECT_EQ(count("f16", "ok"), 20);  // the owner's reference only
  EXPECT_EQ(count("q8_0", "ok"), 5);
  EXPECT_EQ(count("q8_0", "skipped"), 15);
  EXPECT_EQ(count("q4_0", "ok"), 5);
}
