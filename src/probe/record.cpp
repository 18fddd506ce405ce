#include "kvsweep/probe/record.hpp"

#include "kvsweep/probe/record_fields.hpp"

namespace kvsweep::probe {

namespace {

std::string text(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<std::string> optional_text(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

template <class T>
T number(const nlohmann::json& j, const char* key, T otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<T>() : otherwise;
}

nlohmann::json field(const nlohmann::json& j, const char* key, nlohmann::json otherwise) {
  const auto it = j.find(key);
  return it != j.end() ? *it : otherwise;
}

}  // namespace

std::optional<Record> Record::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("cell") || !j["cell"].is_object()) return std::nullopt;
  Record r;
  r.schema_version = number(j, "schema_version", 0);
  r.cell = core::CellKey::from_json(j["cell"]);
  r.probe = text(j, "probe");
  r.kind = text(j, "kind");
  r.item = text(j, "item");
  r.status = text(j, "status");
  r.spec = field(j, "spec", nullptr);
  r.wall_s = number(j, "wall_s", 0.0);
  r.attempt = number(j, "attempt", 0);
  r.time = text(j, "time");
  r.response = field(j, "response", nullptr);
  r.metrics = field(j, "metrics", nlohmann::json::object());
  if (!r.metrics.is_object()) r.metrics = nlohmann::json::object();
  r.timings = field(j, "timings", nlohmann::json::object());
  if (!r.timings.is_object()) r.timings = nlohmann::json::object();
  r.error = optional_text(j, "error");
  r.http_status = number(j, "http_status", 0);
  r.log_tail = optional_text(j, "log_tail");
  r.reason = text(j, "reason");
  r.adaptive = field(j, "adaptive", nullptr);
  return r;
}

nlohmann::json to_json(const Record& r) {
  nlohmann::json j = nlohmann::json::object();
  for (const RecordField& field : record_fields())
    if (auto value = field.value(r)) j[std::string(field.name)] = std::move(*value);
  return j;
}

std::vector<Record> records_from_json(const std::vector<nlohmann::json>& lines) {
  std::vector<Record> out;
  out.reserve(lines.size());
  for (const auto& line : lines)
    if (auto r = Record::from_json(line)) out.push_back(std::move(*r));
  return out;
}

}  // namespace kvsweep::probe
