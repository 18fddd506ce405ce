#include "kvsweep/sweep/run/adaptive.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "kvsweep/stats/curtailment.hpp"
#include "kvsweep/stats/splitmix64.hpp"

namespace kvsweep::sweep {

namespace {

/// A record's numeric (or boolean) metric, when it has one.
std::optional<double> metric_value(const nlohmann::json& metrics, const std::string& name) {
  if (!metrics.is_object() || !metrics.contains(name)) return std::nullopt;
  const auto& v = metrics[name];
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number() && std::isfinite(v.get<double>())) return v.get<double>();
  return std::nullopt;
}

}  // namespace

std::vector<probe::Item> adaptive_order(std::vector<probe::Item> items, std::uint64_t seed) {
  stats::SplitMix64 rng(seed);
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[rng.below(i)]);
  return items;
}

stats::SequentialSpec sequential_spec(const probe::MetricSpec& metric, double alpha) {
  stats::SequentialSpec spec;
  spec.alpha = alpha;
  spec.bounded = metric.is_binary();
  return spec;
}

AdaptiveRule adaptive_rule(const config::AdaptiveConfig& config) {
  return {config.alpha, static_cast<std::size_t>(config.min_items), config.futility};
}

namespace {

/// The paired table of the first n items (oriented values: ≥ 0.5 is a pass).
stats::PairedTable table_of(std::span<const double> cell, std::span<const double> reference) {
  stats::PairedTable t;
  for (std::size_t i = 0; i < cell.size() && i < reference.size(); ++i) t.add(cell[i] >= 0.5, reference[i] >= 0.5);
  return t;
}

/// The items left after the first n: the rest of the cell's run and the ones it has not answered.
stats::OpenItems open_after(std::size_t n, std::span<const double> reference, std::span<const double> open_reference) {
  stats::OpenItems open;
  const auto count = [&](double r) { ++(r >= 0.5 ? open.reference_passed : open.reference_failed); };
  for (std::size_t i = n; i < reference.size(); ++i) count(reference[i]);
  for (double r : open_reference) count(r);
  return open;
}

}  // namespace

MetricState settle_metric(const probe::MetricSpec& metric, double margin, std::span<const double> cell,
                          std::span<const double> reference, std::span<const double> open_reference,
                          const AdaptiveRule& rule, std::size_t known_open) {
  const std::size_t n = std::min(cell.size(), reference.size());
  std::vector<double> d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = cell[i] - reference[i];
  const stats::SequentialSpec spec = sequential_spec(metric, rule.alpha);
  const std::size_t from = std::max<std::size_t>({rule.min_items, known_open, 1});
  MetricState state;
  // Step 1 at every n (the cheap verdict alone; bounds only where it decides).
  const stats::SequentialDecision sequential = stats::first_decision(d, margin, spec, from);
  const std::size_t sequential_at = sequential.decided_at > 0 ? sequential.decided_at : n + 1;
  const auto outlook_at = [&](std::size_t k) {
    return stats::paired_binary_outlook(table_of(cell.first(k), reference.first(k)),
                                        open_after(k, reference.first(n), open_reference), margin, rule.alpha);
  };
  std::optional<stats::CompletionOutlook> at_n;  // step 2's outlook at the last n, for step 3
  if (metric.is_binary()) {
    // Step 2 before the sequential decision (at the same n the sequential test goes first). A certain
    // "unknown" is not a decision: a later n may still bring one.
    for (std::size_t k = from; k < sequential_at && k <= n; ++k) {
      const stats::CompletionOutlook outlook = outlook_at(k);
      if (k == n) at_n = outlook;
      if (!outlook.certain || outlook.certain->verdict == stats::Decision::unknown) continue;
      state.result = *outlook.certain;
      state.decided_at = k;
      state.by = "curtailment";
      state.p_decided = outlook.p_decided;
      return state;
    }
  }
  if (sequential.decided_at > 0) {
    state.result = sequential.result;
    state.decided_at = sequential.decided_at;
    state.by = spec.bounded ? "betting" : "normal mixture";
    return state;
  }
  state.result = sequential.result;
  // Steps 2 (a certain "unknown") and 3: futility on everything in so far.
  if (metric.is_binary() && n >= std::max<std::size_t>(rule.min_items, 1)) {
    if (!at_n) at_n = outlook_at(n);  // known_open was past n: step 2 did not look
    state.p_decided = at_n->p_decided;
    if (at_n->certain) state.result = *at_n->certain;  // its verdict is unknown: decisions returned above
    if (at_n->certain || at_n->p_decided < rule.futility) state.by = "futility";
  }
  return state;
}

AdaptiveGate::AdaptiveGate(const probe::Probe& probe, const std::vector<probe::Record>& reference_records,
                           std::span<const probe::Item> planned, const config::AdaptiveConfig& config)
    : m_config(config) {
  for (const auto& item : planned) m_planned.push_back(item.key);
  const auto calibration = probe.calibration();
  for (const auto& spec : probe.metrics()) {
    if (!spec.gated_by_default()) continue;  // the verdicts recommend gives by default
    GatedMetric m;
    m.spec = spec;
    std::vector<double> raw;
    for (const auto& rec : reference_records) {
      const auto v = metric_value(rec.metrics, spec.name);
      if (!v) continue;
      raw.push_back(*v);
      m.reference[rec.item] = probe::orient(*v, spec);
    }
    if (raw.empty()) continue;  // nothing to compare with: not gated (recommend skips it too)
    m.margin = probe::default_margin(spec, calibration, raw);
    m_metrics.push_back(std::move(m));
  }
}

void AdaptiveGate::add(const std::string& item, const nlohmann::json& metrics) {
  ++m_items;
  m_answered.insert(item);
  for (auto& m : m_metrics) {
    const auto it = m.reference.find(item);
    const auto v = metric_value(metrics, m.spec.name);
    if (it == m.reference.end() || !v) continue;
    m.cell.push_back(probe::orient(*v, m.spec));
    m.paired_reference.push_back(it->second);
  }
}

bool AdaptiveGate::settled() {
  if (m_metrics.empty() || m_items < static_cast<std::size_t>(m_config.min_items)) return false;
  const AdaptiveRule rule = adaptive_rule(m_config);
  bool all = true;
  for (auto& m : m_metrics) {
    if (m.state.decided_at > 0) continue;  // decisions are final
    std::vector<double> open;
    for (const auto& key : m_planned) {
      const auto it = m.reference.find(key);
      if (it != m.reference.end() && !m_answered.contains(key)) open.push_back(it->second);
    }
    m.state = settle_metric(m.spec, m.margin.value, m.cell, m.paired_reference, open, rule, m.checked + 1);
    m.checked = m.cell.size();
    all = all && m.state.settled();
  }
  return all;
}

nlohmann::json AdaptiveGate::describe() const {
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& m : m_metrics) {
    nlohmann::json j = {{"verdict", std::string(stats::to_string(m.state.result.verdict))},
                        {"margin", m.margin.value},
                        {"by", m.state.by}};
    if (m.state.decided_at > 0) j["decided_at"] = m.state.decided_at;
    if (m.state.p_decided >= 0.0) j["p_decided"] = m.state.p_decided;
    metrics[m.spec.name] = j;
  }
  return {{"items", m_items},   {"min_items", m_config.min_items}, {"alpha", m_config.alpha},
          {"futility", m_config.futility}, {"seed", m_config.seed}, {"metrics", metrics}};
}

}  // namespace kvsweep::sweep
