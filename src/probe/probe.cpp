#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

nlohmann::json manifest_entry(const Probe& probe) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& m : probe.metrics()) metrics.push_back(to_json(m));
  nlohmann::json entry = {{"name", probe.name()},
                          {"kind", probe.kind()},
                          {"items", probe.items().size()},
                          {"deterministic", probe.deterministic()},
                          {"metrics", std::move(metrics)}};
  if (const auto most = probe.items_max()) entry["items_max"] = *most;
  if (const auto c = probe.calibration()) entry["calibration"] = {{"metric", c->metric}, {"lo", c->lo}, {"hi", c->hi}};
  // Only when it read a file: manifests of probes without one stay as they were.
  for (const auto& file : probe.inputs()) entry["inputs"].push_back(to_json(file));
  return entry;
}

}  // namespace kvsweep::probe
