#pragma once
/// How much of a telephone cell's spread is sampling: on the reference cell, the spread of a chain's
/// final similarity across seeds of the same text (sampling alone) beside its spread across all chains,
/// and each other cell's mean paired difference from it — so a reader can tell a cell's difference from
/// what another seed gives by itself. Greedy chains (temperature 0) have no sampling spread: theirs is
/// the texts' own.

#include <cstddef>
#include <string>
#include <vector>

#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/input/run_data.hpp"

namespace kvsweep::report {

struct TelephoneSpread {
  std::string model;   // the group (model or model/variant)
  std::string metric;  // final_similarity
  bool greedy = false;  // the probe is deterministic (temperature 0): no sampling
  std::size_t reference = 0;    // index into RunData::cells()
  std::size_t chains = 0;       // the reference's chains with a value
  std::size_t texts = 0;        // distinct texts among them
  std::size_t seeded_texts = 0; // texts with two or more seeds: what the sampling spread rests on
  /// Sampling alone: the pooled sd over the texts with two or more seeds (√ of the mean within-text
  /// variance, each with n − 1); NaN when no text has two seeds.
  double sampling_sd = 0.0;
  double overall_sd = 0.0;  // across all the reference's chains (text and sampling together); NaN under 2
  struct Cell {
    std::size_t cell = 0;
    double delta = 0.0;  // mean of cell − reference over the chains both ran
    std::size_t pairs = 0;
  };
  std::vector<Cell> cells;  // the group's other cells, grid order
};

/// A telephone item's text: its key up to "-s<seed>" ("t3-s42" → "t3"); the whole key otherwise.
std::string telephone_text_key(const std::string& item);

/// One entry per model (group) of `probe` whose reference has values of final_similarity.
std::vector<TelephoneSpread> telephone_spread(const RunData& data, const ProbeDef& probe);

/// The spread in words, one paragraph per model: "Sampling: on f16/f16 chains of the same text spread
/// by sd 0.24 in final_similarity (16 seeds of 1 text): a mean over 16 chains moves by about ±0.12
/// (2 sd/√n) from sampling alone. Against it: q4_0/f16 +0.07 (16 pairs)."; greedy probes say their
/// spread is the texts'.
void telephone_spread_section(Document& doc, const RunData& data, const ProbeDef& probe);

}  // namespace kvsweep::report
