#include "kvsweep/sweep/adaptive.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

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

AdaptiveGate::AdaptiveGate(const probe::Probe& probe, const std::vector<nlohmann::json>& reference_records,
                           const config::AdaptiveConfig& config)
    : m_config(config) {
  const auto calibration = probe.calibration();
  for (const auto& spec : probe.metrics()) {
    if (!spec.is_quality()) continue;
    GatedMetric m;
    m.spec = spec;
    std::vector<double> raw;
    for (const auto& rec : reference_records) {
      const auto v = metric_value(rec.value("metrics", nlohmann::json()), spec.name);
      if (!v) continue;
      raw.push_back(*v);
      m.reference[rec.value("item", "")] = probe::orient(*v, spec);
    }
    if (raw.empty()) continue;  // nothing to compare with: not gated (recommend skips it too)
    m.margin = probe::default_margin(spec, calibration, raw);
    m_metrics.push_back(std::move(m));
  }
}

void AdaptiveGate::add(const std::string& item, const nlohmann::json& metrics) {
  ++m_items;
  for (auto& m : m_metrics) {
    const auto it = m.reference.find(item);
    const auto v = metric_value(metrics, m.spec.name);
    if (it == m.reference.end() || !v) continue;
    m.differences.push_back(probe::orient(*v, m.spec) - it->second);
    if (m.decision.decided_at == 0) {
      m.decision = stats::first_decision(m.differences, m.margin.value, sequential_spec(m.spec, m_config.alpha),
                                         static_cast<std::size_t>(m_config.min_items));
    }
  }
}

bool AdaptiveGate::settled(std::span<const probe::Item> remaining) {
  if (m_metrics.empty() || m_items < static_cast<std::size_t>(m_config.min_items)) return false;
  for (auto& m : m_metrics) {
    if (m.settled()) continue;
    if (!m.spec.is_binary()) return false;
    // Binary: the most the items left can move each wealth, given the reference's own answers
    // (oriented values in [0, 1]: the cell can at best score 1 and at worst 0 on each).
    std::vector<double> best, worst;
    for (const auto& item : remaining) {
      const auto it = m.reference.find(item.key);
      if (it == m.reference.end()) continue;
      best.push_back(1.0 - it->second);
      worst.push_back(0.0 - it->second);
    }
    m.futile = !stats::bounded_can_still_decide(m.differences, best, worst, m.margin.value,
                                                sequential_spec(m.spec, m_config.alpha));
    if (!m.futile) return false;
  }
  return true;
}

nlohmann::json AdaptiveGate::describe() const {
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& m : m_metrics) {
    nlohmann::json j = {{"verdict", std::string(stats::to_string(m.decision.result.verdict))},
                        {"margin", m.margin.value}};
    if (m.decision.decided_at > 0) j["decided_at"] = m.decision.decided_at;
    else j["futile"] = m.futile;
    metrics[m.spec.name] = j;
  }
  return {{"items", m_items}, {"min_items", m_config.min_items}, {"alpha", m_config.alpha}, {"seed", m_config.seed},
          {"metrics", metrics}};
}

}  // namespace kvsweep::sweep
