#include "kvsweep/server/ollama/ollama.hpp"

#include <cstdio>

// The KV types an Ollama version accepts, and the ones a launched Ollama's log says it used.

namespace kvsweep::server {

bool ollama_before_llama_server(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return false;
  if (major == 0 && minor == 0) return false;  // 0.0.0: a build without its version stamped
  return major == 0 && minor < 30;
}

std::vector<std::string> ollama_accepted_kv_types(const std::string& version) {
  if (ollama_before_llama_server(version)) return {"f16", "q8_0", "q4_0"};
  return {};
}

EffectiveKv ollama_effective_kv(const std::string& log, const CellSpec& spec) {
  EffectiveKv e = parse_effective_kv(log);
  if (e.found) return e;
  // Before 0.30 Ollama fell back to f16 with one of these warnings instead of failing.
  for (const char* fallback : {"unsupported OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION must be enabled",
                               "quantized kv cache requested but flash attention disabled"}) {
    if (log.find(fallback) != std::string::npos) {
      e.found = true;
      e.type_k = e.type_v = "f16";
      return e;
    }
  }
  e.declared = true;
  e.type_k = spec.type_k;
  e.type_v = spec.type_v;
  return e;
}

}  // namespace kvsweep::server
