#include "kvsweep/probe/probe_entry.hpp"

#include <algorithm>
#include <limits>

namespace kvsweep::probe {

namespace {

using json = nlohmann::json;

std::string text(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<std::size_t> count(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<long long>() < 0) return std::nullopt;
  return it->get<std::size_t>();
}

double number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

core::Expected<std::optional<ProbeEntry>> ProbeEntry::from_json(const json& j, const std::string& where) {
  if (!j.is_object()) return std::optional<ProbeEntry>{};
  ProbeEntry e;
  e.kind = text(j, "kind");
  e.name = text(j, "name");
  if (e.name.empty()) e.name = e.kind;
  if (e.name.empty()) return std::optional<ProbeEntry>{};
  e.items = count(j, "items");
  e.items_max = count(j, "items_max");
  if (const auto it = j.find("deterministic"); it != j.end() && it->is_boolean()) e.deterministic = it->get<bool>();
  if (const auto it = j.find("metrics"); it != j.end() && it->is_array()) {
    const json& metrics = *it;
    e.declared = !metrics.empty() && std::ranges::all_of(metrics, [](const json& m) { return has_declaration(m); });
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      const json& m = metrics[i];
      if (e.declared) {
        auto spec = metric_spec_from_json(m, where + "." + e.name + ".metrics[" + std::to_string(i) + "]");
        if (!spec) return std::unexpected(spec.error());
        e.metrics.push_back(std::move(*spec));
      } else if (m.is_string()) {
        e.named.emplace_back(m.get<std::string>(), true);
      } else if (m.is_object() && !text(m, "name").empty()) {
        const auto hib = m.find("higher_is_better");
        e.named.emplace_back(text(m, "name"), hib == m.end() || !hib->is_boolean() || hib->get<bool>());
      }
    }
  }
  if (const auto it = j.find("calibration"); it != j.end() && it->is_object())
    e.calibration = Probe::Calibration{text(*it, "metric"), number(*it, "lo"), number(*it, "hi")};
  if (const auto it = j.find("inputs"); it != j.end() && !it->is_null()) e.inputs = *it;
  return std::optional<ProbeEntry>{std::move(e)};
}

ProbeEntry probe_entry(const Probe& probe) {
  ProbeEntry e;
  e.name = probe.name();
  e.kind = probe.kind();
  e.items = probe.items().size();
  e.deterministic = probe.deterministic();
  e.declared = true;
  e.metrics = probe.metrics();
  e.items_max = probe.items_max();
  e.calibration = probe.calibration();
  // Only when it read a file: manifests of probes without one stay as they were.
  for (const auto& file : probe.inputs()) e.inputs.push_back(to_json(file));
  return e;
}

json to_json(const ProbeEntry& e) {
  json metrics = json::array();
  if (e.declared) {
    for (const auto& m : e.metrics) metrics.push_back(to_json(m));
  } else {
    for (const auto& [name, higher] : e.named) metrics.push_back({{"name", name}, {"higher_is_better", higher}});
  }
  json j = {{"name", e.name}, {"kind", e.kind}, {"metrics", std::move(metrics)}};
  if (e.items) j["items"] = *e.items;
  if (e.deterministic) j["deterministic"] = *e.deterministic;
  if (e.items_max) j["items_max"] = *e.items_max;
  if (e.calibration) j["calibration"] = {{"metric", e.calibration->metric}, {"lo", e.calibration->lo}, {"hi", e.calibration->hi}};
  if (!e.inputs.is_null()) j["inputs"] = e.inputs;
  return j;
}

}  // namespace kvsweep::probe
