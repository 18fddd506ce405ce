#pragma once
/// Writes a run's report files and renders its summary: shared by `kvsweep report` and the end of
/// `kvsweep run`.

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kvsweep/report/output/bundle.hpp"

namespace kvsweep::cli {

struct WrittenReport {
  std::vector<report::OutputFile> files;  // as written under RUN_DIR/report/
  std::string summary;                    // the run at a glance (report::brief_document as plain text)
  std::string status;                     // the run's status as the report says it (report::run_status)
};

/// Reads RUN_DIR, writes `formats` under RUN_DIR/report/ (atomically, file by file) and renders the
/// summary; heat maps for the metrics `heatmaps` says. Throws core::FatalError naming the run directory
/// or the file that could not be written.
WrittenReport write_report(const std::filesystem::path& run_dir, const std::set<report::Format>& formats,
                           report::Heatmaps heatmaps = report::Heatmaps::gated);

/// The end of `kvsweep run`: writes every report file, prints the summary on stdout and returns the
/// run's status as the report says it ("failed" for a run whose reference measured nothing). A report
/// that cannot be written (a full disk) leaves the old report whole, says so and how to retry, and
/// returns nullopt: the run is complete, but it exits non-zero.
std::optional<std::string> report_after_run(const std::filesystem::path& run_dir);

}  // namespace kvsweep::cli
