#pragma once
/// The dry run's time estimate: a previous run's rates (seconds an item of each probe took, seconds
/// a cell's server took to start and stop) times the plan's cells and items. Pure: a manifest and records in, numbers out.

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/probe/record.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::sweep {

/// What one finished run measured for one model.
struct RunRates {
  std::string run;          // the run directory's name
  std::string config_hash;  // the run's config hash (the plan's may differ: other items, another corpus)
  std::map<std::string, double> item_s;  // probe name → mean wall seconds of its ok items
  double server_s = 0;      // mean seconds from launch to ready plus stopping, over the cells that started
  std::size_t cells = 0;    // the cells that started a server (server_s is their mean)
};

/// The rates of the model called `model` in a run, from its manifest ("cells": ready_s, stop_s) and
/// records ("wall_s" of status ok): failed, skipped and settled items and cells that never started
/// a server do not count. A probe with no ok item has no rate.
RunRates rates_from_run(std::string run, const Manifest& manifest, std::span<const probe::Record> records,
                        const std::string& model);
/// The same from the manifest's and the records' JSON.
RunRates rates_from_run(std::string run, const nlohmann::json& manifest, std::span<const nlohmann::json> records,
                        const std::string& model);

/// One probe of the plan: its name and the items each cell runs.
struct PlannedProbe {
  std::string name;
  std::size_t items = 0;
};

struct TimeEstimate {
  double seconds = 0;
  std::vector<std::string> unrated;  // probes of the plan the rates have no figure for (counted as 0 s)
};

/// cells × (server_s + Σ items × item_s), the cells spread evenly over `slots` run at once: the
/// busiest slot's ceil(cells / slots) cells. Assumes a cell's rates hold with `slots` cells at once.
TimeEstimate estimate_time(const RunRates& rates, std::size_t cells, std::span<const PlannedProbe> probes, int slots = 1);

}  // namespace kvsweep::sweep
