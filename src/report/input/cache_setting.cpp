#include "kvsweep/report/input/cache_setting.hpp"

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/report/input/json_fields.hpp"

namespace kvsweep::report {

namespace {

const nlohmann::json& member(const nlohmann::json& j, const char* key) {
  static const nlohmann::json none;
  if (!j.is_object()) return none;
  const auto it = j.find(key);
  return it == j.end() ? none : *it;
}

bool on_ollama(const nlohmann::json& server) {
  config::ServerConfig s;
  s.backend = string_field(server, "backend");
  s.api = string_field(server, "api");
  return config::uses_ollama(s);
}

/// `text` with every {type_k} and {type_v} replaced by the types as the server is given them.
std::string with_types(std::string_view text, const std::string& type_k, const std::string& type_v) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text.substr(i).starts_with("{type_k}")) {
      out += type_k;
      i += 8;
    } else if (text.substr(i).starts_with("{type_v}")) {
      out += type_v;
      i += 8;
    } else {
      out += text[i++];
    }
  }
  return out;
}

bool has_type(std::string_view text) {
  return text.find("{type_k}") != std::string_view::npos || text.find("{type_v}") != std::string_view::npos;
}

/// A launch template's own terms: each argument that carries a type (with the flag before it) and each
/// server.env variable whose value does; nothing when the template names neither.
CacheSetting command_setting(const nlohmann::json& server, const core::CellKey& cell) {
  const nlohmann::json& command = member(server, "command");
  const nlohmann::json& spelling = member(command, "cache_types");
  const auto spell = [&](const std::string& type) {
    const std::string s = string_field(spelling, type.c_str());
    return s.empty() ? type : s;
  };
  const std::string k = spell(cell.type_k), v = spell(cell.type_v);
  std::vector<std::string> parts;
  const nlohmann::json& argv = member(command, "command");
  for (std::size_t i = 0; argv.is_array() && i < argv.size(); ++i) {
    if (!argv[i].is_string() || !has_type(argv[i].get<std::string>())) continue;
    const std::string before = i > 0 && argv[i - 1].is_string() ? argv[i - 1].get<std::string>() : "";
    parts.push_back((before.starts_with("-") ? before + " " : std::string()) + with_types(argv[i].get<std::string>(), k, v));
  }
  const nlohmann::json& env = member(server, "env");
  if (env.is_object())
    for (const auto& [name, value] : env.items())
      if (value.is_string() && has_type(value.get<std::string>()))
        parts.push_back(name + "=" + with_types(value.get<std::string>(), k, v));
  CacheSetting out;
  for (const auto& p : parts) out.text += (out.text.empty() ? "" : " ") + p;
  if (out.text.empty()) return out;
  // Spelled otherwise than the grid names them (ggml's type numbers): the names beside.
  if (k != cell.type_k || v != cell.type_v) out.text += " (" + cell.types() + ")";
  if (member(command, "kv_tied") == true) {
    const std::string name = string_field(command, "name");
    out.note = (name.empty() ? std::string("The server") : name) + " ties K and V: one cache type for both";
  }
  return out;
}

}  // namespace

CacheSetting cache_setting(const sweep::Manifest& manifest, const core::CellKey& cell) {
  const CacheSetting llama_server{"-ctk " + cell.type_k + " -ctv " + cell.type_v, ""};
  const nlohmann::json& config_server = member(manifest.config, "server");
  const nlohmann::json& server = config_server.is_object() ? config_server : manifest.server;
  if (on_ollama(server)) {
    constexpr const char* kTied = "Ollama ties K and V: OLLAMA_KV_CACHE_TYPE is one type for both";
    if (cell.type_k != cell.type_v) return {llama_server.text, std::string(kTied) + ", so this pair cannot be set on it"};
    return {"OLLAMA_KV_CACHE_TYPE=" + cell.type_k, kTied};
  }
  // A launch template's terms, or an attached OpenAI server's (its argv unknown: the types named).
  if (string_field(server, "backend") != "command" && string_field(server, "api") != "openai") return llama_server;
  CacheSetting c = command_setting(server, cell);
  if (c.text.empty()) c.text = "cache types " + cell.types();
  return c;
}

}  // namespace kvsweep::report
