#include "kvsweep/report/analysis/calibration.hpp"

#include <cmath>

#include "kvsweep/report/analysis/copy_calibration.hpp"
#include "kvsweep/probe/metric_spec.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

/// The kld probe's corpus and noise floor, per model: the perplexity the reference reads the corpus
/// at (above kNearRandomPpl the text is near random for the model: most next tokens are near-ties,
/// and "same top p" measures how ties break), and the reference against itself with another
/// micro-batch beside the distance threshold.
std::vector<std::string> kld_lines(const RunData& data, const RunSummary& summary, const ProbeDef& probe) {
  std::vector<std::string> out;
  for (const auto& model : data.groups()) {
    const auto ref = data.reference(model);
    if (!ref) continue;
    const auto mean = [&](const char* metric) {
      const MetricStats* m = summary.find(*ref, probe.name, metric);
      return m != nullptr && m->summary.n > 0 ? m->summary.mean : std::nan("");
    };
    if (const double ppl = mean("ppl_base"); std::isfinite(ppl)) {
      std::string line = "Corpus (" + model + "): perplexity " + fixed(ppl, 1) + " under the reference cell.";
      if (ppl > kNearRandomPpl)
        line += " Warning: near-random text for this model (perplexity above " + shortest(kNearRandomPpl) +
                "; natural English reads at 10–30): most next tokens are near-ties, so same_top_p mostly "
                "measures how ties break — read mean_kld and kld_p999, or give kld a natural text (\"corpus\": "
                "a file, or leave it out for the built-in English).";
      out.push_back(std::move(line));
    }
    if (const double floor = mean("noise_mean_kld"); std::isfinite(floor)) {
      const double p999 = mean("noise_kld_p999");
      out.push_back("Noise floor (" + model + "): the reference against its own logits with another micro-batch gives "
                    "mean KLD " + fixed(floor, 4) + (std::isfinite(p999) ? ", 99.9 % " + fixed(p999, 3) : std::string()) +
                    " — batch shape alone moves it this much; the gate's thresholds are mean KLD " +
                    shortest(probe::kMeanKlThreshold) + " and 99.9 % " + shortest(probe::kKldP999Threshold) + ".");
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> calibration_lines(const RunData& data, const RunSummary& summary, const ProbeDef& probe) {
  std::vector<std::string> out;
  if (probe.kind == "kld") out = kld_lines(data, summary, probe);
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
