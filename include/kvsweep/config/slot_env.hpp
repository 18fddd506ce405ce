#pragma once
/// Slot environment templates: `NAME=TEMPLATE` entries (e.g. `CUDA_VISIBLE_DEVICES={slot}`)
/// that pin each of `--parallel-cells N` servers to its slot 0..N-1; parsing, validation, expansion.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"

namespace kvsweep::config {

/// One environment variable whose value is a template; `{slot}` is the only placeholder.
struct SlotEnv {
  std::string name;
  std::string value_template;
};

/// Checks a variable name ([A-Za-z_][A-Za-z0-9_]*) and a template; the error says what is wrong.
core::Expected<SlotEnv> make_slot_env(std::string name, std::string value_template);
/// Parses `NAME=TEMPLATE` as given on the command line (--slot-env).
core::Expected<SlotEnv> parse_slot_env(std::string_view text);

/// The entries with `{slot}` replaced by `slot`, in order.
std::vector<std::pair<std::string, std::string>> expand_slot_env(const std::vector<SlotEnv>& templates, int slot);

/// Whether a variable's value must be kept out of run files (API keys, tokens, passwords).
bool is_secret_env_name(std::string_view name);
/// {NAME: value} for the manifest, with secret values replaced by "<redacted>".
nlohmann::json env_for_record(const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace kvsweep::config
