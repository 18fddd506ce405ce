/// What a published comparison came to: each figure reproduced or not, the counts and the exit status.

#include <algorithm>
#include <cmath>

#include "kvsweep/report/analysis/published.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

void decide_figure(CellCheck& c, const Precision& precision) {
  // The tolerance is the figure's rounding: a run value that rounds to it sits within half a unit,
  // up to the binary representation of both.
  const double tol = precision.allowed() * (1 + 1e-9) + 1e-15;
  const bool no_interval = std::isnan(c.ci_lower) || std::isnan(c.ci_upper) || c.ci_lower == c.ci_upper;
  c.test = !c.item.empty() ? ReproTest::item : c.n <= 1 ? ReproTest::one_item : no_interval ? ReproTest::no_spread
                                                                                          : ReproTest::interval;
  c.inside = c.test == ReproTest::interval ? inside_interval(c.published, c.ci_lower, c.ci_upper, tol)
                                           : std::fabs(c.diff) <= tol;
}

void decide_delta(ModelDeltaCheck& c, const Precision& precision) {
  if (std::isnan(c.published.delta) || std::isnan(c.delta)) return;
  const double tol = precision.allowed() * (1 + 1e-9) + 1e-15;
  const bool no_interval = std::isnan(c.delta_lower) || c.delta_lower == c.delta_upper;
  c.test = c.n_pairs <= 1 ? ReproTest::one_item : no_interval ? ReproTest::no_spread : ReproTest::interval;
  const bool in = c.test == ReproTest::interval ? inside_interval(c.published.delta, c.delta_lower, c.delta_upper, tol)
                                                : std::fabs(c.delta - c.published.delta) <= tol;
  c.outcome = in ? Reproduced::yes : Reproduced::no;
}

bool inside_interval(double value, double lo, double hi, double slack) {
  return !std::isnan(value) && !std::isnan(lo) && !std::isnan(hi) && value >= lo - slack && value <= hi + slack;
}

std::string_view to_string(Reproduced r) {
  switch (r) {
    case Reproduced::yes: return "reproduced";
    case Reproduced::no: return "not reproduced";
    case Reproduced::not_run: return "not run";
  }
  return "not run";
}

std::string_view to_string(ReproTest t) {
  switch (t) {
    case ReproTest::none: return "none";
    case ReproTest::interval: return "interval";
    case ReproTest::one_item: return "one_item";
    case ReproTest::no_spread: return "no_spread";
    case ReproTest::item: return "item";
  }
  return "none";
}

ReproCounts repro_counts(const PublishedComparison& c) {
  ReproCounts out;
  for (const auto& g : c.grids) {
    for (const auto& cell : g.cells) {
      switch (cell.outcome()) {
        case Reproduced::yes: ++out.reproduced; break;
        case Reproduced::not_run: ++out.not_run; break;
        case Reproduced::no:
          ++out.not_reproduced;
          out.failed.push_back("grid " + g.grid_id + (g.variant.empty() ? "" : " (variant " + g.variant + ")") + " " +
                               cell.type_k + "/" + cell.type_v + (cell.item.empty() ? "" : " item " + cell.item) +
                               ": published " + shortest(cell.published) + ", run " +
                               fixed(cell.run_mean, g.precision.shown_decimals() + 2) + " (allowed ±" +
                               g.precision.allowed_text() + ")");
          break;
      }
    }
  }
  for (const auto& d : c.deltas) {
    if (std::isnan(d.published.delta)) continue;
    if (d.outcome == Reproduced::yes) ++out.reproduced;
    else if (d.outcome == Reproduced::not_run) ++out.not_run;
    else {
      ++out.not_reproduced;
      out.failed.push_back("Δ " + d.published.label + " (run model " + d.model + ")");
    }
  }
  return out;
}

int published_exit_status(const PublishedComparison& c) { return repro_counts(c).not_reproduced == 0 ? 0 : 1; }

std::size_t GridCheck::count_inside() const {
  return static_cast<std::size_t>(std::count_if(cells.begin(), cells.end(), [](const CellCheck& c) { return c.run && c.inside; }));
}

std::size_t GridCheck::count_not_run() const {
  return static_cast<std::size_t>(std::count_if(cells.begin(), cells.end(), [](const CellCheck& c) { return !c.run; }));
}

}  // namespace kvsweep::report
