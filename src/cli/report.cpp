// `kvsweep report` and `kvsweep compare`: read a run, write its report files, gate on a baseline.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/cli/write_report.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/report/output/bundle.hpp"
#include "kvsweep/report/analysis/compare.hpp"
#include "kvsweep/report/output/compare_writers.hpp"
#include "kvsweep/report/output/markdown.hpp"
#include "kvsweep/report/analysis/metric_names.hpp"
#include "kvsweep/report/figures/figures.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/analysis/published.hpp"
#include "kvsweep/report/analysis/summary.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::cli {

namespace {

struct ReportOpts {
  std::string run_dir;
  std::vector<std::string> formats;
  std::string heatmaps = "gated";
};

int report_command(const ReportOpts& o) {
  // `summary` is printed, not written: with it alone every file is written, and the summary printed
  // instead of report.md.
  std::set<report::Format> formats;
  bool summary = false;
  for (const auto& f : o.formats) {
    if (f == "summary") {
      summary = true;
      continue;
    }
    auto parsed = report::parse_format(f);
    if (!parsed) throw core::FatalError("--format " + f + ": unknown format (valid: md, csv, json, svg, html, all, summary)");
    formats.insert(parsed->begin(), parsed->end());
  }
  const bool print_markdown = o.formats.empty();
  if (formats.empty()) formats = *report::parse_format("all");

  const WrittenReport written =
      write_report(o.run_dir, formats, o.heatmaps == "all" ? report::Heatmaps::all : report::Heatmaps::gated);
  const std::filesystem::path out_dir = std::filesystem::path(o.run_dir) / "report";
  if (summary) std::cout << written.summary;
  if (print_markdown) {
    for (const auto& file : written.files) {
      if (file.path == "report.md") std::cout << file.text;
    }
  }
  std::cout.flush();
  const std::size_t n = written.files.size();
  std::fprintf(stderr, "kvsweep report: wrote %zu file%s to %s%s\n", n, n == 1 ? "" : "s", out_dir.c_str(),
               formats.contains(report::Format::html) ? (" (open " + (out_dir / "index.html").string() + ")").c_str()
                                                      : "");
  return core::exit_code::ok;
}

struct CompareOpts {
  std::string run_dir;
  std::string baseline;
  std::string junit;
  std::vector<std::string> tolerances;
  double alpha = 0.05;
  bool all = false;
  bool fail_inconclusive = false;
  bool allow_diff = false;
  bool allow_missing = false;
  std::string format = "md";
  std::string published;
  std::string metric;
  std::string grid;
};

/// The published answer length against the run's own (read from its directory): the run probe's
/// calibration range of the published metric, e.g. recall's 0..lines.
std::vector<std::string> unlike_published_lines(const report::Published& published, const std::string& run_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (published.setup.lines <= 0 || !std::filesystem::is_directory(run_dir, ec)) return out;
  auto data = report::RunData::load(run_dir);
  if (!data) return out;
  for (const auto& p : data->probes()) {
    if (p.kind != published.probe && p.name != published.probe) continue;
    if (p.calibration_metric == published.metric && static_cast<int>(p.calibration_hi) != published.setup.lines)
      out.push_back("probe " + p.name + " asks for " + report::shortest(p.calibration_hi) + " lines per answer (" +
                    published.metric + " 0–" + report::shortest(p.calibration_hi) + "), the published numbers for " +
                    std::to_string(published.setup.lines) + ": the two are on other scales");
  }
  return out;
}

// The published numbers beside the run's, like with like: exit 0 when every compared figure reproduced
// within its stated tolerance (figures not run do not count), 1 when one did not.
int published_command(const CompareOpts& o) {
  auto published = report::load_published(o.published);
  if (!published) throw core::FatalError("--published " + published.error().message);
  auto current = report::load_summary(o.run_dir, report::this_build());
  if (!current) throw core::FatalError(current.error().message);
  report::PublishedCompareOptions options;
  options.metric = o.metric;
  options.grid = o.grid;
  // The run's setup and its variants' settings, from its manifest: compared before any number.
  const auto manifest = report::load_manifest(o.run_dir, *current);
  report::PublishedSetup setup;
  if (manifest) {
    setup = report::run_setup(*manifest);
    options.run_setup = &setup;
    for (const auto& g : published->grids)
      if (!g.variant.empty()) options.run_variant_settings[g.variant] = report::variant_settings(*manifest, g.variant);
  }
  auto comparison = report::compare_published(*current, *published, options);
  if (!comparison) throw core::FatalError(comparison.error().message);
  for (auto& w : unlike_published_lines(*published, o.run_dir)) comparison->warnings.push_back(std::move(w));
  for (const auto& w : comparison->warnings) std::fprintf(stderr, "kvsweep: warning: %s\n", w.c_str());
  std::cout << (o.format == "json" ? report::write_published_json(*comparison)
                                   : report::write_published_comparison(*comparison));
  std::cout.flush();
  const report::ReproCounts counts = report::repro_counts(*comparison);
  for (const auto& f : counts.failed) std::fprintf(stderr, "kvsweep: not reproduced: %s\n", f.c_str());
  return report::published_exit_status(*comparison) == 0 ? core::exit_code::ok : core::exit_code::regression;
}

/// Every --tolerance names a quality metric one of the two runs declares (a typo would be ignored).
void check_tolerance_names(const std::vector<std::string>& specs, const report::Summary& current,
                           const report::Summary& baseline, const std::string& where) {
  std::vector<report::ProbeMetrics> declared;
  for (const auto* doc : {&current, &baseline})
    for (const auto& p : doc->probes) declared.emplace_back(p.name, p.metrics);
  for (const auto& spec : specs) {
    auto t = report::parse_tolerance(spec);
    if (t && t->first != "*")
      report::check_metric_name("--tolerance", spec, t->first, declared, where + " or the baseline",
                                report::AcceptedRoles::quality_only);
  }
}

int compare_command(const CompareOpts& o) {
  if (!o.published.empty()) return published_command(o);
  if (o.baseline.empty()) {
    throw core::FatalError("compare: give --baseline RUN_DIR|FILE (the regression gate) or --published FILE "
                           "(side by side with a document's numbers, e.g. published/seed001-codeneedle.json)");
  }
  report::CompareOptions options;
  options.alpha = o.alpha;
  options.fail_inconclusive = o.fail_inconclusive;
  options.allow_diff = o.allow_diff;
  options.allow_missing = o.allow_missing;
  for (const auto& spec : o.tolerances) {
    auto t = report::parse_tolerance(spec);
    if (!t) throw core::FatalError(t.error().message);
    if (t->first == "*") {
      options.default_tolerance = t->second;
    } else {
      options.tolerances[t->first] = t->second;
    }
  }
  const auto generator = report::this_build();
  std::error_code ec;
  if (!std::filesystem::is_directory(o.run_dir, ec)) throw core::FatalError(o.run_dir + ": not a run directory");
  auto current = report::load_summary(o.run_dir, generator);
  if (!current) throw core::FatalError(current.error().message);
  auto baseline = report::load_summary(o.baseline, generator);
  if (!baseline) throw core::FatalError("--baseline " + baseline.error().message);
  check_tolerance_names(o.tolerances, *current, *baseline, o.run_dir);
  // Both manifests at hand (run directories, or a baseline's RUN_DIR/report/summary.json): what changed,
  // the host llama.cpp computed on first (a deterministic change across hosts is not the K/V setting's).
  const auto now = report::load_manifest(o.run_dir, *current), before = report::load_manifest(o.baseline, *baseline);
  // Their identities as a resume or merge reads them: a manifest field of another type is an error, never no check.
  const auto now_identity = report::load_identity(o.run_dir);
  if (!now_identity) throw core::FatalError(now_identity.error().message);
  const auto before_identity = report::load_identity(o.baseline);
  if (!before_identity) throw core::FatalError("--baseline " + before_identity.error().message);
  options.host_changed = now && before && report::compute_differs(*before, *now);
  auto comparison = report::compare_summaries(*current, *baseline, options);
  if (!comparison) throw core::FatalError(comparison.error().message);
  if (now && before)
    comparison->changes = report::manifest_changes(*before, *now, before_identity->has_value() ? &**before_identity : nullptr,
                                                   now_identity->has_value() ? &**now_identity : nullptr);
  for (const auto& w : comparison->warnings) std::fprintf(stderr, "kvsweep: warning: %s\n", w.c_str());
  std::cout << (o.format == "json" ? report::write_compare_json(*comparison)
                                   : report::write_compare_table(*comparison, o.all ? report::CheckRows::all
                                                                                    : report::CheckRows::not_ok));
  std::cout.flush();
  if (!o.junit.empty()) {
    auto written = sweep::write_file_atomic(o.junit, report::write_junit(*comparison));
    if (!written) throw core::FatalError("--junit " + written.error().message);
  }
  return report::exit_status(*comparison);
}

}  // namespace

