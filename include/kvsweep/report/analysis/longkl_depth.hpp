#pragma once
/// The longkl probe read out by depth: per model (group), per cell, per depth bin, the positions of
/// its ok windows pooled — mean and 99th percentile of the KL lower bound, top-1 agreement, mean Δp
/// of the reference's top token, reference ids outside the cell's list — and the tokens each cell's
/// server evaluated against what the schedule plans.

#include <cstddef>
#include <string>
#include <vector>

#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/input/run_data.hpp"

namespace kvsweep::report {

struct DepthBinStats {
  std::string bin;          // "d1k", …
  int start = 0;            // the bin's first depth (the smallest window start seen)
  std::size_t positions = 0;
  double mean_kl = 0.0;     // NaN when no position
  double p99_kl = 0.0;
  double top1 = 0.0;        // share of positions whose top-1 agreed
  double mean_dp = 0.0;
  std::size_t outside = 0;  // reference ids missing from the cell's lists, summed
};

struct DepthCell {
  std::size_t cell = 0;  // index into RunData::cells()
  std::vector<DepthBinStats> bins;  // ascending depth, the group's bins (empty stats where the cell has none)
  long long evaluated = 0;  // tokens its windows' requests evaluated (the server's prompt_n)
  long long replayed = 0;   // tokens evaluated again to replay the schedule (resumes, restarts)
  long long positions = 0;
  int last_position = 0;    // the deepest position scored
};

struct DepthCurves {
  std::string model;  // the group
  std::string probe;
  std::vector<std::string> bins;  // ascending
  std::vector<DepthCell> cells;   // grid order
};

/// One entry per group with ok longkl windows.
std::vector<DepthCurves> longkl_depth(const RunData& data, const ProbeDef& probe);

/// "KL by depth": per model a table (cell × bin: mean KL, p99, top-1, Δp, outside), the evaluated
/// tokens against the plan, and the note that the KL is a lower bound.
void longkl_depth_section(Document& doc, const RunData& data, const ProbeDef& probe);

}  // namespace kvsweep::report
