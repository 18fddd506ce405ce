#pragma once
/// The `kld` probe: runs llama-perplexity on the cell's model and KV types — once with
/// `--kl-divergence-base` on the reference cell to save its logits in the run directory, then
/// `--kl-divergence` against them on every cell — and records the statistics it prints.
///
/// Config: {"kind": "kld", "name": "kld", "corpus": "file.txt" (a user's own text, relative to the
/// config), {"builtin": "english"} (the default: corpus/english.hpp's natural English text) or
/// {"random_bodies": {"functions": N, "value_len": L, "seed": S, …}} (the keys of
/// read_random_bodies, "functions" 20 unless given; generated into the run directory: code, near
/// random for a small model), "ctx": 512, "chunks": 32, "binary": "llama-perplexity" (a path, else
/// $KVSWEEP_LLAMA_BIN/<binary>, else PATH), "args": [extra llama-perplexity args], "timeout_s": 7200,
/// "documents": 1}. One item per cell, key "kld"; with "documents": N ≥ 2 the corpus is cut into N
/// documents at line ends (corpus::split_documents), each an item of its own (d0 … dN-1, its own
/// base file and `chunks`), so a cell's KLD has a spread across items and its verdict can settle —
/// one item never can. Each document needs at least 2 × ctx tokens.
///
/// The noise floor: the reference cell is scored against its own logits a second time with a
/// micro-batch 8× smaller (`-ub ctx/8`), recorded as noise_mean_kld and noise_kld_p999 (null on
/// the other cells). On SmolLM2 (CPU, English, ctx 256) it is mean KLD 0.0035, 99.9 % 0.022 — as
/// large as q8_0/q8_0's 0.0039 and 0.025: the report shows it beside the threshold.
///
/// The base-logits file, RUN_DIR/kld/<model>-base.kld (<model>-<name>-base.kld for a probe not
/// named "kld"), holds about chunks × ctx/2 × n_vocab × 2 bytes (32 × 256 × 152k × 2 ≈ 2.5 GB for
/// a Qwen vocabulary): `chunks` bounds it. llama-perplexity needs at least 2 × ctx corpus tokens.

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/process/tool_runner.hpp"

namespace kvsweep::probe {

/// The statistics of one `llama-perplexity --kl-divergence` run, each with its ± uncertainty.
/// Percentages are kept in percent, as printed. An uncertainty the tool printed as nan is NaN.
struct KldSummary {
  double mean_kld = 0, mean_kld_se = 0;
  double same_top_p = 0, same_top_p_se = 0;  // % of positions with the same argmax
  double ppl_ratio = 0, ppl_ratio_se = 0;    // Mean PPL(Q)/PPL(base)
  double rms_dp = 0, rms_dp_se = 0;          // RMS of the change in the correct token's probability, %
  double ppl_q = 0, ppl_q_se = 0;
  double ppl_base = 0, ppl_base_se = 0;
  /// The distribution llama-perplexity prints under the means (its "99.9%   KLD:", "Median  Δp:" …
  /// lines), by kvsweep's metric name (kld_max, kld_p999, kld_p99, kld_p95, kld_p90, kld_median;
  /// dp_min, dp_p001, dp_p01, dp_p05, dp_median, dp_p95, dp_p99, dp_p999, dp_max, Δp in %).
  /// Empty when the output has no summary block (source "chunk_row"). "PPL hides the tail, KLD 99.9 %
  /// exposes it": the mean of a few bad tokens among thousands is small, their percentile is not.
  std::map<std::string, double> tail;
  /// "summary" (the ====== blocks) or "chunk_row" (the last cumulative chunk row: the tool skips
  /// the summary when fewer than 100 tokens were scored; ppl_base is then PPL(Q)/ratio, its se NaN).
  std::string source;
  std::string text;  // the lines the numbers were read from
};

/// Parses the output of `llama-perplexity --kl-divergence`. A missing statistic is a parse error
/// naming it and quoting the output's last lines; too short a corpus is an invalid-input error.
core::Expected<KldSummary> parse_kld_output(std::string_view output);
/// The metric names KldSummary::tail may hold, in llama-perplexity's order.
const std::vector<std::string>& kld_tail_names();

/// The perplexity a `--kl-divergence-base` run prints ("Final estimate: PPL = X +/- Y").
struct BasePerplexity {
  double ppl = 0;
  double ppl_se = 0;
};
core::Expected<BasePerplexity> parse_base_output(std::string_view output);

/// The KLD probe runs llama-perplexity through process::ToolRunner (the seam unit tests replace).
using process::ToolRun;
using process::ToolRunner;
using process::process_tool_runner;

std::unique_ptr<Probe> make_kld_probe(const nlohmann::json& config, const ConfigSource& site);
/// As make_kld_probe, running the tool through `runner`.
std::unique_ptr<Probe> make_kld_probe_with(const nlohmann::json& config, const ConfigSource& site,
                                           std::shared_ptr<ToolRunner> runner);

}  // namespace kvsweep::probe
