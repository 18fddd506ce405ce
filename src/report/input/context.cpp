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

std::string text(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const auto& v = j[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

Generator this_build() { return {std::string(core::version()), std::string(core::git_sha())}; }

nlohmann::json context_block(const RunData& data, const Generator& generator) {
  const auto& m = data.manifest();
  nlohmann::json context;
  context["run"] = pick(m, {"name", "config_hash", "status", "started_at", "finished_at"});
  context["kvsweep"] = m.value("kvsweep", nlohmann::json::object());
  context["server"] = m.value("server", nlohmann::json::object());
  nlohmann::json models = nlohmann::json::array();
  if (m.contains("models") && m["models"].is_array()) {
    for (const auto& model : m["models"]) models.push_back(pick(model, {"name", "path", "size", "sha256"}));
  }
  context["models"] = std::move(models);
  context["host"] = m.value("host", nlohmann::json::object());
  context["report"] = {{"kvsweep", {{"version", generator.version}, {"git_sha", generator.git_sha}}}};
  return context;
}

std::string context_line(const RunData& data) {
  const auto& m = data.manifest();
  std::string line;
  auto add = [&line](const std::string& part) {
    if (part.empty()) return;
    if (!line.empty()) line += " · ";
    line += part;
  };
  const nlohmann::json kv = m.value("kvsweep", nlohmann::json::object());
  if (!text(kv, "version").empty()) add("kvsweep " + text(kv, "version") + " (" + text(kv, "git_sha") + ")");
  const nlohmann::json server = m.value("server", nlohmann::json::object());
  if (!text(server, "version").empty()) {
    std::string backend = text(server, "backend");
    add((backend.empty() ? std::string("server") : backend) + " " + text(server, "version"));
  }
  if (m.contains("models") && m["models"].is_array()) {
    for (const auto& model : m["models"]) {
      std::string sha = text(model, "sha256");
      add(text(model, "name") + (sha.empty() ? "" : " sha256 " + sha.substr(0, 12)));
    }
  }
  const nlohmann::json host = m.value("host", nlohmann::json::object());
  if (!text(host, "hostname").empty()) {
    std::string cpu = text(host, "cpu");
    add("host " + text(host, "hostname") + (cpu.empty() ? "" : " (" + cpu + ")"));
  }
  if (!text(m, "started_at").empty()) add(text(m, "started_at") + " → " + text(m, "finished_at"));
  return line;
}

}  // namespace kvsweep::report
