#pragma once
/// Probes driven by a list of prompts (complete, divergence): the prompts a config gives inline
/// (`prompts`) and in a file (`prompts_file`), and one item per prompt, keyed p0, p1, … in order.
/// A prompt may carry its expected answer (`expect`, scored by the complete probe as `correct`):
/// inline as {"prompt": "…", "expect": …}, in a `.jsonl` file as that line's "expect".

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/probe/input_file.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/score/answer_key.hpp"

namespace kvsweep::probe {

/// One prompt and, where it has one, its expected answer.
struct Prompt {
  std::string text;
  std::optional<score::Expect> expect;
};

/// {key "p<i>", spec {"prompt": …}} for each prompt, with "expect" only where the prompt has one
/// (so a prompt without stays the item it was); keys are stable resume keys.
std::vector<Item> prompt_items(const std::vector<Prompt>& prompts);

/// The prompts of a prompts file: one per non-empty line, or for a `.jsonl` file each non-empty
/// line's "prompt" string and its optional "expect". Throws core::FatalError at `site` (naming the
/// line) on a bad file, and when the file is no regular file, cannot be read or holds no prompt.
std::vector<Prompt> parse_prompts_file(const InputText& file, const config::Site& site);

/// A probe's prompts: `prompts`, then those of `prompts_file` (with that file's InputFile).
struct Prompts {
  std::vector<Prompt> prompts;
  std::vector<InputFile> inputs;
  bool any_expect() const;
};

/// Reads `prompts` (strings, or {"prompt", "expect"} objects) and `prompts_file` of a probe's config
/// (`site` is the probe's); `fallback` when the config gives neither.
Prompts read_prompts(const nlohmann::json& cfg, const ConfigSource& where, const std::vector<std::string>& fallback);

/// The prompts without their expected answers, for a probe that measures how the next-token
/// distribution moves on a prompt (divergence), not whether its answer is right: an answer key's
/// prompts file serves both, and the items stay those of the prompts alone.
std::vector<Prompt> without_expect(std::vector<Prompt> prompts);

}  // namespace kvsweep::probe
