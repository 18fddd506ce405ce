// What compare says changed between two runs, from their manifests: a pure diff over
// literal manifests, worded "what: before → after", and rendered above the checks.
#include "kvsweep/report/analysis/manifest_changes.hpp"

#include <filesystem>
#include <fstream>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kvsweep/report/analysis/compare.hpp"
#include "kvsweep/sweep/store/run_identity.hpp"
#include "temp_file.hpp"
#include "kvsweep/report/output/compare_writers.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace report = kvsweep::report;
using kvsweep::sweep::Manifest;
using nlohmann::json;

namespace {

json cell(const std::string& k, int attn_rot_k, const std::string& flash = "enabled") {
  return {{"model", "tiny"},
          {"type_k", k},
          {"type_v", "f16"},
          {"outcome", "ok"},
          {"effective",
           {{"found", true}, {"type_k", k}, {"type_v", "f16"}, {"flash_attn", flash}, {"attn_rot_k", attn_rot_k},
            {"attn_rot_v", 0}, {"n_ctx", 2048}, {"path", "cpu"}, {"kv_mib", 1.28}}}};
}

// As the runner writes one (abridged): three cells, rotation on for the quantized K.
json manifest_json() {
  return {{"schema_version", 1},
          {"kind", "kvsweep-run"},
          {"config", {{"server", {{"args", {"-fa", "on", "-t", "1"}}, {"env", json::object()}}}}},
          {"config_hash", "aaa"},
          {"kvsweep", {{"version", "0.9.0"}, {"git_sha", "0123456789abcdef"}}},
          {"server", {{"backend", "llama-server"}, {"version", "0.5.0-dev (build 1, commit de3ff81)"}}},
          {"server_env", {{"CUDA_VISIBLE_DEVICES", "0"}}},
          {"n_ctx", 2048},
          {"models", {{{"name", "tiny"}, {"path", "/m/tiny.gguf"}, {"sha256", "5fd6df6e7e8f6084d9bcc225"}}}},
          {"cells", {cell("f16", 0), cell("q8_0", 1), cell("q4_0", 1)}}};
}

Manifest manifest(const json& j) { return *Manifest::from_json(j); }

std::vector<std::string> lines(const std::vector<report::ManifestChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) out.push_back(report::explain(c));
  return out;
}

TEST(ManifestChanges, IdenticalManifestsChangeNothing) {
  EXPECT_TRUE(report::manifest_changes(manifest(manifest_json()), manifest(manifest_json())).empty());
}

TEST(ManifestChanges, RotationOffByAnInheritedVariableIsOneSettingLineAndOneEnvLine) {
  json after = manifest_json();
  after["server_env"]["LLAMA_ATTN_ROT_DISABLE"] = "1";
  for (auto& c : after["cells"]) c["effective"]["attn_rot_k"] = 0;
  const auto changes = report::manifest_changes(manifest(manifest_json()), manifest(after));
  EXPECT_EQ(lines(changes), (std::vector<std::string>{
                                "attn_rot_k in tiny-q8_0-f16, tiny-q4_0-f16: on → off",
                                "env LLAMA_ATTN_ROT_DISABLE: unset → 1",
                            }));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].area, report::ChangeArea::setting);
  EXPECT_EQ(changes[0].cells_compared, 3u);
  EXPECT_EQ(changes[1].before, std::nullopt);
  EXPECT_EQ(changes[1].after, "1");
}

TEST(ManifestChanges, EverySettingBuildModelArgsAndContextChangeIsNamed) {
  json after = manifest_json();
  for (auto& c : after["cells"]) c["effective"]["flash_attn"] = "disabled";
  after["cells"][2]["effective"]["type_k"] = "f16";  // the server fell back
  after["cells"][2]["effective"].erase("path");       // and did not say which path
  after["config"]["server"]["args"] = {"-fa", "off", "-t", "1"};
  after["n_ctx"] = 4096;
  after["server"]["version"] = "0.6.0 (build 2, commit abcdef0)";
  after["models"][0]["sha256"] = "1996269170e4ffff";
  after["kvsweep"]["git_sha"] = "fedcba9876543210";
  after["server_env"].erase("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(lines(report::manifest_changes(manifest(manifest_json()), manifest(after))),
            (std::vector<std::string>{
                "type_k in tiny-q4_0-f16: q4_0 → f16",
                "flash_attn in every cell: enabled → disabled",
                "path in tiny-q4_0-f16: cpu → not reported",
                "env CUDA_VISIBLE_DEVICES: 0 → unset",
                "server args: -fa on -t 1 → -fa off -t 1",
                "n_ctx: 2048 → 4096",
                "server version: 0.5.0-dev (build 1, commit de3ff81) → 0.6.0 (build 2, commit abcdef0)",
                "model tiny sha256: 5fd6df6e7e8f → 1996269170e4",
                "kvsweep: 0.9.0 (0123456789ab) → 0.9.0 (fedcba987654)",
            }));
}

