#include "kvsweep/report/analysis/calibration.hpp"

#include <cmath>

#include "kvsweep/report/analysis/copy_calibration.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

std::vector<std::string> calibration_lines(const RunData& data, const RunSummary& summary, const ProbeDef& probe) {
  std::vector<std::string> out;
  if (probe.calibration_metric.empty()) return out;
  const double lo = probe.calibration_lo, hi = probe.calibration_hi;
  const std::string range = shortest(lo) + "–" + shortest(hi);
  for (const auto& model : data.groups()) {
    const auto ref = data.reference(model);
    if (!ref) continue;
    const CellDef& cell = data.cells()[*ref];
    const std::string where = " on the reference cell " + cell.label();
    std::string line = "Calibration (" + model + "): " + probe.calibration_metric;
    const MetricStats* m = summary.find(*ref, probe.name, probe.calibration_metric);
    if (m == nullptr || m->summary.n == 0) {
      out.push_back(line + ": no ok item" + where + ", so nothing says whether " + probe.name +
                    " can show a difference on this model.");
      continue;
    }
    const double mean = m->summary.mean;
    line += " is " + fixed(mean, 2) + " of " + range + where + " (" + std::to_string(m->summary.n) +
            (m->summary.n == 1 ? " item)." : " items).");
    const double edge = 0.02 * std::abs(hi - lo);
    if (std::isfinite(mean) && mean <= lo + edge) {
      line += " Warning: floored — " + probe.name + " is at " + fixed(mean, 2) + "/" + shortest(hi) +
              " on the reference cell: this probe cannot show a difference on this model.";
    } else if (std::isfinite(mean) && mean >= hi - edge) {
      line += " Saturated: the reference is at the ceiling, so a cell can only score lower, never higher.";
    } else if (const std::string copy = copy_model_warning(data, *ref, probe, mean); !copy.empty()) {
      line += " " + copy;
    }
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace kvsweep::report
