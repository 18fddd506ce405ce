#pragma once
// Checks a probe's metric declarations against what its items emitted (the union over the items
// given): every emitted metric is declared, every declared metric is emitted, none is declared twice.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe::testing {

inline void expect_declarations_match(const Probe& probe, const std::vector<nlohmann::json>& emitted_by_items) {
  std::set<std::string> declared, emitted;
  for (const auto& m : probe.metrics()) EXPECT_TRUE(declared.insert(m.name).second) << m.name << " is declared twice";
  for (const auto& metrics : emitted_by_items) {
    for (const auto& [name, value] : metrics.items()) emitted.insert(name);
  }
  for (const auto& name : emitted) EXPECT_TRUE(declared.contains(name)) << probe.name() << " emits " << name << " undeclared";
  for (const auto& name : declared) EXPECT_TRUE(emitted.contains(name)) << probe.name() << " declares " << name << " but never emits it";
}

inline void expect_declarations_match(const Probe& probe, const nlohmann::json& emitted_metrics) {
  expect_declarations_match(probe, std::vector<nlohmann::json>{emitted_metrics});
}

}  // namespace kvsweep::probe::testing
