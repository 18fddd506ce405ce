#include "kvsweep/report/analysis/telephone_spread.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kMetric = "final_similarity";

/// Sample variance (n − 1); NaN under 2 values.
double variance(const std::vector<double>& v) {
  if (v.size() < 2) return kNaN;
  double mean = 0.0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0.0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return ss / static_cast<double>(v.size() - 1);
}

}  // namespace

std::string telephone_text_key(const std::string& item) {
  const auto at = item.rfind("-s");
  return at == std::string::npos || at == 0 ? item : item.substr(0, at);
}

std::vector<TelephoneSpread> telephone_spread(const RunData& data, const ProbeDef& probe) {
  std::vector<TelephoneSpread> out;
  for (const auto& group : data.groups()) {
    const auto ref = data.reference(group);
    if (!ref) continue;
    const Values reference = data.values(*ref, probe.name, kMetric);
    if (reference.values.empty()) continue;
    TelephoneSpread s;
    s.model = group;
    s.metric = kMetric;
    s.greedy = probe.deterministic;
    s.reference = *ref;
    s.chains = reference.values.size();
    std::map<std::string, std::vector<double>> by_text;
    for (std::size_t i = 0; i < reference.values.size(); ++i)
      by_text[telephone_text_key(reference.items[i])].push_back(reference.values[i]);
    s.texts = by_text.size();
    // Pooled within-text variance: Σ (n_t − 1) var_t ÷ Σ (n_t − 1), over texts with two or more seeds.
    double pooled = 0.0, dof = 0.0;
    for (const auto& [text, values] : by_text) {
      if (values.size() < 2) continue;
      ++s.seeded_texts;
      pooled += static_cast<double>(values.size() - 1) * variance(values);
      dof += static_cast<double>(values.size() - 1);
    }
    s.sampling_sd = dof > 0 ? std::sqrt(pooled / dof) : kNaN;
    s.overall_sd = std::sqrt(variance(reference.values));
    for (std::size_t index : data.grid_order()) {
      if (index == *ref || data.cells()[index].group() != group) continue;
      std::vector<double> x, y;
      pair_up(data.values(index, probe.name, kMetric), reference, x, y);
      if (x.empty()) continue;
      double sum = 0.0;
      for (std::size_t i = 0; i < x.size(); ++i) sum += x[i] - y[i];
      s.cells.push_back({index, sum / static_cast<double>(x.size()), x.size()});
    }
    out.push_back(std::move(s));
  }
  return out;
}

void telephone_spread_section(Document& doc, const RunData& data, const ProbeDef& probe) {
  for (const auto& s : telephone_spread(data, probe)) {
    const std::string ref = data.cells()[s.reference].types();
    std::string against;
    for (const auto& c : s.cells)
      against += std::string(against.empty() ? "" : ", ") + data.cells()[c.cell].types() + " " + signed_fixed(c.delta, 3) +
                 " (" + std::to_string(c.pairs) + (c.pairs == 1 ? " pair)" : " pairs)");
    const std::string cells = against.empty() ? std::string() : " The cells' mean differences from it: " + against + ".";
    const std::string head = (data.groups().size() > 1 ? s.model + ": " : std::string());
    std::string text;
    if (s.greedy) {
      text = head + "Sampling: none — greedy chains (temperature 0) repeat on the same build. The spread of " + s.metric +
             " on " + ref + " (sd " + fixed(s.overall_sd, 3) + " across " + std::to_string(s.texts) +
             " texts) is the texts' own, and each cell is compared text by text." + cells;
    } else if (std::isfinite(s.sampling_sd)) {
      const double floor = 2.0 * s.sampling_sd / std::sqrt(static_cast<double>(s.chains));
      text = head + "Sampling: on " + ref + " chains of the same text spread by sd " + fixed(s.sampling_sd, 3) + " in " +
             s.metric + " (" + std::to_string(s.chains) + " chains, " + std::to_string(s.seeded_texts) + " of " +
             std::to_string(s.texts) + (s.texts == 1 ? " text" : " texts") +
             " with several seeds; sd across all chains " + fixed(s.overall_sd, 3) + "): that is sampling alone, so a "
             "mean over " + std::to_string(s.chains) + " chains moves by about ±" + fixed(floor, 3) +
             " (2 sd/√n) from sampling by itself." + cells +
             " A difference inside that band is what sampling gives; greedy chains (temperature 0) over many texts "
             "remove it.";
    } else {
      text = head + "Sampling: every text ran with one seed, so sampling and the texts cannot be told apart in the spread of " +
             s.metric + " on " + ref + " (sd " + fixed(s.overall_sd, 3) + " across " + std::to_string(s.chains) +
             " chains); give a text several seeds to measure it, or use greedy chains (temperature 0)." + cells;
    }
    doc.paragraph(text);
  }
}

}  // namespace kvsweep::report
