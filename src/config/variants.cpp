#include "kvsweep/config/variants.hpp"

#include <algorithm>

namespace kvsweep::config {

void check_llama_arg_forms(const std::vector<std::string>& args, const Site& site) {
  for (const auto& a : args) {
    // llama-server has no --flag=value form: it exits "error: invalid argument: --api-key=…",
    // echoing the whole argument, a secret included, into the cell's log. The value is not shown.
    if (const auto eq = a.find('='); a.size() > 1 && a[0] == '-' && eq != std::string::npos) {
      const std::string flag = a.substr(0, eq);
      site.fail("'" + flag + "=…': llama.cpp takes no " + flag + "=value form (llama-server exits \"invalid "
                "argument\", echoing it into the log); write the flag and its value as two arguments: \"" + flag +
                "\", \"…\"");
    }
  }
}

void check_server_args(const std::vector<std::string>& args, const Site& site) {
  for (const auto& a : args) {
    for (const char* owned : {"-ctk", "-ctv", "--cache-type-k", "--cache-type-v", "-m", "--model", "--port", "--host",
                              "-np", "--parallel", "-c", "--ctx-size"}) {
      if (a == owned) site.fail("'" + a + "' is set by kvsweep per cell; use grid / ctx instead");
    }
  }
}

void check_ollama_env(const std::vector<std::pair<std::string, std::string>>& env, const Site& site) {
  for (const auto& [key, value] : env) {
    for (const char* owned : {"OLLAMA_HOST", "OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_NUM_PARALLEL",
                              "OLLAMA_CONTEXT_LENGTH"}) {
      if (key == owned) site.child(key).fail("is set by kvsweep per cell; use grid (cache type) / ctx instead");
    }
  }
}

std::vector<std::pair<std::string, std::string>> get_env(const nlohmann::json& obj, const std::string& key,
                                                         const Site& site) {
  std::vector<std::pair<std::string, std::string>> env;
  if (!obj.contains(key)) return env;
  const auto& e = obj[key];
  if (!e.is_object()) site.child(key).fail("expected an object of NAME: value");
  for (auto it = e.begin(); it != e.end(); ++it) {
    if (!it.value().is_string()) site.child(key).child(it.key()).fail("expected a string");
    env.emplace_back(it.key(), it.value().get<std::string>());
  }
  return env;
}

std::vector<VariantConfig> read_variants(const nlohmann::json& doc, const ServerConfig& server,
                                         const std::filesystem::path& base_dir, const Site& site) {
  std::vector<VariantConfig> variants;
  if (!doc.contains("variants")) return variants;
  const auto& vj = doc["variants"];
  if (!vj.is_array() || vj.empty())
    site.fail("expected a non-empty list of {\"name\": …, \"env\"/\"args\"/\"ctx\"/\"binary\": …}");
  if (server.backend == "external")
    site.fail("backend \"external\" attaches to one running server; variants need kvsweep to start the server per cell");
  for (std::size_t i = 0; i < vj.size(); ++i) {
    const Site s = site.index(i);
    const auto& j = vj[i];
    check_keys(j, {"name", "args", "env", "ctx", "binary", "description"}, s);
    VariantConfig v;
    v.name = get_string(j, "name", "", s);
    if (v.name.empty()) s.child("name").fail("missing (a short name, e.g. \"rot-off\")");
    // The name becomes part of file names (logs) and cell labels.
    const bool safe = std::ranges::all_of(v.name, [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
    if (!safe) s.child("name").fail("'" + v.name + "': use letters, digits, '-', '_' and '.' only");
    for (const auto& other : variants)
      if (other.name == v.name) s.child("name").fail("duplicate variant name '" + v.name + "'");
    v.args = get_strings(j, "args", {}, s);
    check_server_args(v.args, s.child("args"));
    if (server.backend == "llama-server") check_llama_arg_forms(v.args, s.child("args"));
    v.env = get_env(j, "env", s);
    v.ctx = static_cast<int>(get_int_in(j, "ctx", 0, 0, (1LL << 31) - 256, s));  // 0: server.ctx
    v.binary = get_string(j, "binary", "", s);
    if (server.backend == "ollama") {
      if (!v.args.empty())
        s.child("args").fail("`ollama serve` takes no arguments: kvsweep sets OLLAMA_* per cell; use env");
      if (!v.binary.empty()) s.child("binary").fail("only for backend \"llama-server\"");
      check_ollama_env(v.env, s.child("env"));
    }
    // A path (it has a '/') resolves against the config's directory; a bare name is looked up
    // like server.binary (KVSWEEP_LLAMA_BIN, then PATH) when the run starts.
    if (v.binary.find('/') != std::string::npos && std::filesystem::path(v.binary).is_relative())
      v.binary = (base_dir / v.binary).lexically_normal().string();
    variants.push_back(std::move(v));
  }
  return variants;
}

nlohmann::json to_json(const VariantConfig& v) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, value] : v.env) env[k] = value;
  return {{"name", v.name}, {"args", v.args}, {"env", env}, {"ctx", v.ctx}, {"binary", v.binary}};
}

const VariantConfig* find_variant(const Config& config, const std::string& name) {
  for (const auto& v : config.variants)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace kvsweep::config
