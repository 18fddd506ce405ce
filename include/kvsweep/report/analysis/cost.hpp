#pragma once
/// What each cell costs, from what the server reported: KV bytes per token for K and V (the measured
/// buffer over the cell's -c), memory at a chosen context, prefill and decode speed token-weighted
/// over the requests large enough to measure one, and llama-bench's pp/tg per depth (the `speed` probe).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/stats/summary.hpp"

namespace kvsweep::report {

/// Requests smaller than this are not a prefill measurement (a short follow-up prompt's rate is mostly
/// its fixed overhead): prompt tokens evaluated per request.
inline constexpr double kMinPrefillTokens = 256;
/// Nor is an answer of fewer tokens than this a decode measurement (one-token requests report ~0 ms).
inline constexpr double kMinDecodeTokens = 8;
/// A bound needs at least this many items (a bootstrap of one or two values says nothing).
inline constexpr std::size_t kMinItemsForBound = 3;
/// A speed ratio from fewer items (of the cell or its reference) carries a caveat.
inline constexpr std::size_t kMinItemsForRatio = 3;

/// Tokens per second over a cell's items as the field measures it: Σ tokens ÷ Σ ms over the items
/// whose requests were large enough (kMinPrefillTokens, kMinDecodeTokens per request), with the
/// context depth they started at. A percentile bootstrap CI over items (of Σ ÷ Σ) from
/// kMinItemsForBound items on; never a bound from fewer, never a sentinel.
struct Rate {
  std::size_t n = 0;     // items counted
  double requests = 0;   // the requests they hold
  double tokens = 0;     // Σ prompt_n (prefill) or Σ predicted_n (decode)
  double ms = 0;
  double tok_s = 0.0;    // tokens ÷ ms × 1000; NaN with n = 0
  std::optional<stats::ConfidenceInterval> ci;  // only with n >= kMinItemsForBound
  /// The token-weighted mean depth (tokens already in the context) a request started at: cache_n for
  /// prefill, cache_n + prompt_n for decode (per request, for items of several). NaN with n = 0.
  double depth = 0.0;
  std::size_t skipped = 0;  // ok items with some tokens that were too small to count
};

/// llama-bench's speeds at one depth, from the `speed` probe's record of the cell.
struct BenchSpeed {
  int depth = 0;
  int pp = 0, tg = 0;                 // the test sizes (-p, -n); 0: not run
  double pp_tok_s = 0.0, pp_sd = 0.0;  // NaN when not run
  double tg_tok_s = 0.0, tg_sd = 0.0;
  double pp_x = 0.0, tg_x = 0.0;      // ÷ the reference cell's at the same depth (NaN without one)
};

struct CellCost {
  std::size_t cell = 0;  // index into RunData::cells()
  int n_ctx = 0;         // the server's -c for the cell (0 when the manifest does not say)
  // Bytes of KV cache per token of context: the allocated buffer (MiB from the server log) ÷ n_ctx.
  double k_bytes_per_token = 0.0;  // NaN when unknown
  double v_bytes_per_token = 0.0;
  double kv_bytes_per_token = 0.0;
  double kv_mib_at_context = 0.0;  // kv_bytes_per_token × context, in MiB
  // Prompt rate counts only the tokens the server evaluated (timings.prompt_n, which llama-server
  // reports after the prefix cache: cached tokens are in cache_n, not in prompt_n).
  Rate prompt;
  Rate decode;  // predicted_n / predicted_ms
  double prompt_x = 0.0;  // tok_s ÷ the reference cell's (NaN without one)
  double decode_x = 0.0;
  std::vector<BenchSpeed> bench;  // by depth; empty without a speed probe
  /// The worst of the cell's pp (tg) ratios to the reference: llama-bench's over its depths when the
  /// run has them, else the prefill (decode) ratio above. NaN when unknown. What --max-slowdown reads.
  double pp_x_worst = 0.0, tg_x_worst = 0.0;
  /// Where pp_x_worst (tg_x_worst) comes from: llama-bench (the speed probe), the server's timings
  /// (prefill_x, decode_x), or nowhere (NaN).
  enum class SpeedSource { none, bench, server };
  SpeedSource pp_source = SpeedSource::none, tg_source = SpeedSource::none;
  /// The run has the speed probe (a ratio from the server's timings then stands in for one it did
  /// not measure, and says so: speed_source_note).
  bool speed_probe = false;
  /// The run has the speed probe, but it has no ok record of this cell or of its reference.
  bool bench_missing = false;
  /// Why the prefill/decode ratios are weak, "" when they are not: a rate of the cell or its reference
  /// from fewer than kMinItemsForRatio items, or measured while the host's load average (the manifest's
  /// per-cell load_avg) was above its cores.
  std::string speed_caveat;
};

/// Where a ratio recommend shows (pp_x_worst, tg_x_worst) came from, when the speed probe could not
/// measure it: "from server timings, the speed probe measured nothing" (no llama-bench record of the
/// cell or its reference), "tg from server timings, the speed probe did not measure it" (one axis);
/// "" when each ratio is llama-bench's, or the run has no speed probe.
std::string speed_source_note(const CellCost& cost);

struct CostTable {
  int context = 0;  // the context memory is shown at
  std::vector<CellCost> cells;  // in RunData::grid_order()
  const CellCost* find(std::size_t cell) const;
};

/// The cost of every cell. `context` defaults to the run's n_ctx (the memory the run itself used).
CostTable cell_costs(const RunData& data, std::optional<int> context = std::nullopt,
                     const SummaryOptions& options = {});

/// Adds the "Cost" section (a heading, a note on the method, one table row per cell, then the attention
/// path and memory per device when the run recorded them).
void cost_section(Document& doc, const RunData& data, const CostTable& costs);
/// The Cost section alone, as Markdown.
std::string cost_markdown(const RunData& data, const CostTable& costs);
/// {"context", "cells": [{"id", "k_bytes_per_token", …, "prompt_tps": {n, tok_s, ci95, depth, …}, …,
/// "bench": [{depth, pp, tg, pp_tok_s, …}]}]}; NaN → null.
nlohmann::ordered_json cost_json(const RunData& data, const CostTable& costs);

}  // namespace kvsweep::report
