#include "kvsweep/stats/noninferiority.hpp"

#include <cmath>
#include <functional>
#include <limits>

#include "kvsweep/stats/distributions.hpp"

namespace kvsweep::stats {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kMaxItems = 10'000'000;

/// The x in [0, hi] where the decreasing tail `two_sided_p(x)` equals 2p.
double bisect_upper_quantile(double p, const std::function<double(double)>& two_sided_p) {
  if (!(p > 0.0 && p <= 0.5)) return kNaN;
  double lo = 0.0, hi = 1.0;
  while (two_sided_p(hi) > 2.0 * p && hi < 1e12) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, hi); ++i) {
    const double mid = 0.5 * (lo + hi);
    (two_sided_p(mid) > 2.0 * p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

/// The smallest n' in (n, kMaxItems] for which `cleared(n')` holds, given that it is monotone in n'.
std::optional<std::size_t> smallest_clearing(std::size_t n, const std::function<bool(std::size_t)>& cleared) {
  std::size_t lo = std::max<std::size_t>(n, 1), hi = lo;
  do {
    hi = std::min(kMaxItems, hi * 2);
    if (cleared(hi)) break;
    lo = hi;
  } while (hi < kMaxItems);
  if (!cleared(hi)) return std::nullopt;
  // cleared(hi), !cleared(lo) (or lo = n, already decided unknown).
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (cleared(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

ConfidenceInterval wilson(double x, double n, double z) {
  const double p = x / n;
  const double z2 = z * z;
  const double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z / (1 + z2 / n) * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  return {centre - half, centre + half};
}

std::string_view to_string(Decision verdict) {
  switch (verdict) {
    case Decision::non_inferior: return "non-inferior";
    case Decision::inferior: return "inferior";
    case Decision::unknown: break;
  }
  return "unknown";
}

double student_t_upper_quantile(double p, double df) {
  if (!(df > 0.0)) return kNaN;
  return bisect_upper_quantile(p, [df](double t) { return student_t_two_sided_p(t, df); });
}

double normal_upper_quantile(double p) {
  return bisect_upper_quantile(p, [](double z) { return normal_two_sided_p(z); });
}

NonInferiority noninferiority_mean(std::span<const double> differences, double margin, double alpha) {
  NonInferiority r;
  r.margin = margin;
  r.n = differences.size();
  r.estimate = mean(differences);
  if (r.n < 2) {
    r.lower = r.upper = kNaN;
    return r;
  }
  const Summary s = summarize(differences);
  const auto half_width = [&](std::size_t n) {
    return student_t_upper_quantile(alpha, static_cast<double>(n - 1)) * s.sd / std::sqrt(static_cast<double>(n));
  };
  const double h = half_width(r.n);
  r.lower = r.estimate - h;
  r.upper = r.estimate + h;
  r.verdict = verdict_of(r.lower, r.upper, margin);
  if (r.verdict == Decision::unknown) {
    const double gap = std::abs(r.estimate + margin);
    if (gap > 0.0) r.items_needed = smallest_clearing(r.n, [&](std::size_t n) { return half_width(n) < gap; });
  }
  return r;
}

Decision verdict_of(double lower, double upper, double margin) {
  if (lower > -margin) return Decision::non_inferior;
  if (upper < -margin) return Decision::inferior;
  return Decision::unknown;
}

ConfidenceInterval newcombe_paired_interval(const PairedTable& t, double z) {
  const double n = t.n();
  if (!(n > 0.0)) return {kNaN, kNaN};
  const double ref_pass = t.both + t.only_reference;
  const double cell_pass = t.both + t.only_cell;
  const double p_ref = ref_pass / n;
  const double p_cell = cell_pass / n;
  const ConfidenceInterval w_ref = wilson(ref_pass, n, z);
  const ConfidenceInterval w_cell = wilson(cell_pass, n, z);
  const double margins = (t.both + t.only_reference) * (t.only_cell + t.neither) * (t.both + t.only_cell) *
                         (t.only_reference + t.neither);
  const double phi = margins > 0.0 ? (t.both * t.neither - t.only_reference * t.only_cell) / std::sqrt(margins) : 0.0;
  const double theta = p_cell - p_ref;
  const double dl_cell = p_cell - w_cell.lower, du_cell = w_cell.upper - p_cell;
  const double dl_ref = p_ref - w_ref.lower, du_ref = w_ref.upper - p_ref;
  const double delta = std::sqrt(std::max(0.0, dl_cell * dl_cell - 2 * phi * dl_cell * du_ref + du_ref * du_ref));
  const double epsilon = std::sqrt(std::max(0.0, du_cell * du_cell - 2 * phi * du_cell * dl_ref + dl_ref * dl_ref));
  return {theta - delta, theta + epsilon};
}

NonInferiority noninferiority_paired_binary(const PairedTable& table, double margin, double alpha) {
  NonInferiority r;
  r.margin = margin;
  const double n = table.n();
  r.n = static_cast<std::size_t>(std::llround(n));
  const double z = normal_upper_quantile(alpha);
  const ConfidenceInterval ci = newcombe_paired_interval(table, z);
  r.estimate = n > 0 ? (table.only_cell - table.only_reference) / n : kNaN;
  r.lower = ci.lower;
  r.upper = ci.upper;
  r.verdict = verdict_of(r.lower, r.upper, margin);
  if (r.verdict == Decision::unknown && n > 0 && r.estimate != -margin) {
    const bool towards_non_inferior = r.estimate > -margin;
    r.items_needed = smallest_clearing(r.n, [&](std::size_t m) {
      const double f = static_cast<double>(m) / n;
      const PairedTable scaled{table.both * f, table.only_reference * f, table.only_cell * f, table.neither * f};
      const ConfidenceInterval s = newcombe_paired_interval(scaled, z);
      return towards_non_inferior ? s.lower > -margin : s.upper < -margin;
    });
  }
  return r;
}

}  // namespace kvsweep::stats
