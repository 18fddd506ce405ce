#include "kvsweep/report/analysis/recommend_headline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

/// Missed a probe the reference answered, or has no gated metric to judge.
bool incomplete(const CellVerdict& cv) { return cv.metrics.empty() || !cv.missing_probes.empty(); }

/// Below the reference on some gated metric, no verdict inferior, nothing missing: a difference seen, not proven.
bool below_not_proven(const CellVerdict& cv) { return cv.inferior == 0 && !incomplete(cv) && !nothing_worse_seen(cv); }

/// Non-inferior on every gated metric, no probe missed: what only a limit (--vram, --max-slowdown) keeps
/// from being recommended.
bool proven_everywhere(const CellVerdict& cv) {
  return !incomplete(cv) && std::all_of(cv.metrics.begin(), cv.metrics.end(), [](const MetricVerdict& v) {
    return v.result.verdict == stats::Decision::non_inferior;
  });
}

/// The cell with the fewest KV bytes per token among those `keep` accepts; nullptr when none.
const CellVerdict* cheapest_of(const ModelRecommendation& mr, bool (*keep)(const CellVerdict&)) {
  const auto cost = [](const CellVerdict& cv) {
    return std::isfinite(cv.kv_bytes_per_token) ? cv.kv_bytes_per_token : std::numeric_limits<double>::infinity();
  };
  const CellVerdict* cheapest = nullptr;
  for (const auto& cv : mr.cells)
    if (keep(cv) && (cheapest == nullptr || cost(cv) < cost(*cheapest))) cheapest = &cv;
  return cheapest;
}

void not_proven(const CellVerdict& cv, RecommendHeadline& h) {
  h.kind = RecommendHeadline::Kind::not_proven;
  h.cell = cv.cell;
  h.no_difference = no_difference(cv);
  for (const auto& v : cv.metrics) {
    h.items = std::max(h.items, v.result.n);
    if (v.result.verdict != stats::Decision::unknown) continue;
    h.unsettled.push_back({v.probe + "." + v.metric, v.result.items_needed, v.margin.value, settling_margin(v.result),
                           v.kind, v.items_max});
  }
}

void difference_seen(const CellVerdict& cv, RecommendHeadline& h) {
  h.kind = RecommendHeadline::Kind::difference_seen;
  h.cell = cv.cell;
  for (const auto& v : cv.metrics) {
    const bool unknown = v.result.verdict == stats::Decision::unknown;
    if (v.result.estimate >= -kEps) {
      // Not below, yet unsettled: it too keeps the answer open (the answer key at Δ 0 over 6 items).
      if (unknown)
        h.unsettled.push_back({v.probe + "." + v.metric, v.result.items_needed, v.margin.value,
                               settling_margin(v.result), v.kind, v.items_max});
      continue;  // a NaN estimate (no paired spread) is said as seen below
    }
    const double change = v.higher_is_better ? v.result.estimate : -v.result.estimate;
    h.below.push_back({v.probe + "." + v.metric, change, v.result.n, v.result.verdict, v.margin.value,
                       unknown ? v.result.items_needed : std::nullopt, v.items_max});
  }
}

}  // namespace

namespace {

/// The named cell's evidence; when no cell is named, the cheapest inferior cell's.
void attach_evidence(const ModelRecommendation& mr, RecommendHeadline& h) {
  const auto inferior = [](const CellVerdict& cv) { return cv.inferior > 0; };
  const CellVerdict* from = nullptr;
  if (h.cell) {
    for (const auto& cv : mr.cells)
      if (cv.cell == *h.cell) from = &cv;
  } else if (h.kind == RecommendHeadline::Kind::inferior || h.kind == RecommendHeadline::Kind::incomplete) {
    from = cheapest_of(mr, inferior);
  }
  if (from == nullptr) return;
  h.evidence_cell = from->cell;
  h.evidence = from->evidence;
}

RecommendHeadline decide(const ModelRecommendation& mr);

}  // namespace

RecommendHeadline recommend_headline(const ModelRecommendation& mr) {
  RecommendHeadline h = decide(mr);
  if (h.kind != RecommendHeadline::Kind::nothing_measured && h.kind != RecommendHeadline::Kind::no_reference)
    attach_evidence(mr, h);
  return h;
}

namespace {

RecommendHeadline decide(const ModelRecommendation& mr) {
  RecommendHeadline h;
  h.reference = mr.reference;
  if (!mr.reference) return h;
  if (mr.nothing_measured) {
    h.kind = RecommendHeadline::Kind::nothing_measured;
    return h;
  }
  if (mr.recommended) {
    h.kind = RecommendHeadline::Kind::recommended;
    h.cell = mr.recommended;
    for (const auto& cv : mr.cells) {
      if (cv.cell != *mr.recommended) continue;
      h.gated = cv.metrics.size();
      for (const auto& v : cv.metrics)
        if (v.margin.basis.starts_with("--margin"))
          h.set_margins.push_back({v.probe + "." + v.metric, v.kind, v.margin.value});
    }
    return h;
  }
  // Every cell answered every probe, yet none has a gated metric: the run measured only changes.
  if (!mr.cells.empty() && std::all_of(mr.cells.begin(), mr.cells.end(), [](const CellVerdict& cv) {
        return cv.metrics.empty() && cv.missing_probes.empty();
      })) {
    h.kind = RecommendHeadline::Kind::nothing_gated;
    return h;
  }
  // Proven, but a limit the user set left it out: never "not proven" (nothing is unsettled).
  if (const CellVerdict* cheapest = cheapest_of(mr, proven_everywhere)) {
    h.kind = RecommendHeadline::Kind::over_limits;
    h.cell = cheapest->cell;
    h.gated = cheapest->metrics.size();
    if (!cheapest->too_slow.empty()) h.left_out = "--max-slowdown: " + cheapest->too_slow;
    for (const auto& [cell, need] : mr.over_vram)
      if (cell == cheapest->cell) h.left_out += (h.left_out.empty() ? "" : "; ") + std::string("--vram: needs ") + need;
    return h;
  }
  if (const CellVerdict* cheapest = cheapest_of(mr, nothing_worse_seen)) {
    not_proven(*cheapest, h);
    return h;
  }
  for (const auto& cv : mr.cells) ++(cv.inferior > 0 ? h.cells_inferior : incomplete(cv) ? h.cells_incomplete : h.cells_below);
  if (const CellVerdict* cheapest = cheapest_of(mr, below_not_proven)) {
    difference_seen(*cheapest, h);
    return h;
  }
  h.kind = h.cells_inferior > 0    ? RecommendHeadline::Kind::inferior
           : h.cells_incomplete > 0 ? RecommendHeadline::Kind::incomplete
                                    : RecommendHeadline::Kind::no_other_cell;
  return h;
}

}  // namespace

std::vector<std::pair<std::string, RecommendHeadline>> verdicts(const RunData& data) {
  std::vector<std::pair<std::string, RecommendHeadline>> out;
  const Recommendation rec = recommend(data);
  for (const auto& mr : rec.models) out.emplace_back(mr.model, recommend_headline(mr));
  return out;
}

}  // namespace kvsweep::report
