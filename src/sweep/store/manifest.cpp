#include "kvsweep/sweep/store/manifest.hpp"

#include <algorithm>
#include <span>

namespace kvsweep::sweep {

namespace {

using json = nlohmann::json;

/// Moves rest[key] into `out` when `accept` says it has the field's type; otherwise leaves it in `rest`.
template <class T, class Accept>
void take(json& rest, const char* key, std::optional<T>& out, Accept accept) {
  const auto it = rest.find(key);
  if (it == rest.end() || !accept(*it)) return;
  out = it->template get<T>();
  rest.erase(it);
}

void take_text(json& rest, const char* key, std::optional<std::string>& out) {
  take(rest, key, out, [](const json& v) { return v.is_string(); });
}

void take_int(json& rest, const char* key, std::optional<int>& out) {
  take(rest, key, out, [](const json& v) { return v.is_number_integer(); });
}

void take_bool(json& rest, const char* key, std::optional<bool>& out) {
  take(rest, key, out, [](const json& v) { return v.is_boolean(); });
}

/// A number written as a double; an integer (a hand-written file) stays in `rest` to be written back
/// as it was, and is read all the same.
void take_number(json& rest, const char* key, std::optional<double>& out) {
  const auto it = rest.find(key);
  if (it == rest.end() || !it->is_number()) return;
  out = it->get<double>();
  if (it->is_number_float()) rest.erase(it);
}

/// A document: any value but null (a null stays in `rest`, so it is written back as null).
void take_json(json& rest, const char* key, json& out) {
  const auto it = rest.find(key);
  if (it == rest.end() || it->is_null()) return;
  out = std::move(*it);
  rest.erase(it);
}

/// An object of strings, as the runner writes `server_env`.
bool is_string_map(const json& v) {
  return v.is_object() && std::ranges::all_of(v, [](const json& e) { return e.is_string(); });
}

/// {"index": I, "count": N} exactly, as the runner writes it.
bool is_shard(const json& v) {
  return v.is_object() && v.size() == 2 && v.contains("index") && v["index"].is_number_integer() &&
         v.contains("count") && v["count"].is_number_integer();
}

template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

/// A double, unless `j` already holds the key as the integer it was read from.
void put_number(json& j, const char* key, const std::optional<double>& v) {
  if (!v) return;
  if (const auto it = j.find(key); it != j.end() && it->is_number_integer() && it->get<double>() == *v) return;
  j[key] = *v;
}

void put_json(json& j, const char* key, const json& v) {
  if (!v.is_null()) j[key] = v;
}

/// Every element an object: the cells kvsweep writes.
bool is_object_list(const json& v) {
  return v.is_array() && std::ranges::all_of(v, [](const json& e) { return e.is_object(); });
}

}  // namespace

CellEffective CellEffective::from_json(const json& j) {
  CellEffective e;
  json rest = j.is_object() ? j : json::object();
  take_bool(rest, "found", e.found);
  take_bool(rest, "declared", e.declared);
  take_text(rest, "type_k", e.type_k);
  take_text(rest, "type_v", e.type_v);
  take_text(rest, "flash_attn", e.flash_attn);
  take_number(rest, "k_mib", e.k_mib);
  take_number(rest, "v_mib", e.v_mib);
  take_number(rest, "kv_mib", e.kv_mib);
  take_int(rest, "attn_rot_k", e.attn_rot_k);
  take_int(rest, "attn_rot_v", e.attn_rot_v);
  take_int(rest, "n_ctx", e.n_ctx);
  take_text(rest, "path", e.path);
  take_text(rest, "path_reason", e.path_reason);
  take_json(rest, "attention", e.attention);
  take_json(rest, "memory", e.memory);
  e.extra = std::move(rest);
  return e;
}

namespace {

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

constexpr ReportedSetting kReportedSettings[] = {
    {"type_k", [](const CellEffective& e) { return or_null(e.type_k); }},
    {"type_v", [](const CellEffective& e) { return or_null(e.type_v); }},
    {"flash_attn", [](const CellEffective& e) { return or_null(e.flash_attn); }},
    {"attn_rot_k", [](const CellEffective& e) { return or_null(e.attn_rot_k); }},
    {"attn_rot_v", [](const CellEffective& e) { return or_null(e.attn_rot_v); }},
    {"n_ctx", [](const CellEffective& e) { return or_null(e.n_ctx); }},
    {"path", [](const CellEffective& e) { return or_null(e.path); }},
};

}  // namespace

std::span<const ReportedSetting> reported_settings() { return kReportedSettings; }

json to_json(const CellEffective& e) {
  json j = e.extra.is_object() ? e.extra : json::object();
  put(j, "found", e.found);
  put(j, "declared", e.declared);
  put(j, "type_k", e.type_k);
  put(j, "type_v", e.type_v);
  put(j, "flash_attn", e.flash_attn);
  put_number(j, "k_mib", e.k_mib);
  put_number(j, "v_mib", e.v_mib);
  put_number(j, "kv_mib", e.kv_mib);
  put(j, "attn_rot_k", e.attn_rot_k);
  put(j, "attn_rot_v", e.attn_rot_v);
  put(j, "n_ctx", e.n_ctx);
  put(j, "path", e.path);
  put(j, "path_reason", e.path_reason);
  put_json(j, "attention", e.attention);
  put_json(j, "memory", e.memory);
  return j;
}

std::optional<ManifestCell> ManifestCell::from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  ManifestCell c;
  json rest = j;
  // The key's fields as core::CellKey reads them; a field of another type stays in `rest`.
  c.set_key(core::CellKey::from_json(j));
  for (const char* key : {"model", "variant", "type_k", "type_v"})
    if (const auto it = rest.find(key); it != rest.end() && it->is_string()) rest.erase(it);
  take_text(rest, "id", c.id);
  take_bool(rest, "is_reference", c.is_reference);
  take_bool(rest, "support", c.support);
  take_text(rest, "outcome", c.outcome);
  take_text(rest, "message", c.message);
  take_int(rest, "items_ok", c.items_ok);
  take_int(rest, "items_failed", c.items_failed);
  take_int(rest, "items_skipped", c.items_skipped);
  take_int(rest, "items_settled", c.items_settled);
  take_int(rest, "restarts", c.restarts);
  take_int(rest, "slot", c.slot);
  take_number(rest, "ready_s", c.ready_s);
  take_number(rest, "wall_s", c.wall_s);
  take_number(rest, "stop_s", c.stop_s);
  take_number(rest, "items_wall_s", c.items_wall_s);
  take_number(rest, "server_ms", c.server_ms);
  take_number(rest, "load_avg", c.load_avg);
  take_text(rest, "started_at", c.started_at);
  take_text(rest, "finished_at", c.finished_at);
  if (const auto it = rest.find("effective"); it != rest.end() && it->is_object()) {
    c.effective = CellEffective::from_json(*it);
    rest.erase(it);
  }
  take_json(rest, "lifecycle", c.lifecycle);
  take_json(rest, "slot_env", c.slot_env);
  c.extra = std::move(rest);
  return c;
}

