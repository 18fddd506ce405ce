#pragma once
/// llama-server gives each slot at most the model's training context (`<architecture>.context_length`
/// in the GGUF; server-context.cpp caps n_ctx_slot at n_ctx_train). These name the server.args that
/// lift the cap, in one wording for the run's check (check_settings, once the log says it capped) and
/// the dry run (before anything starts).

#include <string>

namespace kvsweep::server {

/// The GGUF key the override sets: "llama.context_length"; "<architecture>.context_length" when the
/// architecture is not known.
std::string context_length_key(const std::string& architecture);

/// The args as a config writes them: `"--override-kv", "llama.context_length=int:131072"`.
std::string context_override_args(const std::string& architecture, int n_ctx);

}  // namespace kvsweep::server