TEST(ManifestChanges, ACellOnlyOneRunHoldsOrThatNeverReportedIsNotAChange) {
  json before = manifest_json(), after = manifest_json();
  after["cells"] = {cell("f16", 0), cell("q8_0", 0)};  // no q4_0 cell now
  after["cells"][1]["effective"]["found"] = false;     // q8_0 failed to load: nothing reported
  EXPECT_TRUE(report::manifest_changes(manifest(before), manifest(after)).empty());
}

TEST(ManifestChanges, AManySettingLineNamesThreeCellsAndCountsTheRest) {
  json before = manifest_json(), after;
  before["cells"] = json::array();
  for (const char* k : {"q8_0", "q5_0", "q5_1", "q4_0", "q4_1", "iq4_nl"}) before["cells"].push_back(cell(k, 1));
  before["cells"].push_back(cell("f16", 0));
  after = before;
  for (auto& c : after["cells"]) c["effective"]["attn_rot_k"] = 0;
  EXPECT_EQ(lines(report::manifest_changes(manifest(before), manifest(after))),
            (std::vector<std::string>{"attn_rot_k in tiny-q8_0-f16, tiny-q5_0-f16, tiny-q5_1-f16 and 3 more: on → off"}));
}

TEST(ManifestChanges, WithoutARecordedEnvironmentTheConfigsEnvAndVariantsAreCompared) {
  json before = manifest_json(), after = manifest_json();
  before.erase("server_env");  // a manifest of an older kvsweep
  after["server_env"]["LLAMA_ATTN_ROT_DISABLE"] = "1";
  before["config"]["server"]["env"] = {{"GGML_SCHED_MAX_COPIES", "4"}};
  after["config"]["server"]["env"] = {{"GGML_SCHED_MAX_COPIES", "2"}, {"LLAMA_API_KEY", "<redacted>"}};
  before["config"]["variants"] = {{{"name", "rotoff"}, {"env", {{"LLAMA_ATTN_ROT_DISABLE", "1"}}}, {"args", json::array()}}};
  after["config"]["variants"] = {{{"name", "rotoff"}, {"env", json::object()}, {"args", {"-fa", "off"}}}};
  const auto text = lines(report::manifest_changes(manifest(before), manifest(after)));
  EXPECT_EQ(text, (std::vector<std::string>{
                      "env GGML_SCHED_MAX_COPIES: 4 → 2",
                      "env LLAMA_API_KEY: unset → <redacted>",
                      "variant rotoff env LLAMA_ATTN_ROT_DISABLE: 1 → unset",
                      "variant rotoff args: (empty) → -fa off",
                  }));
}

TEST(ManifestChanges, CompareSaysThemAboveTheChecksInEveryFormat) {
  json after = manifest_json();
  after["server_env"]["LLAMA_ATTN_ROT_DISABLE"] = "1";
  after["server_env"]["LLAMA_API_KEY"] = "<redacted>";
  report::Comparison cmp;
  cmp.differences = {"the configs differ: the baseline's hash is aaa, this run's bbb"};
  cmp.changes = report::manifest_changes(manifest(manifest_json()), manifest(after));
  const std::string md = report::write_compare_table(cmp);
  EXPECT_THAT(md, HasSubstr("**What changed since the baseline** (baseline → this run):\n\n"
                            "- env LLAMA_API_KEY: unset → &lt;redacted>\n"  // Markdown escapes a tag
                            "- env LLAMA_ATTN_ROT_DISABLE: unset → 1\n"));
  EXPECT_LT(md.find("What changed"), md.find("Note: the configs differ"));
  const std::string text = report::render_text(report::compare_document(cmp));
  EXPECT_THAT(text, HasSubstr("env LLAMA_ATTN_ROT_DISABLE: unset → 1"));
  EXPECT_THAT(report::render_html(report::compare_document(cmp)), HasSubstr("env LLAMA_ATTN_ROT_DISABLE: unset → 1"));
  const json j = json::parse(report::write_compare_json(cmp));
  ASSERT_EQ(j["changes"].size(), 2u);
  EXPECT_EQ(j["changes"][1], (json{{"area", "env"},
                                   {"name", "LLAMA_ATTN_ROT_DISABLE"},
                                   {"before", nullptr},
                                   {"after", "1"},
                                   {"text", "env LLAMA_ATTN_ROT_DISABLE: unset → 1"}}));
  EXPECT_THAT(report::write_junit(cmp), HasSubstr("<system-out>What changed since the baseline (baseline → this run):\n"
                                                  "- env LLAMA_API_KEY: unset → &lt;redacted&gt;"));
  // Nothing changed: nothing said.
  cmp.changes.clear();
  EXPECT_THAT(report::write_compare_table(cmp), Not(HasSubstr("What changed")));
  EXPECT_THAT(report::write_junit(cmp), Not(HasSubstr("What changed")));
}