namespace {

/// The type a known field must have, as a message says it, and its check.
struct FieldType {
  const char* name;
  const char* expected;
  bool (json::*is)() const noexcept;
};

constexpr FieldType kCellFields[] = {
    {"model", "a string", &json::is_string},          {"variant", "a string", &json::is_string},
    {"type_k", "a string", &json::is_string},         {"type_v", "a string", &json::is_string},
    {"id", "a string", &json::is_string},             {"is_reference", "a boolean", &json::is_boolean},
    {"support", "a boolean", &json::is_boolean},      {"outcome", "a string", &json::is_string},
    {"message", "a string", &json::is_string},        {"items_ok", "an integer", &json::is_number_integer},
    {"items_failed", "an integer", &json::is_number_integer},
    {"items_skipped", "an integer", &json::is_number_integer},
    {"items_settled", "an integer", &json::is_number_integer},
    {"restarts", "an integer", &json::is_number_integer}, {"slot", "an integer", &json::is_number_integer},
    {"ready_s", "a number", &json::is_number},        {"wall_s", "a number", &json::is_number},
    {"stop_s", "a number", &json::is_number},         {"items_wall_s", "a number", &json::is_number},
    {"server_ms", "a number", &json::is_number},      {"load_avg", "a number", &json::is_number},
    {"started_at", "a string", &json::is_string},     {"finished_at", "a string", &json::is_string},
    {"effective", "an object", &json::is_object},
};

constexpr FieldType kEffectiveFields[] = {
    {"found", "a boolean", &json::is_boolean},      {"declared", "a boolean", &json::is_boolean},
    {"type_k", "a string", &json::is_string},       {"type_v", "a string", &json::is_string},
    {"flash_attn", "a string", &json::is_string},   {"k_mib", "a number", &json::is_number},
    {"v_mib", "a number", &json::is_number},        {"kv_mib", "a number", &json::is_number},
    {"attn_rot_k", "an integer", &json::is_number_integer},
    {"attn_rot_v", "an integer", &json::is_number_integer},
    {"n_ctx", "an integer", &json::is_number_integer}, {"path", "a string", &json::is_string},
    {"path_reason", "a string", &json::is_string},
};

/// The first field of `fields` in `j` of another type; null reads as absent (a NaN is written as null).
std::string first_wrong(const json& j, std::span<const FieldType> fields, const std::string& where) {
  for (const FieldType& f : fields) {
    const auto it = j.find(f.name);
    if (it == j.end() || it->is_null() || ((*it).*f.is)()) continue;
    return where + f.name + ": got " + it->type_name() + " " + it->dump().substr(0, 40) + ", expected " + f.expected;
  }
  return "";
}

}  // namespace

