#pragma once
/// What each cell costs, from what the server reported: KV bytes per token for K and V (the measured
/// buffer over the cell's -c), memory at a chosen context, and prompt and decode speed per item.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/report/run_data.hpp"
#include "kvsweep/report/summary.hpp"
#include "kvsweep/stats/summary.hpp"

namespace kvsweep::report {

/// Tokens per second over a cell's items: the median of the per-item rates and its percentile
/// bootstrap CI (of the median); n counts the items that processed at least one token.
struct Rate {
  std::size_t n = 0;
  double median = 0.0;  // NaN with n = 0
  stats::ConfidenceInterval ci;
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
  double prompt_x = 0.0;  // median ÷ the reference cell's median (NaN without one)
  double decode_x = 0.0;
};

struct CostTable {
  int context = 0;  // the context memory is shown at
  std::vector<CellCost> cells;  // in RunData::grid_order()
  const CellCost* find(std::size_t cell) const;
};

/// The cost of every cell. `context` defaults to the run's n_ctx (the memory the run itself used).
CostTable cell_costs(const RunData& data, std::optional<int> context = std::nullopt,
                     const SummaryOptions& options = {});

/// The "Cost" section of report.md (a heading, a note on the method and one table row per cell).
std::string cost_markdown(const RunData& data, const CostTable& costs);
/// The same as an HTML section.
std::string cost_html(const RunData& data, const CostTable& costs);
/// {"context", "cells": [{"id", "k_bytes_per_token", …, "prompt_tps": {n, median, ci}, …}]}; NaN → null.
nlohmann::ordered_json cost_json(const RunData& data, const CostTable& costs);

}  // namespace kvsweep::report