TEST(ManifestChanges, AnotherHostsComputeIsNamedFirstAndOnlyWhenBothRunsRecordedIt) {
  // What llama.cpp's system_info reported, in each cell's effective.attention (the manifest's compute
  // is read from them when the manifest predates the field).
  const auto with_features = [](json m, const json& features) {
    for (auto& c : m["cells"]) c["effective"]["attention"] = {{"backends", {"CPU"}}, {"devices", json::array()},
                                                              {"cpu_features", features}};
    return m;
  };
  const json avx512 = with_features(manifest_json(), {"AVX", "AVX2", "AVX512", "AVX512_VNNI"});
  json avx2 = with_features(manifest_json(), {"AVX", "AVX2"});
  avx2["server_env"]["LLAMA_ATTN_ROT_DISABLE"] = "1";
  EXPECT_TRUE(report::compute_differs(manifest(avx512), manifest(avx2)));
  const auto changes = lines(report::manifest_changes(manifest(avx512), manifest(avx2)));
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(changes.front(), "host: CPU (CPU: AVX AVX2 AVX512 AVX512_VNNI) → CPU (CPU: AVX AVX2)");
  EXPECT_THAT(changes, ::testing::Contains("env LLAMA_ATTN_ROT_DISABLE: unset → 1"));
  // The manifest's own field wins over the cells'.
  json recorded = avx2;
  recorded["compute"] = {{"backends", {"CPU"}}, {"devices", json::array()}, {"cpu_features", {"AVX", "AVX2", "AVX512", "AVX512_VNNI"}}};
  EXPECT_FALSE(report::compute_differs(manifest(avx512), manifest(recorded)));
  // A run that never recorded its compute (an older baseline) is not another host, only an unknown one.
  EXPECT_FALSE(report::compute_differs(manifest(manifest_json()), manifest(avx2)));
  EXPECT_THAT(lines(report::manifest_changes(manifest(manifest_json()), manifest(avx2))),
              Not(::testing::Contains(HasSubstr("host:"))));
}

}  // namespace

namespace {

// Identity-only parts: what the manifest records of the embedder and of each probe's input files.
json with_inputs(const std::string& prompts_sha, const std::string& embedder_sha) {
  json j = manifest_json();
  j["probes"] = {{{"name", "complete"},
                  {"kind", "complete"},
                  {"inputs", {{{"key", "prompts_file"}, {"path", "/x/prompts.txt"}, {"sha256", prompts_sha}}}}}};
  j["embedder"] = {{"path", "/m/embed.gguf"}, {"sha256", embedder_sha}};
  return j;
}

kvsweep::sweep::RunIdentity identity(const json& j) {
  auto id = kvsweep::sweep::read_identity(*kvsweep::sweep::Manifest::from_json(j));
  EXPECT_TRUE(id) << id.error().message;
  return *id;
}

}  // namespace

TEST(ManifestChanges, AnInputFileAndTheEmbedderThatOnlyTheIdentityHoldsAreNamedWhenTheyDiffer) {
  const json a = with_inputs("aaaaaaaaaaaaaaaa", "eeeeeeeeeeeeeeee"), b = with_inputs("bbbbbbbbbbbbbbbb", "ffffffffffffffff");
  const auto ia = identity(a), ib = identity(b);
  const auto changed = lines(report::manifest_changes(manifest(a), manifest(b), &ia, &ib));
  EXPECT_THAT(changed, ::testing::Contains(HasSubstr("probe 'complete' prompts_file /x/prompts.txt sha256: aaaaaaaaaaaa → bbbbbbbbbbbb")));
  EXPECT_THAT(changed, ::testing::Contains(HasSubstr("embedder model sha256: eeeeeeeeeeee → ffffffffffff")));
  // The same inputs: nothing of theirs; without identities (a summary.json baseline) they are not compared.
  const auto ia2 = identity(a);
  EXPECT_TRUE(report::manifest_changes(manifest(a), manifest(a), &ia, &ia2).empty());
  EXPECT_TRUE(report::manifest_changes(manifest(a), manifest(b)).empty());
}

