#include "kvsweep/probe/record_fields.hpp"

#include <algorithm>

namespace kvsweep::probe {

namespace {

using Value = std::optional<nlohmann::json>;

/// Fields written only on an ok record.
Value if_ok(const Record& r, const nlohmann::json& v) { return r.ok() ? Value(v) : std::nullopt; }

constexpr RecordField kFields[] = {
    {"schema_version", "int", [](const Record& r) -> Value { return r.schema_version; }},
    {"cell", "object", [](const Record& r) -> Value { return r.cell.to_json(); }},
    {"probe", "string", [](const Record& r) -> Value { return r.probe; }},
    {"kind", "string", [](const Record& r) -> Value { return r.kind; }},
    {"item", "string", [](const Record& r) -> Value { return r.item; }},
    {"status", "string", [](const Record& r) -> Value { return r.status; }},
    {"spec", "any", [](const Record& r) -> Value { return r.spec; }},
    {"wall_s", "number", [](const Record& r) -> Value { return r.wall_s; }},
    {"attempt", "int", [](const Record& r) -> Value { return r.attempt; }},
    {"time", "string", [](const Record& r) -> Value { return r.time; }},
    {"response", "any", [](const Record& r) { return if_ok(r, r.response); }},
    {"metrics", "object", [](const Record& r) { return if_ok(r, r.metrics); }},
    {"timings", "object", [](const Record& r) { return if_ok(r, r.timings); }},
    {"error", "string", [](const Record& r) -> Value { return r.error ? Value(*r.error) : std::nullopt; }},
    {"http_status", "int", [](const Record& r) -> Value { return r.http_status != 0 ? Value(r.http_status) : std::nullopt; }},
    {"log_tail", "string", [](const Record& r) -> Value { return r.log_tail ? Value(*r.log_tail) : std::nullopt; }},
    {"reason", "string", [](const Record& r) -> Value { return r.reason.empty() ? std::nullopt : Value(r.reason); }},
    {"adaptive", "object", [](const Record& r) -> Value { return r.adaptive.is_null() ? std::nullopt : Value(r.adaptive); }},
};

}  // namespace

std::span<const RecordField> record_fields() { return kFields; }

const RecordField* record_field(std::string_view name) {
  const auto it = std::find_if(std::begin(kFields), std::end(kFields), [name](const RecordField& f) { return f.name == name; });
  return it == std::end(kFields) ? nullptr : &*it;
}

}  // namespace kvsweep::probe
