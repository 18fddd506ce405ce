// `kvsweep recommend`: the cheapest -ctk/-ctv pair that stays within tolerance of the reference.
#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/report/analysis/metric_names.hpp"
#include "kvsweep/report/analysis/recommend.hpp"

namespace kvsweep::cli {

namespace {

struct RecommendOpts {
  std::string run_dir;
  std::vector<std::string> margins;
  std::vector<std::string> gate;
  int context = 0;
  double vram_gib = 0;
  double alpha = 0.05;
  double max_slowdown = 0;  // 0: not set
  std::string format = "md";
};

/// "METRIC=V" or "PROBE.METRIC=V" with V >= 0.
std::pair<std::string, double> parse_margin(const std::string& spec) {
  const auto eq = spec.find('=');
  double value = std::nan("");
  if (eq != std::string::npos && eq > 0) {
    const char* first = spec.data() + eq + 1;
    const char* last = spec.data() + spec.size();
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || ptr != last) value = std::nan("");
  }
  if (!(value >= 0.0)) {
    throw core::FatalError("--margin " + spec + ": expected METRIC=V or PROBE.METRIC=V with V >= 0 (e.g. "
                           "--margin recall.primary_matched=2)");
  }
  return {spec.substr(0, eq), value};
}

int recommend_command(const RecommendOpts& o) {
  report::RecommendOptions options;
  if (o.context > 0) options.context = o.context;
  if (o.vram_gib > 0) options.vram_gib = o.vram_gib;
  options.alpha = o.alpha;
  if (o.max_slowdown > 0) options.max_slowdown = o.max_slowdown;
  auto data = report::RunData::load(o.run_dir);
  if (!data) throw core::FatalError(o.run_dir + ": " + data.error().message + " (is it a kvsweep run directory?)");
  std::vector<report::ProbeMetrics> declared;
  for (const auto& p : data->probes()) declared.emplace_back(p.name, p.metrics);
  for (const auto& spec : o.margins) {
    const auto margin = parse_margin(spec);
    // A misspelt metric would be ignored and its default margin used without a word.
    report::check_metric_name("--margin", spec, margin.first, declared, o.run_dir, report::AcceptedRoles::quality_only);
    options.margins.insert(margin);
  }
  for (const auto& g : o.gate) {
    report::check_metric_name("--gate", g, g, declared, o.run_dir, report::AcceptedRoles::quality_only);
    options.gate.insert(g);
  }
  const report::Recommendation rec = report::recommend(*data, options);
  if (o.format == "json") {
    std::cout << report::recommend_json(*data, rec).dump(2) << "\n";
  } else {
    std::cout << report::recommend_markdown(*data, rec);
  }
  std::cout.flush();
  // A group whose reference answered nothing has no answer: its verdict says so, and the exit code too.
  bool nothing = false;
  for (const auto& mr : rec.models) {
    if (!mr.nothing_measured) continue;
    std::cerr << "kvsweep: " << mr.model << ": nothing measured: its reference cell "
              << data->cells()[*mr.reference].types() << " has no ok record; nothing is advised\n";
    nothing = true;
  }
  return nothing ? core::exit_code::regression : core::exit_code::ok;
}

}  // namespace

void register_recommend(CLI::App& app, Commands& commands) {
  auto* sub = app.add_subcommand(
      "recommend",
      "Per model: each cell's non-inferiority verdict against the reference on every quality metric, the "
      "frontier of KV bytes per token against quality, the cheapest cell non-inferior everywhere (with its "
      "memory and speed), and whether K or V is the more sensitive");
  auto o = std::make_shared<RecommendOpts>();
  sub->add_option("run_dir", o->run_dir, "Run directory")->required();
  sub->add_option("--margin", o->margins,
                  "METRIC=V or PROBE.METRIC=V: how much worse than the reference a cell may be, in the metric's "
                  "units (defaults: 0.05 for 0/1 rates, 5% of a count's range, 0.02 for continuous metrics)");
  sub->add_option("--gate", o->gate,
                  "METRIC or PROBE.METRIC (repeatable): only these metrics decide the verdicts; the others are shown, "
                  "not gated (default: each probe's config \"gate\", else every quality metric). E.g. --gate "
                  "recall.primary_matched leaves out recall.passed, which is derived from it")
      ->allow_extra_args(false);
  sub->add_option("--context", o->context, "Show KV memory at this many tokens of context (default: the run's -c)")
      ->check(finite_number())->check(CLI::PositiveNumber);
  sub->add_option("--vram", o->vram_gib,
                  "GiB: recommend only a pair whose model + KV (at --context) + compute buffers, as the server "
                  "logged them, fit on every GPU device it used (a run without a GPU: all its buffers together)")
      ->check(finite_number())->check(CLI::PositiveNumber);
  sub->add_option("--max-slowdown", o->max_slowdown,
                  "R in (0, 1]: recommend only a pair whose prompt processing (pp) and generation (tg) speeds are "
                  "each at least R times the reference's, e.g. 0.9 = at most 10% slower (llama-bench's pp/tg at "
                  "every depth when the run has the speed probe, else the server's prefill and decode rates; a "
                  "pair with no speed measured is dropped)")
      ->check(finite_number())->check(CLI::Range(1e-6, 1.0));
  sub->add_option("--alpha", o->alpha, "Each bound is one-sided 1 - alpha")->check(finite_number())->check(CLI::Range(1e-6, 0.5));
  sub->add_option("--format", o->format, "md (default) or json")->check(CLI::IsMember({"md", "json"}));
  sub->callback([&commands, o] { commands.action = [o] { return recommend_command(*o); }; });
}

}  // namespace kvsweep::cli
