#include "kvsweep/sweep/store/manifest.hpp"

#include <algorithm>

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

void put_json(json& j, const char* key, const json& v) {
  if (!v.is_null()) j[key] = v;
}

}  // namespace

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
  take_json(rest, "cells", m.cells);
  take_json(rest, "merged_from", m.merged_from);
  take(rest, "build_change_allowed", m.build_change_allowed, [](const json& v) { return v.is_boolean(); });
  m.extra = std::move(rest);
  return m;
}

const json& Manifest::cell_list() const {
  static const json kNone = json::array();
  return cells.is_array() ? cells : kNone;
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
  put_json(j, "cells", m.cells);
  put_json(j, "merged_from", m.merged_from);
  put(j, "build_change_allowed", m.build_change_allowed);
  return j;
}

void to_json(json& j, const Manifest& manifest) { j = to_json(manifest); }

}  // namespace kvsweep::sweep
