#pragma once
/// The `complete` smoke probe: one greedy completion per prompt, compared with the
/// reference cell's completion of the same prompt.

#include <memory>

#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

std::unique_ptr<Probe> make_complete_probe(const nlohmann::json& config, const ConfigSource& site);

/// Length in bytes of the common prefix of two strings.
std::size_t common_prefix(std::string_view a, std::string_view b);

}  // namespace kvsweep::probe
