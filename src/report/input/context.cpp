#include "kvsweep/report/input/context.hpp"

#include "kvsweep/core/version.hpp"

namespace kvsweep::report {

namespace {

nlohmann::json pick(const nlohmann::json& from, std::initializer_list<const char*> keys) {
  nlohmann::json out = nlohmann::json::object();
  if (!from.is_object()) return out;
  for (const char* key : keys) {
    if (from.contains(key)) out[key] = from[key];
  }
  return out;
}

/// A document of the manifest, or an empty object when it has none.
nlohmann::json or_object(const nlohmann::json& j) { return j.is_null() ? nlohmann::json::object() : j; }

std::string text(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const auto& v = j[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

Generator this_build() { return {std::string(core::version()), std::string(core::git_sha())}; }

nlohmann::json context_block(const RunData& data, const Generator& generator) {
  const sweep::Manifest& m = data.manifest();
  nlohmann::json context;
  nlohmann::json run = nlohmann::json::object();
  for (const auto& [key, value] : {std::pair{"name", &m.name}, std::pair{"config_hash", &m.config_hash},
                                   std::pair{"status", &m.status}, std::pair{"started_at", &m.started_at},
                                   std::pair{"finished_at", &m.finished_at}})
    if (*value) run[key] = **value;
  context["run"] = std::move(run);
  context["kvsweep"] = or_object(m.kvsweep);
  context["server"] = or_object(m.server);
  nlohmann::json models = nlohmann::json::array();
  if (m.models.is_array()) {
    for (const auto& model : m.models) models.push_back(pick(model, {"name", "path", "size", "sha256"}));
  }
  context["models"] = std::move(models);
  context["host"] = or_object(m.host);
  // What compare explains a change by when a baseline is this summary alone (no manifest beside it).
  if (m.n_ctx) context["n_ctx"] = *m.n_ctx;
  if (m.server_env) context["server_env"] = *m.server_env;
  // What llama.cpp computed on (a run from before it was recorded: read from its cells' logs' facts).
  if (const nlohmann::json compute = m.compute.is_null() ? sweep::host_compute(m.cell_list()) : m.compute;
      !compute.is_null())
    context["compute"] = compute;
  context["report"] = {{"kvsweep", {{"version", generator.version}, {"git_sha", generator.git_sha}}}};
  return context;
}

std::string context_line(const RunData& data) {
  const sweep::Manifest& m = data.manifest();
  std::string line;
  auto add = [&line](const std::string& part) {
    if (part.empty()) return;
    if (!line.empty()) line += " · ";
    line += part;
  };
  const nlohmann::json kv = or_object(m.kvsweep);
  if (!text(kv, "version").empty()) add("kvsweep " + text(kv, "version") + " (" + text(kv, "git_sha") + ")");
  const nlohmann::json server = or_object(m.server);
  if (!text(server, "version").empty()) {
    std::string backend = text(server, "backend");
    add((backend.empty() ? std::string("server") : backend) + " " + text(server, "version"));
  }
  if (m.models.is_array()) {
    for (const auto& model : m.models) {
      std::string sha = text(model, "sha256");
      add(text(model, "name") + (sha.empty() ? "" : " sha256 " + sha.substr(0, 12)));
    }
  }
  const nlohmann::json host = or_object(m.host);
  if (!text(host, "hostname").empty()) {
    std::string cpu = text(host, "cpu");
    add("host " + text(host, "hostname") + (cpu.empty() ? "" : " (" + cpu + ")"));
  }
  if (!m.started_at.value_or("").empty()) add(*m.started_at + " → " + m.finished_at.value_or(""));
  return line;
}

}  // namespace kvsweep::report
