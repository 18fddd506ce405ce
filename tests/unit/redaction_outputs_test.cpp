// One redaction for everything kvsweep prints or writes: a registered secret, a
// launch template's --api-key in any argv form and a secret-named variable never reach the dry run,
// a server's own log, progress, the manifest, the records, the report files or the request trace.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "kvsweep/cli/dry_run.hpp"
#include "kvsweep/cli/progress.hpp"
#include "kvsweep/cli/template_options.hpp"
#include "kvsweep/config/config.hpp"
#include "kvsweep/core/redact.hpp"
#include "kvsweep/http/trace.hpp"
#include "kvsweep/probe/record.hpp"
#include "kvsweep/sweep/store/run_store.hpp"
#include "temp_file.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace core = kvsweep::core;
using json = nlohmann::json;
using kvsweep::testing::slurp;
using kvsweep::testing::temp_file;

namespace {

/// A launch template holding a key in each argv form a server takes, and a secret-named variable.
json template_config(const std::filesystem::path& output_dir) {
  return {{"output_dir", output_dir.string()},
          {"server",
           {{"command", {"{binary}", "-m", "{model}", "--host", "{host}", "--port", "{port}", "--kv", "{type_k}", "--api-key",
                         "sk-dry-spaced-1234", "--api_key=sk-dry-underscore-5678", "--token", "tok-dry-9012",
                         "--hf-token=hf_dry_3456", "-hft", "hf_dry_short_7890"}},
            {"binary", "/bin/sh"},  // any executable: the dry run checks it exists
            {"env", {{"OPENAI_API_KEY", "sk-dry-env-2468"}}},
            {"cache_types", {"auto", "fp8"}},
            {"kv_tied", true},
            {"reference", "auto/auto"},
            {"listening", "listening on {host}:{port}"}}},
          {"models", {{{"name", "m"}, {"path", "org/model"}}}},
          {"grid", {{"k", {"auto", "fp8"}}, {"v", "tied"}}},
          {"probes", {{{"kind", "complete"}}}}};
}

const std::vector<std::string> kDrySecrets = {"sk-dry-spaced-1234", "sk-dry-underscore-5678", "tok-dry-9012",
                                              "hf_dry_3456", "hf_dry_short_7890", "sk-dry-env-2468"};

}  // namespace

TEST(RedactionOutputs, TheDryRunPrintsNoKeyOfALaunchTemplatesArgv) {
  const auto dir = temp_file("-runs");
  const kvsweep::config::Config cfg = kvsweep::config::from_json(template_config(dir), "sweep.json");
  std::vector<std::unique_ptr<kvsweep::probe::Probe>> probes;
  probes.push_back(kvsweep::probe::make_probe(cfg.probes.at(0), {{"sweep.json", "probes[0]"}, "."}));
  kvsweep::server::TemplateBackend backend(kvsweep::cli::template_options(cfg.server));
  ::testing::internal::CaptureStdout();
  kvsweep::cli::print_dry_run(cfg, probes, {}, backend);
  std::fflush(stdout);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr("launch ("));
  EXPECT_THAT(out, HasSubstr("--api-key <redacted>"));
  for (const auto& secret : kDrySecrets) EXPECT_THAT(out, Not(HasSubstr(secret)));
}

TEST(RedactionOutputs, EveryArgvFormAndSecretVariableIsRecognisedInText) {
  core::add_secrets_from_args({"--api_key", "sk-form-underscore-1", "--token=tok-form-2"});
  core::add_secrets_from_env({{"HF_TOKEN", "hf_form_env_3"}, {"Authorization", "Bearer form-bearer-4"},
                              {"MAX_TOKENS", "4096"}});
  EXPECT_EQ(core::redact("echo sk-form-underscore-1 tok-form-2 hf_form_env_3 form-bearer-4"),
            "echo <redacted> <redacted> <redacted> <redacted>");
  EXPECT_EQ(core::redact("n_ctx 4096"), "n_ctx 4096");  // MAX_TOKENS is not a secret's name
  EXPECT_EQ(core::redact("args: --api_key unregistered-5 --token=unregistered-6"),
            "args: --api_key <redacted> --token=<redacted>");
  EXPECT_EQ(core::redact("env VLLM_API_KEY=unregistered-7 DB_PASSWORD='unregistered-8' max_tokens=16 MAX_TOKENS=9"),
            "env VLLM_API_KEY=<redacted> DB_PASSWORD='<redacted>' max_tokens=16 MAX_TOKENS=9");
  EXPECT_TRUE(core::is_secret_env("OPENAI_API_KEY"));
  EXPECT_TRUE(core::is_secret_env("hf_token"));
  EXPECT_FALSE(core::is_secret_env("MAX_TOKENS"));
  EXPECT_FALSE(core::is_secret_env("CUDA_VISIBLE_DEVICES"));
}

