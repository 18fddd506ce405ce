#pragma once
/// The `complete` probe: one greedy completion per prompt, compared with the reference cell's
/// completion of the same prompt (match_reference, common_prefix_chars: change metrics, a
/// rewording counts) and, where the prompt carries its expected answer (`expect`), scored against
/// it (correct: quality, gated by default; score/answer_key.hpp).
///
/// Config: {"kind": "complete", "name", "prompts": ["…" or {"prompt": "…", "expect": …}],
/// "prompts_file": "a.txt" or "a.jsonl" ({"prompt", "expect"} a line), "limit": N (the first N
/// prompts), "max_tokens": 32, "mode": "raw" | "chat"}. data/answer-key/answer-key.jsonl is the
/// project's answer key (README "The answer key" says how it was made).

#include <memory>

#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

std::unique_ptr<Probe> make_complete_probe(const nlohmann::json& config, const ConfigSource& site);

/// Length in bytes of the common prefix of two strings.
std::size_t common_prefix(std::string_view a, std::string_view b);

}  // namespace kvsweep::probe
