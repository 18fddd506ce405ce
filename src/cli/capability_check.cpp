#include "kvsweep/cli/capability_check.hpp"

#include "kvsweep/core/error.hpp"

namespace kvsweep::cli {

namespace {

/// The server as messages name it: "vLLM (preset vllm)", "Ollama", "llama-server".
std::string server_name(const config::ServerConfig& server) {
  if (server.api == "openai")
    return server.command.server + (server.command.preset.empty() ? "" : " (preset " + server.command.preset + ")");
  if (config::uses_ollama(server)) return "Ollama";
  return server.backend == "external" ? "the external server" : "llama-server";
}

/// What a capability is, for a reader who does not know the name.
std::string what(server::Capability c) {
  switch (c) {
    case server::Capability::chat: return "chat completions";
    case server::Capability::token_prompts: return "prompts given as token ids";
    case server::Capability::logprobs: return "per-token log-probabilities";
    case server::Capability::logprob_ids: return "the token ids of the top log-probabilities";
    case server::Capability::tool_calls: return "native tool calls";
    case server::Capability::embeddings: return "embeddings";
    case server::Capability::tokenize: return "a tokenizer endpoint";
    case server::Capability::llama_cpp_tools: return "a GGUF model llama.cpp's own tools load beside llama-server";
    case server::Capability::prompt_logprobs: return "every prompt position's top log-probabilities in one request";
  }
  return "?";
}

}  // namespace

server::Capabilities server_capabilities(const config::ServerConfig& server) {
  if (config::uses_ollama(server)) return server::ollama_capabilities();
  if (server.api != "openai") return server::Capabilities::all();
  server::Capabilities have;
  for (const auto& name : server.command.openai.capabilities)
    if (const auto c = server::parse_capability(name)) have.set(*c);
  return have;
}

std::vector<std::string> check_capabilities(const config::Config& config,
                                            const std::vector<std::unique_ptr<probe::Probe>>& probes) {
  const server::Capabilities have = server_capabilities(config.server);
  const std::string who = server_name(config.server);
  std::string refused;
  std::vector<std::string> notes;
  for (const auto& p : probes) {
    for (const auto& need : server::unmet(p->needs(), have)) {
      const std::string name(server::to_string(need.capability));
      std::string instead;
      for (const auto c : need.instead)
        instead += std::string(instead.empty() ? " or else " : " and ") + std::string(server::to_string(c)) + " (" + what(c) + ")";
      if (need.fallback.empty())
        refused += "\n  probe '" + p->name() + "' (" + p->kind() + ") needs " + name + " (" + what(need.capability) + ")" + instead;
      else
        notes.push_back("probe '" + p->name() + "' runs its text-only form on " + who + ", which lacks " + name + " (" +
                        what(need.capability) + "): " + need.fallback);
    }
  }
  if (!refused.empty()) {
    std::string hint = config.server.api == "openai"
                           ? "remove the probe, or, if the server does offer it, say so in server.openai.capabilities"
                           : "remove the probe or run it on another backend";
    throw core::FatalError(config.file.string() + ": the grid cannot run on " + who + ", before its first cell:" + refused +
                           "\n" + hint);
  }
  return notes;
}

}  // namespace kvsweep::cli