std::string ManifestCell::type_error(const json& j) {
  if (!j.is_object()) return std::string("got ") + j.type_name() + ", expected an object";
  if (std::string why = first_wrong(j, kCellFields, ""); !why.empty()) return why;
  if (const auto e = j.find("effective"); e != j.end() && e->is_object())
    return first_wrong(*e, kEffectiveFields, "effective.");
  return "";
}

json to_json(const ManifestCell& c) {
  json j = c.extra.is_object() ? c.extra : json::object();
  // The key as core::CellKey writes it (no empty variant); a key field of another type was kept in `extra`.
  const std::pair<const char*, const std::string*> key_fields[] = {
      {"model", &c.model}, {"variant", &c.variant}, {"type_k", &c.type_k}, {"type_v", &c.type_v}};
  for (const auto& [key, value] : key_fields)
    if (!value->empty() || (!j.contains(key) && std::string_view(key) != "variant")) j[key] = *value;
  put(j, "id", c.id);
  put(j, "is_reference", c.is_reference);
  put(j, "support", c.support);
  put(j, "outcome", c.outcome);
  put(j, "message", c.message);
  put(j, "items_ok", c.items_ok);
  put(j, "items_failed", c.items_failed);
  put(j, "items_skipped", c.items_skipped);
  put(j, "items_settled", c.items_settled);
  put(j, "restarts", c.restarts);
  put(j, "slot", c.slot);
  put_number(j, "ready_s", c.ready_s);
  put_number(j, "wall_s", c.wall_s);
  put_number(j, "stop_s", c.stop_s);
  put_number(j, "items_wall_s", c.items_wall_s);
  put_number(j, "server_ms", c.server_ms);
  put_number(j, "load_avg", c.load_avg);
  put(j, "started_at", c.started_at);
  put(j, "finished_at", c.finished_at);
  if (c.effective) j["effective"] = to_json(*c.effective);
  put_json(j, "lifecycle", c.lifecycle);
  put_json(j, "slot_env", c.slot_env);
  return j;
}

std::optional<Manifest> Manifest::from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  Manifest m;
  json rest = j;
  take_int(rest, "schema_version", m.schema_version);
  take_text(rest, "kind", m.kind);
  take_text(rest, "name", m.name);
  take_json(rest, "config", m.config);
  take_text(rest, "config_file", m.config_file);
  take_text(rest, "config_hash", m.config_hash);
  take_json(rest, "kvsweep", m.kvsweep);
  take_json(rest, "server", m.server);
  take_text(rest, "build_changed_from", m.build_changed_from);
  if (const auto it = rest.find("grown"); it != rest.end() && it->is_array()) {
    m.grown = std::move(*it);
    rest.erase(it);
  }
  take_json(rest, "variant_servers", m.variant_servers);
  take_json(rest, "host", m.host);
  take_json(rest, "compute", m.compute);
  take(rest, "server_env", m.server_env, is_string_map);
  take_text(rest, "started_at", m.started_at);
  take_text(rest, "updated_at", m.updated_at);
  take_text(rest, "finished_at", m.finished_at);
  take_text(rest, "status", m.status);
  take_int(rest, "n_ctx", m.n_ctx);
  if (const auto it = rest.find("shard"); it != rest.end() && is_shard(*it)) {
    m.shard = Shard{(*it)["index"].get<int>(), (*it)["count"].get<int>()};
    rest.erase(it);
  }
  take_json(rest, "models", m.models);
  take_json(rest, "probes", m.probes);
  take_json(rest, "embedder", m.embedder);
  if (const auto it = rest.find("cells"); it != rest.end() && is_object_list(*it)) {
    m.cells.emplace();
    for (const auto& c : *it) m.cells->push_back(*ManifestCell::from_json(c));
    rest.erase(it);
  }
  take_int(rest, "journaled", m.journaled);
  take_json(rest, "merged_from", m.merged_from);
  take(rest, "build_change_allowed", m.build_change_allowed, [](const json& v) { return v.is_boolean(); });
  m.extra = std::move(rest);
  return m;
}

