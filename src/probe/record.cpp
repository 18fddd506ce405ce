#include "kvsweep/probe/record.hpp"

#include "kvsweep/probe/record_fields.hpp"

namespace kvsweep::probe {

std::string Record::status_text() const {
  switch (status) {
    case ItemStatus::ok: return "ok";
    case ItemStatus::skipped: return "skipped";
    case ItemStatus::failed: break;
  }
  return failure;
}

void Record::set_status(std::string_view text) {
  failure.clear();
  if (text == "ok") status = ItemStatus::ok;
  else if (text == "skipped") status = ItemStatus::skipped;
  else {
    status = ItemStatus::failed;
    failure = text;
  }
}

std::optional<Record> Record::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("cell") || !j["cell"].is_object()) return std::nullopt;
  // What a line lacks reads as empty: no schema version, no attempt, no spec or response.
  Record r;
  r.schema_version = 0;
  r.attempt = 0;
  for (const RecordField& field : record_fields())
    if (const auto it = j.find(field.name); it != j.end()) field.read(r, *it);
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
