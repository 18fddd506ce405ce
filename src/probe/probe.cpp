#include "kvsweep/probe/probe.hpp"

#include "kvsweep/probe/probe_entry.hpp"

namespace kvsweep::probe {

nlohmann::json manifest_entry(const Probe& probe) { return to_json(probe_entry(probe)); }

}  // namespace kvsweep::probe
