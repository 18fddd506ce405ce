#include "kvsweep/server/context_override.hpp"

namespace kvsweep::server {

std::string context_length_key(const std::string& architecture) {
  return (architecture.empty() ? std::string("<architecture>") : architecture) + ".context_length";
}

std::string context_override_args(const std::string& architecture, int n_ctx) {
  return "\"--override-kv\", \"" + context_length_key(architecture) + "=int:" + std::to_string(n_ctx) + "\"";
}

}  // namespace kvsweep::server
