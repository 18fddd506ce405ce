// `kvsweep published export`: a run written as a published file, its setup from the manifest.
#include <iostream>
#include <memory>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/report/analysis/compare.hpp"
#include "kvsweep/report/analysis/published.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::cli {

namespace {

struct ExportOpts {
  std::string run_dir;
  std::string out;
  report::PublishedExportOptions options;
};

int export_command(const ExportOpts& o) {
  std::error_code ec;
  if (!std::filesystem::is_directory(o.run_dir, ec)) throw core::FatalError(o.run_dir + ": not a run directory");
  auto summary = report::load_summary(o.run_dir, report::this_build());
  if (!summary) throw core::FatalError(summary.error().message);
  const auto manifest = report::load_manifest(o.run_dir, *summary);
  if (!manifest) throw core::FatalError(o.run_dir + ": no readable manifest.json (the setup is read from it)");
  auto doc = report::export_published(*summary, *manifest, o.options);
  if (!doc) throw core::FatalError(doc.error().message);
  (*doc)["source"]["file"] = std::filesystem::absolute(o.run_dir).lexically_normal().string();
  // What was written must read back: the export and the reader hold one format.
  if (auto check = report::parse_published(nlohmann::json(*doc)); !check)
    throw core::FatalError("export: the file would not read back: " + check.error().message);
  const std::string text = doc->dump(2) + "\n";
  if (o.out.empty() || o.out == "-") {
    std::cout << text;
    std::cout.flush();
    return core::exit_code::ok;
  }
  auto written = sweep::write_file_atomic(o.out, text);
  if (!written) throw core::FatalError("--out " + written.error().message);
  std::fprintf(stderr, "kvsweep published export: wrote %s\n", o.out.c_str());
  return core::exit_code::ok;
}

}  // namespace

void register_published(CLI::App& app, Commands& commands) {
  auto* pub = app.add_subcommand("published", "Published grids (docs/published-format.md): export a run as one; "
                                              "`kvsweep compare RUN --published FILE` reproduces one");
  pub->require_subcommand(1);
  auto* exp = pub->add_subcommand(
      "export",
      "Write a run (or part of it) as a published file: per model, variant, probe and metric a K×V grid of its "
      "figures (a deterministic probe with 2-8 items per item, else the cell means), each with its variant's "
      "settings and stated decimals; the setup (model sha256, server build, host and llama.cpp's compute, context, "
      "embedder, each probe's settings and items) from the run's manifest");
  auto opts = std::make_shared<ExportOpts>();
  exp->add_option("RUN_DIR", opts->run_dir, "The run to export")->required();
  exp->add_option("--out,-o", opts->out, "Write here (default: stdout)");
  exp->add_option("--name", opts->options.name, "The file's name (default: the run's)");
  exp->add_option("--probe", opts->options.probes, "Only these probes (names or kinds; repeatable)");
  exp->add_option("--metric", opts->options.metrics,
                  "Only these metrics (repeatable; default: each probe's judged metrics, no diagnostics)");
  exp->add_option("--variant", opts->options.variants, "Only these variants (repeatable)");
  exp->add_option("--decimals", opts->options.decimals,
                  "Round every figure to this many decimals and state it (default: 3 significant digits of each "
                  "grid's smallest figure, none for whole numbers)")
      ->check(CLI::Range(0, 9));
  exp->callback([&commands, opts] { commands.action = [opts] { return export_command(*opts); }; });
}

}  // namespace kvsweep::cli