TEST(RedactionOutputs, AServerLogIsRedactedLineByLineEvenWhenASecretIsSplitAcrossChunks) {
  core::add_secret("sk-split-across-chunks-42");
  core::LineRedactor lines;
  std::string log;
  log += lines.feed("main: args: --port 8080 --api-key sk-split-");
  EXPECT_EQ(log, "");  // an unfinished line is held
  log += lines.feed("across-chunks-42\nrequest: key sk-split-acr");
  log += lines.feed("oss-chunks-42 Authorization: Bearer abcdefghijklmnop\npartial sk-split-across-chunks-42");
  log += lines.finish();
  EXPECT_EQ(log,
            "main: args: --port 8080 --api-key <redacted>\n"
            "request: key <redacted> Authorization: Bearer <redacted>\n"
            "partial <redacted>");
}

TEST(RedactionOutputs, ProgressPrintsNoRegisteredSecret) {
  core::add_secret("sk-progress-secret-77");
  kvsweep::cli::StderrProgress progress(false);
  kvsweep::sweep::CellResult failed;
  failed.outcome = kvsweep::server::CellOutcome::load_failed;
  failed.message = "server said: bad key sk-progress-secret-77";
  ::testing::internal::CaptureStderr();
  progress.plan(1, 1);
  progress.note("retrying with sk-progress-secret-77");
  progress.cell_done(failed);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("bad key <redacted>"));
  EXPECT_THAT(err, Not(HasSubstr("sk-progress-secret-77")));
}

TEST(RedactionOutputs, TheManifestRecordsJournalAndReportFilesHoldNoRegisteredSecret) {
  core::add_secret("sk-store-secret-88");
  const auto dir = temp_file("-run");
  std::filesystem::remove_all(dir);
  auto store = kvsweep::sweep::RunStore::create(dir);
  ASSERT_TRUE(store) << store.error().message;
  ASSERT_TRUE(store->write_manifest(*kvsweep::sweep::Manifest::from_json(
      nlohmann::json{{"server", {{"argv", {"srv", "--api-key", "sk-store-secret-88"}}}}})));
  kvsweep::probe::Record record;
  record.cell = {"m", "", "f16", "f16"};
  record.probe = record.kind = "complete";
  record.item = "a";
  record.set_status("http_error");  // a failed item's message quotes what the server said
  record.error = "HTTP 401: key sk-store-secret-88 refused";
  ASSERT_TRUE(store->append(record));
  ASSERT_TRUE(store->append_cell(*kvsweep::sweep::ManifestCell::from_json(
      nlohmann::json{{"cell", "m f16/f16"}, {"message", "sk-store-secret-88"}})));
  ASSERT_TRUE(kvsweep::sweep::write_file_atomic(dir / "report" / "report.md", "the key was sk-store-secret-88\n"));
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    EXPECT_THAT(slurp(entry.path()), Not(HasSubstr("sk-store-secret-88"))) << entry.path();
  }
  EXPECT_THAT(slurp(dir / "manifest.json"), HasSubstr("<redacted>"));
  EXPECT_THAT(slurp(dir / "report" / "report.md"), HasSubstr("<redacted>"));
}

TEST(RedactionOutputs, TheRequestTraceHoldsNoRegisteredSecret) {
  const auto path = temp_file(".trace.jsonl");
  std::filesystem::remove(path);
  ::setenv("KVSWEEP_HTTP_TRACE", path.c_str(), 1);
  // The trace file is opened once per process: another test that traced first leaves it off here.
  if (!kvsweep::http::trace_enabled()) GTEST_SKIP() << "the trace was opened before this test; run it alone";
  core::add_secret("sk-trace-secret-99");
  kvsweep::http::trace({"POST", "http://127.0.0.1:1", "/v1/completions", 0, false, false, false, 1.0, 10, std::nullopt,
                        "refused: key sk-trace-secret-99"});
  const std::string text = slurp(path);
  EXPECT_THAT(text, HasSubstr("<redacted>"));
  EXPECT_THAT(text, Not(HasSubstr("sk-trace-secret-99")));
}