TEST(CompareIdentity, AManifestFieldOfTheWrongTypeIsAnErrorNamingItNeverNoCheck) {
  const auto dir = kvsweep::testing::temp_file("_run");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto write = [&](const json& j) { std::ofstream(dir / "manifest.json") << j.dump(2); };
  write(manifest_json());
  auto read = report::load_identity(dir);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->models.at(0).sha256, "5fd6df6e7e8f6084d9bcc225");
  for (const auto& [pointer, value, named] :
       std::vector<std::tuple<std::string, json, std::string>>{{"/models/0/sha256", 3, "models[0].sha256"},
                                                               {"/server_env", "X=1", "server_env"},
                                                               {"/embedder", json::array(), "embedder"}}) {
    json bad = manifest_json();
    bad[json::json_pointer(pointer)] = value;
    write(bad);
    read = report::load_identity(dir);
    ASSERT_FALSE(read) << named << " of another type read as no check";
    EXPECT_THAT(read.error().message, HasSubstr(named + ": got"));
    EXPECT_THAT(read.error().message, HasSubstr((dir / "manifest.json").string()));
  }
  // A summary.json kept apart from its run records no identity: nothing to check, no error.
  const auto summary = kvsweep::testing::temp_file("_summary.json");
  std::ofstream(summary) << json{{"kind", "kvsweep-summary"}}.dump();
  read = report::load_identity(summary);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_FALSE(read->has_value());
}

namespace {

/// A summary kept apart from its run, as manifest_json()'s run wrote it: its context and each cell's
/// reported settings, read back through the Summary's typed fields.
report::Summary summary_of(const json& m) {
  report::Summary s;
  s.set_context({{"server", m["server"]},
                 {"kvsweep", m["kvsweep"]},
                 {"models", m["models"]},
                 {"n_ctx", m["n_ctx"]},
                 {"server_env", m["server_env"]},
                 {"run", {{"name", "r"}, {"config_hash", m["config_hash"]}}}});
  for (const auto& c : m["cells"]) {
    report::SummaryCell cell;
    cell.set_key(kvsweep::core::CellKey::from_json(c));
    cell.id = cell.CellKey::id();
    cell.effective = kvsweep::sweep::CellEffective::from_json(c["effective"]);
    s.cells.push_back(std::move(cell));
  }
  return s;
}

}  // namespace

// A summary.json kept apart (a CI baseline) carries the manifest's parts compare explains by; they are
// read from the Summary's own fields, not from its file again, and a run's manifest and its summary
// then explain alike (what only a config says is not compared).
TEST(ManifestChanges, ASummaryKeptApartExplainsByTheManifestPartsItCarries) {
  json bare = manifest_json();
  bare.erase("config");  // a summary carries no config
  const Manifest parts = report::manifest_parts(summary_of(manifest_json()));
  EXPECT_EQ(parts.config_hash, "aaa");
  EXPECT_EQ(parts.n_ctx, 2048);
  ASSERT_TRUE(parts.server_env);
  EXPECT_EQ(parts.server_env->at("CUDA_VISIBLE_DEVICES"), "0");
  ASSERT_EQ(parts.cell_list().size(), 3u);
  EXPECT_TRUE(report::manifest_changes(manifest(bare), parts).empty());

  json changed = manifest_json();
  changed["cells"][1]["effective"]["attn_rot_k"] = 0;
  changed["server"]["version"] = "0.6.0";
  changed["server_env"]["LLAMA_ATTN_ROT_DISABLE"] = "1";
  const auto said = lines(report::manifest_changes(parts, report::manifest_parts(summary_of(changed))));
  EXPECT_THAT(said, ::testing::Contains(HasSubstr("attn_rot_k in tiny-q8_0-f16: on → off")));
  EXPECT_THAT(said, ::testing::Contains(HasSubstr("server version: 0.5.0-dev (build 1, commit de3ff81) → 0.6.0")));
  EXPECT_THAT(said, ::testing::Contains(HasSubstr("env LLAMA_ATTN_ROT_DISABLE: unset → 1")));
}