void register_report(CLI::App& app, Commands& commands) {
  auto* rep = app.add_subcommand(
      "report",
      "Write RUN_DIR/report/: summary.json, grids/*.csv, long.csv, report.md, SVG figures, index.html; "
      "without --format also print the Markdown report; --format summary prints the run at a glance instead");
  auto ropts = std::make_shared<ReportOpts>();
  rep->add_option("RUN_DIR", ropts->run_dir, "Run directory (holds manifest.json and records.jsonl)")->required();
  rep->add_option("--format", ropts->formats, "Only these outputs: md, csv, json, svg, html or all (comma-separated); summary: print the run at a glance "
                  "(the headline per probe, the cells that differ, the verdict) and write the others, all by default")
      ->delimiter(',');
  rep->add_option("--heatmaps", ropts->heatmaps,
                  "Which metrics get a heat map (SVG, index.html): gated (default: the metrics a verdict rests on, a "
                  "probe's \"gate\", else quality and the distances with a threshold) or all (every metric with a grid; "
                  "grids/*.csv hold every metric either way)")
      ->check(CLI::IsMember({"gated", "all"}))
      ->capture_default_str();
  rep->callback([&commands, ropts] { commands.action = [ropts] { return report_command(*ropts); }; });

  auto* cmp = app.add_subcommand(
      "compare",
      "Compare a run with a baseline run or summary.json: exit 0 ok, 1 regression, 2 error. Only the quality "
      "metrics the probes declare are gated. A regression is a bad-direction change beyond the tolerance that is "
      "significant (paired test, Holm) or, for a deterministic probe on the same items, any such change; such a "
      "change on a check whose test could never reach significance with its items is inconclusive (printed, "
      "exit 0 unless --fail-inconclusive). A baseline cell or item the run lacks is missing and fails the gate "
      "unless --allow-missing. Prints the checks that are not ok, per-probe counts and a summary "
      "line. With --published instead: a published grid (published/*.json, docs/published-format.md) beside the "
      "run's cells of the same variant, its setup differences first; exit 0 when every compared figure reproduced "
      "within its stated tolerance (figures of cells or probes not run are 'not run', not failures), 1 when one "
      "did not, 2 on an error");
  auto copts = std::make_shared<CompareOpts>();
  cmp->add_option("RUN_DIR", copts->run_dir, "The run to check")->required();
  auto* baseline = cmp->add_option("--baseline", copts->baseline, "Baseline run directory or its report/summary.json");
  auto* junit = cmp->add_option("--junit", copts->junit, "Also write JUnit XML here (one test case per check: cell, probe and quality metric)");
  auto* tolerance = cmp->add_option("--tolerance", copts->tolerances,
                                    "METRIC=VALUE, PROBE.METRIC=VALUE or *=VALUE; VALUE absolute (0.02) or relative to "
                                    "the baseline mean (5%); default *=5%")
                        ->take_all();
  auto* alpha = cmp->add_option("--alpha", copts->alpha, "Significance level after Holm")->capture_default_str();
  auto* all = cmp->add_flag("--all", copts->all, "Print every check, not only those that are not ok");
  auto* fail_inconclusive = cmp->add_flag("--fail-inconclusive", copts->fail_inconclusive,
                                          "An inconclusive check (too few items for its test to ever be "
                                          "significant) fails the gate: exit 1, a JUnit failure");
  auto* allow_diff = cmp->add_flag("--allow-diff", copts->allow_diff,
                                   "The runs hold different items (the config changed on purpose): compare the items "
                                   "both hold; cells without common items are 'not comparable', never regressions "
                                   "(without it such runs are refused, exit 2)");
  auto* allow_missing = cmp->add_flag("--allow-missing", copts->allow_missing,
                                      "The run may lack cells or items the baseline has (a smaller grid, --only, a "
                                      "failed item, on purpose): they are listed as missing and pass; without it each "
                                      "fails the gate (exit 1, a JUnit failure)");
  cmp->add_option("--format", copts->format, "md (a table for people) or json (every check, for tools; with --published every figure and its outcome)")
                     ->check(CLI::IsMember({"md", "json"}))
                     ->capture_default_str();
  auto* published = cmp->add_option("--published", copts->published,
                                    "Instead of a baseline: a published file (published/*.json; `kvsweep published "
                                    "export` writes one) to reproduce: exit 1 when a compared figure is off by more "
                                    "than its stated tolerance")
                        ->excludes(baseline)
                        ->excludes(junit)
                        ->excludes(tolerance)
                        ->excludes(alpha)
                        ->excludes(all)
                        ->excludes(fail_inconclusive)
                        ->excludes(allow_diff)
                        ->excludes(allow_missing);
  cmp->add_option("--metric", copts->metric, "With --published: only the grids of this metric (default: every grid's)")
      ->needs(published);
  cmp->add_option("--grid", copts->grid, "With --published: only this published grid (by id)")->needs(published);
  cmp->callback([&commands, copts] { commands.action = [copts] { return compare_command(*copts); }; });
}

}  // namespace kvsweep::cli
