#pragma once
// The message config::from_json throws for a document ("" when it is accepted), for tests of
// config errors.

#include <string>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/core/error.hpp"

namespace kvsweep::testing {

inline std::string config_error(const nlohmann::json& doc, const std::string& file = "sweep.json") {
  try {
    config::from_json(doc, file);
  } catch (const core::FatalError& e) {
    return e.message;
  }
  return "";
}

}  // namespace kvsweep::testing
