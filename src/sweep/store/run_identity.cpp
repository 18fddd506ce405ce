#include "kvsweep/sweep/store/run_identity.hpp"

#include <set>

#include "kvsweep/config/slot_env.hpp"
#include "kvsweep/server/server_env.hpp"
#include "kvsweep/sweep/store/input_hashes.hpp"
#include "kvsweep/sweep/store/merge.hpp"

namespace kvsweep::sweep {

namespace {

using json = nlohmann::json;

/// A field of the wrong type: "models[0].sha256: got number 3, expected a string".
core::Error wrong_type(const std::string& where, const json& value, const char* expected) {
  return core::Error{core::ErrorKind::invalid, where + ": got " + value.type_name() + " " + value.dump().substr(0, 40) +
                                                   ", expected " + expected};
}

/// Reads a manifest's identity fields, each of the type it must have: a field of another type is an
/// error naming it (a check that silently reads "absent" would switch itself off).
class StrictReader {
 public:
  /// obj[key] as a string; nullopt when absent; an error (kept) when of another type.
  std::optional<std::string> text(const json& obj, const char* key, const std::string& where) {
    const auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    if (!it->is_string()) return fail(wrong_type(where + key, *it, "a string")), std::nullopt;
    return it->get<std::string>();
  }
  /// obj[key] when it is of `type` (checked by `is`), null when absent; an error when of another type.
  const json* part(const json& obj, const char* key, const std::string& where, bool (json::*is)() const noexcept,
                   const char* expected) {
    const auto it = obj.find(key);
    if (it == obj.end()) return nullptr;
    return value(*it, where + key, is, expected);
  }
  /// `v` (the field `where`) when it is of `type`, null when it is null; an error when of another type.
  const json* value(const json& v, const std::string& where, bool (json::*is)() const noexcept, const char* expected) {
    if (v.is_null()) return nullptr;
    if (!(v.*is)()) return fail(wrong_type(where, v, expected)), nullptr;
    return &v;
  }
  void fail(core::Error e) {
    if (!m_error) m_error = std::move(e);
  }
  const std::optional<core::Error>& error() const { return m_error; }

