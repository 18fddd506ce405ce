#include "kvsweep/probe/record_fields.hpp"

#include <algorithm>

namespace kvsweep::probe {

namespace {

using Value = std::optional<nlohmann::json>;
using json = nlohmann::json;

/// Fields written only on an ok record.
Value if_ok(const Record& r, const json& v) { return r.ok() ? Value(v) : std::nullopt; }

// Lenient reads: a value of another type is the field's empty value.
std::string text(const json& v) { return v.is_string() ? v.get<std::string>() : ""; }
std::optional<std::string> optional_text(const json& v) {
  return v.is_string() ? std::optional(v.get<std::string>()) : std::nullopt;
}
template <class T>
T number(const json& v) { return v.is_number() ? v.get<T>() : T{}; }
json object(const json& v) { return v.is_object() ? v : json::object(); }

constexpr RecordField kFields[] = {
    {"schema_version", "int", [](const Record& r) -> Value { return r.schema_version; },
     [](Record& r, const json& v) { r.schema_version = number<int>(v); }},
    {"cell", "object", [](const Record& r) -> Value { return r.cell.to_json(); },
     [](Record& r, const json& v) { r.cell = core::CellKey::from_json(v); }},
    {"probe", "string", [](const Record& r) -> Value { return r.probe; }, [](Record& r, const json& v) { r.probe = text(v); }},
    {"kind", "string", [](const Record& r) -> Value { return r.kind; }, [](Record& r, const json& v) { r.kind = text(v); }},
    {"item", "string", [](const Record& r) -> Value { return r.item; }, [](Record& r, const json& v) { r.item = text(v); }},
    {"status", "string", [](const Record& r) -> Value { return r.status_text(); },
     [](Record& r, const json& v) { r.set_status(text(v)); }},
    {"spec", "any", [](const Record& r) -> Value { return r.spec; }, [](Record& r, const json& v) { r.spec = v; }},
    {"wall_s", "number", [](const Record& r) -> Value { return r.wall_s; },
     [](Record& r, const json& v) { r.wall_s = number<double>(v); }},
    {"attempt", "int", [](const Record& r) -> Value { return r.attempt; },
     [](Record& r, const json& v) { r.attempt = number<int>(v); }},
    {"time", "string", [](const Record& r) -> Value { return r.time; }, [](Record& r, const json& v) { r.time = text(v); }},
    {"response", "any", [](const Record& r) { return if_ok(r, r.response); },
     [](Record& r, const json& v) { r.response = v; }},
    {"metrics", "object", [](const Record& r) { return if_ok(r, r.metrics); },
     [](Record& r, const json& v) { r.metrics = object(v); }},
    {"timings", "object", [](const Record& r) { return if_ok(r, r.timings); },
     [](Record& r, const json& v) { r.timings = object(v); }},
    {"error", "string", [](const Record& r) -> Value { return r.error ? Value(*r.error) : std::nullopt; },
     [](Record& r, const json& v) { r.error = optional_text(v); }},
    {"http_status", "int", [](const Record& r) -> Value { return r.http_status != 0 ? Value(r.http_status) : std::nullopt; },
     [](Record& r, const json& v) { r.http_status = number<int>(v); }},
    {"log_tail", "string", [](const Record& r) -> Value { return r.log_tail ? Value(*r.log_tail) : std::nullopt; },
     [](Record& r, const json& v) { r.log_tail = optional_text(v); }},
    {"reason", "string", [](const Record& r) -> Value { return r.reason.empty() ? std::nullopt : Value(r.reason); },
     [](Record& r, const json& v) { r.reason = text(v); }},
    {"adaptive", "object", [](const Record& r) -> Value { return r.adaptive.is_null() ? std::nullopt : Value(r.adaptive); },
     [](Record& r, const json& v) { r.adaptive = v; }},
};

}  // namespace

std::span<const RecordField> record_fields() { return kFields; }

const RecordField* record_field(std::string_view name) {
  const auto it = std::find_if(std::begin(kFields), std::end(kFields), [name](const RecordField& f) { return f.name == name; });
  return it == std::end(kFields) ? nullptr : &*it;
}

namespace {

/// Whether `v` has the schema type `type` (ARCHITECTURE.md's words).
bool has_type(const json& v, std::string_view type) {
  if (type == "string") return v.is_string();
  if (type == "int") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "object") return v.is_object();
  return true;  // any
}

std::string got(const std::string& where, const json& v, std::string_view expected) {
  return where + ": got " + v.type_name() + " " + v.dump().substr(0, 40) + ", expected " + std::string(expected);
}

}  // namespace

std::string record_type_error(const nlohmann::json& line) {
  for (const RecordField& field : kFields) {
    const auto it = line.find(field.name);
    if (it == line.end()) continue;
    const std::string name(field.name);
    const bool vowel = field.type == "int" || field.type == "object";
    if (!has_type(*it, field.type)) return got(name, *it, (vowel ? "an " : "a ") + std::string(field.type));
    // The values inside: a metric is a number, a boolean or null, a timing a number, a cell's key parts text.
    for (auto v = it->begin(); it->is_object() && v != it->end(); ++v) {
      // null: a metric the item could not compute (kld's ppl_ratio_se from one chunk), read as absent.
      if (name == "metrics" && !v->is_number() && !v->is_boolean() && !v->is_null())
        return got(name + "." + v.key(), *v, "a number, boolean or null");
      // timings.measured_by ("client": the server reported no timings) is the one text among them.
      if (name == "timings" && v.key() == "measured_by" && !v->is_string())
        return got(name + "." + v.key(), *v, "a string");
      if (name == "timings" && v.key() != "measured_by" && !v->is_number())
        return got(name + "." + v.key(), *v, "a number");
      if (name == "cell" && !v->is_string()) return got(name + "." + v.key(), *v, "a string");
    }
  }
  return "";
}

}  // namespace kvsweep::probe
