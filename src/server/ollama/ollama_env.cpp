#include "kvsweep/server/ollama/ollama.hpp"

#include <algorithm>

#include "kvsweep/server/server_env.hpp"

extern char** environ;

// The environment of a launched `ollama serve` (see the top of ollama.hpp), its launch spec, and
// how the launch is shown: the variables kvsweep owns with their values, the user's by name only.

namespace kvsweep::server {

namespace {

// The variables kvsweep owns per cell; the config refuses them in server.env.
constexpr const char* kOwnedEnv[] = {"OLLAMA_HOST", "OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_NUM_PARALLEL",
                                     "OLLAMA_CONTEXT_LENGTH"};

std::vector<std::string> environment_names() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    names.emplace_back(kv.substr(0, kv.find('=')));
  }
  return names;
}

}  // namespace

OllamaEnv ollama_launch_env(const CellSpec& spec, int port, const std::vector<std::string>& inherited) {
  OllamaEnv env;
  env.set = {
      {"OLLAMA_HOST", "127.0.0.1:" + std::to_string(port)},
      {"OLLAMA_KV_CACHE_TYPE", spec.type_k},
      {"OLLAMA_FLASH_ATTENTION", "1"},
      {"OLLAMA_NUM_PARALLEL", "1"},
      {"OLLAMA_CONTEXT_LENGTH", std::to_string(spec.n_ctx)},
  };
  auto owned = [](const std::string& name) {
    for (const char* o : kOwnedEnv)
      if (name == o) return true;
    return false;
  };
  for (const auto& [k, v] : spec.env)
    if (!owned(k)) env.set.emplace_back(k, v);
  auto user_set = [&](std::string_view name) {
    return std::any_of(spec.env.begin(), spec.env.end(), [&](const auto& kv) { return kv.first == name; });
  };
  if (!user_set("OLLAMA_NO_CLOUD")) env.set.emplace_back("OLLAMA_NO_CLOUD", "1");
  if (!user_set("OLLAMA_MODELS") && ollama_import_for(spec.model_path))
    env.set.emplace_back("OLLAMA_MODELS", ollama_store_for(spec).string());
  for (const auto& name : inherited) {
    if (!ollama_drops_inherited(name)) continue;
    bool kept = false;
    for (const auto& [k, v] : env.set) kept = kept || k == name;
    if (!kept) env.unset.push_back(name);
  }
  return env;
}

std::string OllamaFlavour::launch_line(const process::LaunchSpec& launch) const {
  // Names only for the user's variables: their values may be secrets.
  std::string line = m_binary + " serve with";
  for (std::size_t i = 0; i < launch.env.size(); ++i)
    line += " " + launch.env[i].first + (i < std::size(kOwnedEnv) ? "=" + launch.env[i].second : std::string{});
  if (!launch.unset_env.empty()) {
    line += "; removed from the environment:";
    for (const auto& u : launch.unset_env) line += " " + u;
  }
  return line;
}

process::LaunchSpec OllamaFlavour::launch_spec(const CellSpec& spec, int port) const {
  OllamaEnv env = ollama_launch_env(spec, port, environment_names());
  process::LaunchSpec launch;
  launch.argv = {m_binary, "serve"};
  launch.env = env.set;
  launch.unset_env = env.unset;
  return launch;
}

void OllamaFlavour::describe_launch(const process::LaunchSpec& launch, nlohmann::json& info) const {
  info["argv"] = launch.argv;
  nlohmann::json owned = nlohmann::json::object();
  for (std::size_t i = 0; i < std::size(kOwnedEnv) && i < launch.env.size(); ++i)
    owned[launch.env[i].first] = launch.env[i].second;
  info["env"] = owned;
}

}  // namespace kvsweep::server
