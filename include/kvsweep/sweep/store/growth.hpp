#pragma once
/// A run that grows: `kvsweep run CONFIG --resume DIR` with a config that only adds — items, cells,
/// models, variants, probes — keeps every record and runs what is new. These are the config-side rules;
/// the records-side check (every kept record's cell and item, with its spec, is still asked by the new
/// config) is cli/run_checks.
///
/// What counts as growth, comparing the config the run recorded with the one given now (both in the
/// manifest's form, `record_form`), `output_dir` and `sweep` (how cells are scheduled) aside:
/// - models and variants: every earlier one unchanged (by name); new ones added;
/// - grid: k, v and include may gain entries, exclude may lose some; tied, reference, order and seed unchanged;
/// - probes (by name): every earlier one keeps its kind and settings; only its item lists grow —
///   a list (prompts, texts, seeds, lengths, depths) keeps every earlier entry, a count
///   (sample_size) does not fall; its "gate" (which metrics decide verdicts) may change; new probes may be added;
/// - everything else (server, embedder, name) unchanged.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"

namespace kvsweep::sweep {

/// The config as the manifest records it (config::to_json, the values of secret-looking environment
/// names redacted), and as `compare_for_growth` reads it.
nlohmann::json record_form(const config::Config& config);

/// What a config adds to and changes in the one a run recorded: each entry a path and what happened
/// ("probes[complete].prompts: 3 → 5 entries", "server.args: [...] → [...]").
struct Growth {
  std::vector<std::string> added;
  std::vector<std::string> changed;  // not growth: the resume is refused naming these
};

/// `before` and `now` in record_form; keys the rules above do not name must be equal.
Growth compare_for_growth(const nlohmann::json& before, const nlohmann::json& now);

/// The config keys of a probe kind whose values list (or count) its items.
const std::vector<std::string>& item_keys(const std::string& kind);

}  // namespace kvsweep::sweep
