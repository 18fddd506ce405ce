#pragma once
/// Lenient field reads from manifests and records kvsweep wrote itself (summary.json is read, checked,
/// by report::Summary::from_json): a missing or mistyped field reads as empty or NaN, for writers that
/// show "—" rather than fail.

#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace kvsweep::report {

/// j[key] when `j` is an object and the field is a string, else "".
inline std::string string_field(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

/// j[key] when `j` is an object and the field is a number, else NaN.
inline double number_field(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return std::numeric_limits<double>::quiet_NaN();
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace kvsweep::report
