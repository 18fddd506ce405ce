#pragma once
/// What a variant changes: each cell of a variant against the cell of the same model and K/V in
/// the base variant (the first the config lists), paired over the items both answered — e.g.
/// q4_0 K with the attention rotation off against the same cell with it on.

#include <cstddef>
#include <string>
#include <vector>

#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/analysis/tables.hpp"

namespace kvsweep::report {

struct VariantEffect {
  std::string model;
  std::string base;      // the variant compared with (the first listed)
  std::string variant;
  std::string type_k;
  std::string type_v;
  std::size_t base_cell = 0;  // indices into RunData::cells()
  std::size_t cell = 0;
  std::string probe;
  std::string metric;    // the probe's main metric (its pass metric when it has no other)
  bool higher_is_better = true;
  double base_mean = 0;  // over the paired items
  double variant_mean = 0;
  ReferenceTest test;    // variant − base; p_holm across the K/V cells of one (model, variant, probe, metric)
};

/// Every (model, variant other than the base, K/V present in both, probe) with paired items; empty
/// in a run with fewer than two variants.
std::vector<VariantEffect> variant_effects(const RunData& data, const RunSummary& summary);

/// One row per effect of `probe`: model, K, V, metric, "variant vs base", both means, Δ [95% CI], p (Holm), pairs.
Table variant_effect_table(const std::vector<VariantEffect>& effects, const std::string& probe);

/// The effects of `probe` as sorted Δ bars (variant − base), one per model, variant and K/V.
std::string variant_effect_svg(const std::vector<VariantEffect>& effects, const std::string& probe);

}  // namespace kvsweep::report
