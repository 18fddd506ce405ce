#pragma once
/// Items for probes driven by a list of prompts: one item per prompt, keyed p0, p1, … in order.

#include <string>
#include <vector>

#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

/// {key "p<i>", spec {"prompt": prompts[i]}} for each prompt; keys are stable resume keys.
std::vector<Item> prompt_items(const std::vector<std::string>& prompts);

}  // namespace kvsweep::probe
