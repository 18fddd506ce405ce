#pragma once
/// Probes driven by a list of prompts (complete, divergence): the prompts a config gives inline
/// (`prompts`) and in a file (`prompts_file`), and one item per prompt, keyed p0, p1, … in order.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/probe/input_file.hpp"
#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

/// {key "p<i>", spec {"prompt": prompts[i]}} for each prompt; keys are stable resume keys.
std::vector<Item> prompt_items(const std::vector<std::string>& prompts);

/// The prompts of a prompts file: one per non-empty line, or for a `.jsonl` file each non-empty
/// line's "prompt" string. Throws core::FatalError at `site` (naming the line) on a bad file, and
/// when the file is no regular file, cannot be read or holds no prompt.
std::vector<std::string> parse_prompts_file(const InputText& file, const config::Site& site);

/// A probe's prompts: `prompts`, then those of `prompts_file` (with that file's InputFile).
struct Prompts {
  std::vector<std::string> texts;
  std::vector<InputFile> inputs;
};

/// Reads `prompts` and `prompts_file` of a probe's config (`site` is the probe's); `fallback` when
/// the config gives neither.
Prompts read_prompts(const nlohmann::json& cfg, const ConfigSource& where, const std::vector<std::string>& fallback);

}  // namespace kvsweep::probe
