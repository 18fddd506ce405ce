#pragma once
/// The input files part of a run's identity (sweep/store/run_identity): the files each probe's config
/// names (prompts, texts, corpus files), as the manifest's `probes[].inputs` records them with their
/// sha256; `check_identity` compares them, and a changed file is a new run, never one more part of the old one.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvsweep::sweep {

/// One input file that differs: read by `probe` under config key `key`, with the sha256 each side
/// recorded ("" where that side did not read it).
struct InputChange {
  std::string probe;
  std::string key;
  std::string path;
  std::string sha256_a;
  std::string sha256_b;
};

/// The input files that differ between the manifest `probes` arrays `a` and `b`, probe by probe (by
/// name), key by key, in the order read (the content decides; the path only names the file). A probe
/// `a` recorded without `inputs` (a run from before they were recorded) or that `b` lacks is not compared.
std::vector<InputChange> changed_inputs(const nlohmann::json& a, const nlohmann::json& b);

/// One line per change: "probe 'complete' prompts_file /x/p.txt: sha256 … <a_side>, … <b_side>".
std::vector<std::string> describe_lines(const std::vector<InputChange>& changes, const std::string& a_side,
                                        const std::string& b_side);

/// "probe 'complete' prompts_file /x/p.txt: sha256 … <a_side>, … <b_side>", one line per change
/// (e.g. a_side "when the run started", b_side "now").
std::string describe_input_changes(const std::vector<InputChange>& changes, const std::string& a_side, const std::string& b_side);

}  // namespace kvsweep::sweep
