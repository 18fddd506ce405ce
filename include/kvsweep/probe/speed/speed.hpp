#pragma once
/// The `speed` probe: runs llama-bench from the cell's llama.cpp build with the cell's K/V types and
/// its offload, thread, flash-attention and environment settings, and records prompt processing (pp)
/// and generation (tg) speed at each configured depth — the numbers the field quotes.
///
/// Config: {"kind": "speed", "name": "speed", "depths": [0] (tokens already in the context, llama-bench's
/// -d), "pp": 512 (-p; 0 skips it), "tg": 128 (-n; 0 skips it), "repetitions": 3 (-r), "binary":
/// "llama-bench" (a path, else beside the cell's llama-server, else $KVSWEEP_LLAMA_BIN/<binary>, else
/// PATH), "args": [extra llama-bench args], "timeout_s": 3600}. One item per depth, key "d<depth>".
/// Metrics (role cost: reported and used by `recommend --max-slowdown`, never gated as quality):
/// pp_tok_s, tg_tok_s (llama-bench's avg_ts) and pp_tok_s_sd, tg_tok_s_sd (its stddev_ts); the
/// record keeps llama-bench's JSON objects whole. The cell's server is stopped while it runs.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/process/known_crash.hpp"
#include "kvsweep/process/tool_runner.hpp"

namespace kvsweep::probe {

/// One llama-bench test as its JSON output gives it (`-o jsonl`: one object per line).
struct BenchTest {
  int n_prompt = 0;
  int n_gen = 0;
  int n_depth = 0;
  double avg_ts = 0;     // tokens/s, mean over the repetitions
  double stddev_ts = 0;  // their standard deviation
  std::string type_k, type_v;
  nlohmann::json raw;  // the whole object
};

/// One speed item's spec, as its record keeps it: the depth llama-bench starts at (-d), its prompt and
/// generation sizes (-p, -n) and repetitions (-r). The probe writes it with to_json; the report reads
/// it back with from_json.
struct SpeedSpec {
  int depth = 0;
  int pp = 0;
  int tg = 0;
  int repetitions = 0;

  /// nullopt when `j` is not an object with an integer "depth" (not a speed item's spec); a size
  /// that is missing or not an integer reads as 0.
  static std::optional<SpeedSpec> from_json(const nlohmann::json& j);
};
nlohmann::json to_json(const SpeedSpec& spec);

/// The tests in llama-bench's `-o jsonl` (or `-o json`) output; lines that are not JSON objects (its
/// stderr, which the tool runner interleaves) are skipped. No test at all is a parse error quoting
/// the output's last lines.
core::Expected<std::vector<BenchTest>> parse_bench_output(std::string_view output);

std::unique_ptr<Probe> make_speed_probe(const nlohmann::json& config, const ConfigSource& site);
/// As make_speed_probe, running the tool through `runner`; `host_amx`: whether the host's CPU has AMX
/// (a llama-bench killed by a signal there is named as llama.cpp's AMX crash, process/known_crash).
std::unique_ptr<Probe> make_speed_probe_with(const nlohmann::json& config, const ConfigSource& site,
                                             std::shared_ptr<process::ToolRunner> runner,
                                             bool host_amx = process::host_has_amx());

}  // namespace kvsweep::probe
