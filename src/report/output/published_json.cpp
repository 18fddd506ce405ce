/// write_published_json: the published comparison for tools (`compare --published --format json`).

#include <cmath>

#include "kvsweep/report/analysis/published.hpp"
#include "kvsweep/report/input/context.hpp"

namespace kvsweep::report {

namespace {

using ojson = nlohmann::ordered_json;

ojson number(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

ojson precision_json(const Precision& p) {
  ojson out = {{"allowed", p.allowed()}};
  if (p.decimals >= 0) out["decimals"] = p.decimals;
  if (p.tolerance >= 0) out["tolerance"] = p.tolerance;
  return out;
}

ojson figure_json(const CellCheck& c) {
  ojson out = {{"type_k", c.type_k}, {"type_v", c.type_v}};
  if (!c.item.empty()) out["item"] = c.item;
  out["published"] = c.published;
  out["run"] = number(c.run_mean);
  out["diff"] = number(c.diff);
  out["n"] = c.n;
  out["ci_lower"] = c.test == ReproTest::interval ? number(c.ci_lower) : ojson(nullptr);
  out["ci_upper"] = c.test == ReproTest::interval ? number(c.ci_upper) : ojson(nullptr);
  out["test"] = std::string(to_string(c.test));
  out["outcome"] = std::string(to_string(c.outcome()));
  return out;
}

}  // namespace

std::string write_published_json(const PublishedComparison& c) {
  ojson setup = ojson::array();
  for (const auto& d : c.setup) {
    const char* kind = d.kind == SetupDifference::Kind::differs     ? "differs"
                       : d.kind == SetupDifference::Kind::unchecked ? "unchecked"
                                                                    : "not_stated";
    setup.push_back({{"field", d.field},
                     {"kind", kind},
                     {"published", d.published.empty() ? ojson(nullptr) : ojson(d.published)},
                     {"run", d.run}});
  }
  ojson grids = ojson::array();
  for (const auto& g : c.grids) {
    ojson figures = ojson::array();
    for (const auto& cell : g.cells) figures.push_back(figure_json(cell));
    grids.push_back({{"id", g.grid_id},
                     {"variant", g.variant},
                     {"model", g.model},
                     {"probe", g.probe},
                     {"metric", g.metric},
                     {"deterministic", g.deterministic},
                     {"precision", precision_json(g.precision)},
                     {"unpaired", g.unpaired.empty() ? ojson(nullptr) : ojson(g.unpaired)},
                     {"figures", std::move(figures)}});
  }
  ojson deltas = ojson::array();
  for (const auto& d : c.deltas) {
    deltas.push_back({{"label", d.published.label},
                      {"model", d.model},
                      {"variant", d.variant},
                      {"published", number(d.published.delta)},
                      {"run", number(d.delta)},
                      {"ci_lower", number(d.delta_lower)},
                      {"ci_upper", number(d.delta_upper)},
                      {"n_pairs", d.n_pairs},
                      {"test", std::string(to_string(d.test))},
                      {"outcome", std::string(to_string(d.outcome))}});
  }
  const ReproCounts n = repro_counts(c);
  ojson doc{{"schema_version", kReportSchemaVersion},
            {"kind", "kvsweep-published-comparison"},
            {"published", c.published.name},
            {"run", c.run_name},
            {"reproduced", n.not_reproduced == 0},
            {"counts", {{"reproduced", n.reproduced}, {"not_reproduced", n.not_reproduced}, {"not_run", n.not_run}}},
            {"not_reproduced", n.failed},
            {"setup", std::move(setup)},
            {"caveats", c.caveats},
            {"warnings", c.warnings},
            {"grids", std::move(grids)},
            {"deltas", std::move(deltas)}};
  return doc.dump(2) + "\n";
}

}  // namespace kvsweep::report
