#pragma once
/// The twins probe read out by margin: per model (group), per cell, per margin bin (the reference's
/// measured margin, so every cell's bins hold the same items) the flip rate — the items not answered
/// with the true value — with Wilson's 95 % interval; a table per model in the report.

#include <cstddef>
#include <string>
#include <vector>

#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/stats/summary.hpp"

namespace kvsweep::report {

struct TwinsBin {
  int bin = 0;
  std::string label;    // "< 1", "1–4", …
  std::size_t n = 0;    // items of the cell in the bin (ok records)
  std::size_t flips = 0;
  std::size_t took_twin = 0;  // of the flips, those that took a rival's value
  double rate = 0.0;    // flips / n; NaN when n is 0
  stats::ConfidenceInterval ci;  // Wilson 95 %; NaN bounds when n is 0
};

struct TwinsBinCell {
  std::size_t cell = 0;  // index into RunData::cells()
  std::vector<TwinsBin> bins;  // one per bin of the group, ascending
};

struct TwinsBins {
  std::string model;  // the group
  std::string probe;
  std::vector<TwinsBin> reference_margins;  // bins seen (labels), n on the reference
  std::vector<TwinsBinCell> cells;          // grid order
  std::size_t unmeasured = 0;  // the reference's items without a margin (no bin)
};

/// One entry per group with a twins item holding a bin, its cells in grid order.
std::vector<TwinsBins> twins_bins(const RunData& data, const ProbeDef& probe);

/// "Flip rate by margin": per model a table (cell × bin: rate [lo, hi] of n) and a line on the low bin.
void twins_bins_section(Document& doc, const RunData& data, const ProbeDef& probe);

}  // namespace kvsweep::report
