#include "kvsweep/report/recommend_headline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

constexpr double kEps = 1e-12;

/// No gated metric worse than the reference, none inferior, every probe answered.
bool nothing_worse_seen(const CellVerdict& cv) {
  if (cv.metrics.empty() || !cv.missing_probes.empty() || cv.inferior > 0) return false;
  for (const auto& v : cv.metrics)
    if (!(v.result.estimate >= -kEps)) return false;
  return true;
}

bool no_difference(const CellVerdict& cv) {
  for (const auto& v : cv.metrics)
    if (std::fabs(v.result.estimate) > kEps) return false;
  return true;
}

/// The margin at which the bound clears now: −lower, rounded up to 2 decimals (a hair above, since
/// non-inferiority needs lower > −margin).
double settling_margin(const stats::NonInferiority& r) {
  if (!std::isfinite(r.lower) || r.lower >= 0) return 0.0;
  return std::ceil(-r.lower * 100.0 + 1e-6) / 100.0;
}

std::string flag(const CellDef& c) { return "-ctk " + c.type_k + " -ctv " + c.type_v; }

}  // namespace

RecommendHeadline recommend_headline(const RunData& data, const ModelRecommendation& mr) {
  RecommendHeadline h;
  if (!mr.reference) {
    h.verdict = "No reference cell";
    h.sentence = "nothing to compare against.";
    return h;
  }
  const CellDef& ref = data.cells()[*mr.reference];
  if (mr.recommended) {
    const CellDef& c = data.cells()[*mr.recommended];
    std::size_t gated = 0;
    for (const auto& cv : mr.cells)
      if (cv.cell == *mr.recommended) gated = cv.metrics.size();
    h.kind = RecommendHeadline::Kind::recommended;
    h.verdict = "Recommended: " + flag(c);
    h.sentence = "non-inferior to " + ref.types() + " on all " + std::to_string(gated) + " gated metrics.";
    return h;
  }
  const CellVerdict* cheapest = nullptr;
  const auto cost = [](const CellVerdict& cv) {
    return std::isfinite(cv.kv_bytes_per_token) ? cv.kv_bytes_per_token : std::numeric_limits<double>::infinity();
  };
  for (const auto& cv : mr.cells) {
    if (!nothing_worse_seen(cv)) continue;
    if (cheapest == nullptr || cost(cv) < cost(*cheapest)) cheapest = &cv;
  }
  if (cheapest == nullptr) {
    h.kind = RecommendHeadline::Kind::differs;
    h.verdict = "Differs from the reference";
    h.sentence = mr.cells.empty() ? "no other cell answered: keep the reference " + flag(ref) + "."
                                  : "every cell is worse than " + ref.types() +
                                        " on some gated metric or missed a probe: keep the reference " + flag(ref) + ".";
    return h;
  }
  const CellDef& c = data.cells()[cheapest->cell];
  std::size_t items = 0;
  std::string needs, margins;
  for (const auto& v : cheapest->metrics) {
    items = std::max(items, v.result.n);
    if (v.result.verdict != stats::Verdict::unknown) continue;
    const std::string name = v.probe + "." + v.metric;
    needs += (needs.empty() ? "" : "; ") + name + " " +
             (v.result.items_needed ? "~" + std::to_string(*v.result.items_needed) + " items" : std::string("more items")) +
             " at margin " + shortest(v.margin.value);
    if (const double m = settling_margin(v.result); m > 0) margins += " --margin " + name + "=" + shortest(m);
  }
  h.kind = RecommendHeadline::Kind::not_proven;
  h.verdict = no_difference(*cheapest) ? "No difference seen, not enough items to prove it"
                                       : "Nothing worse seen, not enough items to prove it";
  h.sentence = flag(c) + " (the cheapest such cell) answered " +
               (no_difference(*cheapest) ? "like " : "no worse than ") + ref.types() + " on every gated metric over " +
               std::to_string(items) + " items, but non-inferiority is not proven: " + needs + ". Run more items" +
               (margins.empty() ? std::string(".") : ", or accept a wider margin now:" + margins + ".") +
               " Until then keep " + flag(ref) + ".";
  return h;
}

std::vector<std::pair<std::string, RecommendHeadline>> verdicts(const RunData& data) {
  std::vector<std::pair<std::string, RecommendHeadline>> out;
  const Recommendation rec = recommend(data);
  for (const auto& mr : rec.models) out.emplace_back(mr.model, recommend_headline(data, mr));
  return out;
}

}  // namespace kvsweep::report
