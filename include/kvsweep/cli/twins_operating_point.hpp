#pragma once
/// `kvsweep run CONFIG --dry-run --measure` for the twins probe: its dial searched on the reference cell
/// (every word distance 1–4 at the key's end and at its start, the rest of the probe's config kept), and
/// the operating point printed — the setting where the reference still answers ≥ 95 % with the smallest
/// median measured margin, that margin below the probe's last bin edge — or that none exists in the range
/// tried. Probes alike but for the dial are searched once.

#include <memory>
#include <vector>

#include "kvsweep/config/config.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/server/backend.hpp"

namespace kvsweep::cli {

/// Runs each twins probe's dial on the first model's reference cell (its first variant's), one server
/// start for all, in a temporary directory removed after, and prints the table and the operating point.
void print_twins_operating_points(const config::Config& config, const std::vector<std::unique_ptr<probe::Probe>>& probes,
                                  server::Backend& backend);

}  // namespace kvsweep::cli
