#include "kvsweep/server/capabilities.hpp"

#include <algorithm>
#include <utility>

namespace kvsweep::server {

namespace {

constexpr std::array<std::pair<Capability, std::string_view>, kCapabilityList.size()> kNames = {{
    {Capability::chat, "chat"},
    {Capability::token_prompts, "token_prompts"},
    {Capability::logprobs, "logprobs"},
    {Capability::logprob_ids, "logprob_ids"},
    {Capability::tool_calls, "tool_calls"},
    {Capability::embeddings, "embeddings"},
    {Capability::tokenize, "tokenize"},
    {Capability::llama_cpp_tools, "llama_cpp_tools"},
    {Capability::prompt_logprobs, "prompt_logprobs"},
}};

}  // namespace

std::string_view to_string(Capability capability) {
  for (const auto& [c, name] : kNames)
    if (c == capability) return name;
  return "unknown";
}

std::optional<Capability> parse_capability(std::string_view name) {
  for (const auto& [c, n] : kNames)
    if (n == name) return c;
  return std::nullopt;
}

std::vector<std::string> capability_names() {
  std::vector<std::string> out;
  for (const auto& [c, name] : kNames) out.emplace_back(name);
  return out;
}

Capabilities Capabilities::all() {
  Capabilities c;
  for (Capability x : kAllCapabilities) c.set(x);
  return c;
}

Capabilities ollama_capabilities() {
  // /api/chat takes tools and answers logprobs (tokens as text); no /tokenize, no id prompts. A models[].path
  // that is a GGUF file is one llama.cpp's tools load (from KVSWEEP_LLAMA_BIN); a tag fails per item, as before.
  return Capabilities{}
      .set(Capability::chat)
      .set(Capability::logprobs)
      .set(Capability::tool_calls)
      .set(Capability::embeddings)
      .set(Capability::llama_cpp_tools);
}

std::vector<Need> unmet(const std::vector<Need>& needs, const Capabilities& have) {
  std::vector<Need> out;
  for (const auto& n : needs) {
    if (have.has(n.capability)) continue;
    const bool other_way = !n.instead.empty() && std::ranges::all_of(n.instead, [&](Capability c) { return have.has(c); });
    if (!other_way) out.push_back(n);
  }
  return out;
}

}  // namespace kvsweep::server
