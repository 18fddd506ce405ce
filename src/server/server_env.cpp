#include "kvsweep/server/server_env.hpp"

#include <algorithm>
#include <map>

namespace kvsweep::server {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Device selection (and the one ROCm override that changes which kernels run), by runtime: CUDA,
// ROCm/HIP, SYCL/Level Zero, MUSA. GGML_VK_VISIBLE_DEVICES and the other ggml ones start GGML_.
constexpr std::string_view kDeviceNames[] = {
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",      "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",   "HSA_OVERRIDE_GFX_VERSION", "ONEAPI_DEVICE_SELECTOR", "ZE_AFFINITY_MASK",
    "MUSA_VISIBLE_DEVICES",
};

}  // namespace

bool is_server_env_name(std::string_view name) {
  if (starts_with(name, "LLAMA_") || starts_with(name, "GGML_") || starts_with(name, "OLLAMA_")) return true;
  return is_device_env_name(name);
}

bool is_device_env_name(std::string_view name) {
  return std::ranges::find(kDeviceNames, name) != std::end(kDeviceNames);
}

bool ollama_drops_inherited(std::string_view name) {
  return starts_with(name, "OLLAMA_") || starts_with(name, "LLAMA_ARG_");
}

EnvList inherited_server_env(const char* const* envp, std::string_view backend) {
  EnvList out;
  if (envp == nullptr || backend == "external") return out;
  for (const char* const* e = envp; *e; ++e) {
    const std::string_view kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = kv.substr(0, eq);
    if (!is_server_env_name(name) || (backend == "ollama" && ollama_drops_inherited(name))) continue;
    out.emplace_back(name, kv.substr(eq + 1));
  }
  std::ranges::sort(out);
  return out;
}

EnvList launched_server_env(const EnvList& inherited, const EnvList& set) {
  std::map<std::string, std::string> merged(inherited.begin(), inherited.end());
  for (const auto& [name, value] : set) merged[name] = value;
  return {merged.begin(), merged.end()};
}

}  // namespace kvsweep::server
