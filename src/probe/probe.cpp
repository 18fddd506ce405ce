#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

nlohmann::json manifest_entry(const Probe& probe) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& m : probe.metrics()) metrics.push_back(to_json(m));
  return {{"name", probe.name()},
          {"kind", probe.kind()},
          {"items", probe.items().size()},
          {"deterministic", probe.deterministic()},
          {"metrics", std::move(metrics)}};
}

}  // namespace kvsweep::probe