 private:
  std::optional<core::Error> m_error;
};

std::vector<ModelHash> read_models(const Manifest& manifest, StrictReader& in) {
  std::vector<ModelHash> out;
  const json* models = in.value(manifest.models, "models", &json::is_array, "an array");
  if (!models) return out;
  for (std::size_t i = 0; i < models->size(); ++i) {
    const std::string at = "models[" + std::to_string(i) + "].";
    const json& m = (*models)[i];
    if (!m.is_object()) {
      in.fail(wrong_type(at.substr(0, at.size() - 1), m, "an object"));
      continue;
    }
    ModelHash h;
    h.name = in.text(m, "name", at).value_or("");
    h.path = in.text(m, "path", at).value_or("");
    if (auto sha = in.text(m, "sha256", at)) {
      h.is_file = true;
      h.sha256 = *sha;
    }
    if (const json* size = in.part(m, "size", at, &json::is_number_integer, "a size in bytes"))
      h.size = size->get<std::uintmax_t>();
    out.push_back(std::move(h));
  }
  return out;
}

/// The probes' entries as far as the identity reads them: each an object with a string name, its
/// `inputs` an array of objects whose key, path and sha256 are strings.
json read_probes(const Manifest& manifest, StrictReader& in) {
  const json* probes = in.value(manifest.probes, "probes", &json::is_array, "an array");
  if (!probes) return json::array();
  for (std::size_t i = 0; i < probes->size(); ++i) {
    const std::string at = "probes[" + std::to_string(i) + "]";
    const json& p = (*probes)[i];
    if (!p.is_object()) {
      in.fail(wrong_type(at, p, "an object"));
      continue;
    }
    in.text(p, "name", at + ".");
    const json* inputs = in.part(p, "inputs", at + ".", &json::is_array, "an array");
    for (std::size_t k = 0; inputs && k < inputs->size(); ++k) {
      const std::string fat = at + ".inputs[" + std::to_string(k) + "]";
      const json& f = (*inputs)[k];
      if (!f.is_object()) {
        in.fail(wrong_type(fat, f, "an object"));
        continue;
      }
      for (const char* key : {"key", "path", "sha256"}) in.text(f, key, fat + ".");
    }
  }
  return *probes;
}

std::string read_build(const Manifest& manifest, StrictReader& in) {
  const json* server = in.value(manifest.server, "server", &json::is_object, "an object");
  if (!server) return "";
  for (const char* key : {"backend", "version", "built_with"}) in.text(*server, key, "server.");
  return server_build(manifest);
}

/// server_env: from_json reads an object of strings; what it kept aside is named here, down to the variable.
std::optional<std::map<std::string, std::string>> read_env(const Manifest& manifest, StrictReader& in) {
  const json* bad = manifest.mistyped("server_env");
  if (!bad) return manifest.server_env;
  if (const json* env = in.value(*bad, "server_env", &json::is_object, "an object"))
    for (auto it = env->begin(); it != env->end(); ++it) in.text(*env, it.key().c_str(), "server_env.");
  return std::nullopt;
}

void compare_models(const RunIdentity& a, const RunIdentity& b, const std::string& a_side, const std::string& b_side,
                    std::vector<IdentityChange>& out) {
  const auto shown = [](const ModelHash& m) { return m.is_file ? "sha256 " + m.sha256 : std::string("no file (a tag)"); };
  for (const auto& ma : a.models) {
    for (const auto& mb : b.models) {
      if (mb.name != ma.name || (ma.is_file == mb.is_file && ma.sha256 == mb.sha256)) continue;
      out.push_back({IdentityPart::model, "model '" + ma.name + "' (" + (mb.path.empty() ? ma.path : mb.path) +
                                              "): " + shown(ma) + " " + a_side + ", " + shown(mb) + " " + b_side});
    }
  }
}

void compare_env(const RunIdentity& a, const RunIdentity& b, std::vector<IdentityChange>& out) {
  if (!a.server_env || !b.server_env) return;
  std::set<std::string> names;
  for (const auto* side : {&*a.server_env, &*b.server_env})
    for (const auto& [name, value] : *side) names.insert(name);
  const auto shown = [](const std::map<std::string, std::string>& env, const std::string& name) {
    const auto it = env.find(name);
    return it == env.end() ? std::string("unset") : it->second;
  };
  for (const auto& name : names) {
    // Device selection picks the hardware (a resumed shard on another node), not what a cell answers.
    if (server::is_device_env_name(name)) continue;
    const std::string va = shown(*a.server_env, name), vb = shown(*b.server_env, name);
    if (va != vb) out.push_back({IdentityPart::server_env, name + ": " + va + " → " + vb});
  }
}

}  // namespace

core::Expected<RunIdentity> read_identity(const Manifest& manifest) {
  StrictReader in;
  RunIdentity id;
  if (const json* bad = manifest.mistyped("config_hash")) in.fail(wrong_type("config_hash", *bad, "a string"));
  else if (!manifest.config_hash)
    return core::fail(core::ErrorKind::invalid, "config_hash: missing (the run's identity; a manifest without it cannot "
                                                "be resumed or merged)");
  id.config_hash = manifest.config_hash.value_or("");
  id.models = read_models(manifest, in);
  if (const json* e = in.value(manifest.embedder, "embedder", &json::is_object, "an object"))
    id.embedder_sha256 = in.text(*e, "sha256", "embedder.").value_or("");
  id.probes = read_probes(manifest, in);
  id.server_build = read_build(manifest, in);
  id.server_env = read_env(manifest, in);
  if (in.error()) return std::unexpected(*in.error());
  return id;
}

std::optional<std::map<std::string, std::string>> recorded_server_env(const config::Config& config,
                                                                      const char* const* envp) {
  if (config.server.backend == "external") return std::nullopt;
  const auto launched = server::launched_server_env(server::inherited_server_env(envp, config.server.backend),
                                                    config.server.env);
  return config::env_for_record(launched).get<std::map<std::string, std::string>>();
}

core::Expected<RunIdentity> current_identity(const config::Config& config,
                                             const std::vector<std::unique_ptr<probe::Probe>>& probes,
                                             const nlohmann::json& server, const char* const* envp) {
  RunIdentity id;
  id.config_hash = config::config_hash(config);
  auto models = hash_models(config);
  if (!models) return std::unexpected(models.error());
  id.models = std::move(*models);
  auto embedder = hash_embedder(config);
  if (!embedder) return std::unexpected(embedder.error());
  id.embedder_sha256 = *embedder;
  for (const auto& p : probes) id.probes.push_back(probe::manifest_entry(*p));
  Manifest described;
  described.server = server;
  id.server_build = server.is_null() ? "" : server_build(described);
  id.server_env = recorded_server_env(config, envp);
  return id;
}

std::vector<IdentityChange> check_identity(const RunIdentity& a, const RunIdentity& b, const std::string& a_side,
                                           const std::string& b_side) {
  std::vector<IdentityChange> out;
  if (a.config_hash != b.config_hash)
    out.push_back({IdentityPart::config, "config hash " + a.config_hash + " " + a_side + ", " + b.config_hash + " " + b_side});
  compare_models(a, b, a_side, b_side, out);
  if (!a.embedder_sha256.empty() && a.embedder_sha256 != b.embedder_sha256)
    out.push_back({IdentityPart::embedder, "embedder model: sha256 " + a.embedder_sha256 + " " + a_side + ", " +
                                               (b.embedder_sha256.empty() ? std::string("none hashed")
                                                                          : "sha256 " + b.embedder_sha256) +
                                               " " + b_side});
  for (const auto& line : describe_lines(changed_inputs(a.probes, b.probes), a_side, b_side))
    out.push_back({IdentityPart::input, line});
  if (!a.server_build.empty() && !b.server_build.empty() && a.server_build != b.server_build)
    out.push_back({IdentityPart::server_build, a.server_build + " " + a_side + ", " + b.server_build + " " + b_side});
  compare_env(a, b, out);
  return out;
}

std::vector<std::string> lines_of(const std::vector<IdentityChange>& changes, IdentityPart part) {
  std::vector<std::string> out;
  for (const auto& c : changes)
    if (c.part == part) out.push_back(c.line);
  return out;
}

}  // namespace kvsweep::sweep