const json* Manifest::mistyped(const char* key) const {
  if (!extra.is_object()) return nullptr;
  const auto it = extra.find(key);
  return it == extra.end() ? nullptr : &*it;
}

json host_compute(const std::vector<ManifestCell>& cells) {
  for (const auto& c : cells) {
    if (!c.effective || !c.effective->attention.is_object()) continue;
    const json& a = c.effective->attention;
    const json backends = a.value("backends", json::array());
    if (!backends.is_array() || backends.empty()) continue;
    return {{"backends", backends},
            {"devices", a.value("devices", json::array())},
            {"cpu_features", a.value("cpu_features", json::array())}};
  }
  return nullptr;
}

std::string describe_compute(const json& compute) {
  if (!compute.is_object()) return "unknown";
  const auto words = [&](const char* key, const char* sep) {
    std::string out;
    const json list = compute.value(key, json::array());
    if (list.is_array())
      for (const auto& w : list)
        if (w.is_string()) out += (out.empty() ? "" : sep) + w.get<std::string>();
    return out;
  };
  const std::string backends = words("backends", "+"), cpu = words("cpu_features", " ");
  // The devices that say more than the backend does (a CPU build's one device is "CPU").
  std::string devices = words("devices", ",");
  if (devices == "CPU") devices.clear();
  std::string out = backends.empty() ? "unknown backend" : backends;
  if (!devices.empty()) out += " on " + devices;
  return out + " (CPU: " + (cpu.empty() ? "no features reported" : cpu) + ")";
}

const std::vector<ManifestCell>& Manifest::cell_list() const {
  static const std::vector<ManifestCell> kNone;
  return cells ? *cells : kNone;
}

json to_json(const Manifest& m) {
  json j = m.extra.is_object() ? m.extra : json::object();
  put(j, "schema_version", m.schema_version);
  put(j, "kind", m.kind);
  put(j, "name", m.name);
  put_json(j, "config", m.config);
  put(j, "config_file", m.config_file);
  put(j, "config_hash", m.config_hash);
  put_json(j, "kvsweep", m.kvsweep);
  put_json(j, "server", m.server);
  put(j, "build_changed_from", m.build_changed_from);
  put_json(j, "grown", m.grown);
  put_json(j, "variant_servers", m.variant_servers);
  put_json(j, "host", m.host);
  put_json(j, "compute", m.compute);
  put(j, "server_env", m.server_env);
  put(j, "started_at", m.started_at);
  put(j, "updated_at", m.updated_at);
  put(j, "finished_at", m.finished_at);
  put(j, "status", m.status);
  put(j, "n_ctx", m.n_ctx);
  if (m.shard) j["shard"] = {{"index", m.shard->index}, {"count", m.shard->count}};
  put_json(j, "models", m.models);
  put_json(j, "probes", m.probes);
  put_json(j, "embedder", m.embedder);
  if (m.cells) {
    json& cells = j["cells"] = json::array();
    for (const auto& c : *m.cells) cells.push_back(to_json(c));
  }
  put(j, "journaled", m.journaled);
  put_json(j, "merged_from", m.merged_from);
  put(j, "build_change_allowed", m.build_change_allowed);
  return j;
}

void to_json(json& j, const Manifest& manifest) { j = to_json(manifest); }

}  // namespace kvsweep::sweep
