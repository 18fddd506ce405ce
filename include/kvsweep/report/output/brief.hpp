#pragma once
/// The run at a glance, at most a screenful: per probe its headline row and the cells that differ from
/// their reference, the verdict per model, and where the full report is. What `kvsweep report RUN
/// --format summary` and the end of `kvsweep run` print (render_text), and what scripts/demo shows.

#include <cstddef>
#include <filesystem>

#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

/// Cells listed per probe before "… and N more".
inline constexpr std::size_t kBriefCellsPerProbe = 6;

/// `run_dir` is the run's directory: the full report is (or will be) in run_dir/report/.
Document brief_document(const RunData& data, const RunSummary& summary, const std::filesystem::path& run_dir);

}  // namespace kvsweep::report
