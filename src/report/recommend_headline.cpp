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

RecommendHeadline recommend_headline(const ModelRecommendation& mr) {
  RecommendHeadline h;
  h.reference = mr.reference;
  if (!mr.reference) return h;
  if (mr.recommended) {
    h.kind = RecommendHeadline::Kind::recommended;
    h.cell = mr.recommended;
    for (const auto& cv : mr.cells)
      if (cv.cell == *mr.recommended) h.gated = cv.metrics.size();
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
    h.others_answered = !mr.cells.empty();
    return h;
  }
  h.kind = RecommendHeadline::Kind::not_proven;
  h.cell = cheapest->cell;
  h.no_difference = no_difference(*cheapest);
  for (const auto& v : cheapest->metrics) {
    h.items = std::max(h.items, v.result.n);
    if (v.result.verdict != stats::Verdict::unknown) continue;
    h.unsettled.push_back({v.probe + "." + v.metric, v.result.items_needed, v.margin.value, settling_margin(v.result)});
  }
  return h;
}

HeadlineWords explain(const RecommendHeadline& h, const RunData& data) {
  if (h.kind == RecommendHeadline::Kind::no_reference || !h.reference) return {"No reference cell", "nothing to compare against."};
  const CellDef& ref = data.cells()[*h.reference];
  switch (h.kind) {
    case RecommendHeadline::Kind::recommended:
      return {"Recommended: " + flag(data.cells()[*h.cell]),
              "non-inferior to " + ref.types() + " on all " + std::to_string(h.gated) + " gated metrics."};
    case RecommendHeadline::Kind::differs:
      return {"Differs from the reference",
              h.others_answered ? "every cell is worse than " + ref.types() +
                                      " on some gated metric or missed a probe: keep the reference " + flag(ref) + "."
                                : "no other cell answered: keep the reference " + flag(ref) + "."};
    case RecommendHeadline::Kind::not_proven:
    case RecommendHeadline::Kind::no_reference: break;
  }
  std::string needs, margins;
  for (const auto& u : h.unsettled) {
    needs += (needs.empty() ? "" : "; ") + u.metric + " " +
             (u.items_needed ? "~" + std::to_string(*u.items_needed) + " items" : std::string("more items")) +
             " at margin " + shortest(u.margin);
    if (u.settling_margin > 0) margins += " --margin " + u.metric + "=" + shortest(u.settling_margin);
  }
  return {h.no_difference ? "No difference seen, not enough items to prove it"
                          : "Nothing worse seen, not enough items to prove it",
          flag(data.cells()[*h.cell]) + " (the cheapest such cell) answered " +
              (h.no_difference ? "like " : "no worse than ") + ref.types() + " on every gated metric over " +
              std::to_string(h.items) + " items, but non-inferiority is not proven: " + needs + ". Run more items" +
              (margins.empty() ? std::string(".") : ", or accept a wider margin now:" + margins + ".") +
              " Until then keep " + flag(ref) + "."};
}

std::vector<std::pair<std::string, RecommendHeadline>> verdicts(const RunData& data) {
  std::vector<std::pair<std::string, RecommendHeadline>> out;
  const Recommendation rec = recommend(data);
  for (const auto& mr : rec.models) out.emplace_back(mr.model, recommend_headline(mr));
  return out;
}

}  // namespace kvsweep::report
