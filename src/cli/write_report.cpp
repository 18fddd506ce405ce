#include "kvsweep/cli/write_report.hpp"

#include <cstdio>
#include <vector>

#include "kvsweep/core/error.hpp"
#include "kvsweep/report/analysis/failures.hpp"
#include "kvsweep/report/output/brief.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/input/context.hpp"
#include "kvsweep/sweep/run/run_folders.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::cli {

WrittenReport write_report(const std::filesystem::path& run_dir, const std::set<report::Format>& formats,
                           report::Heatmaps heatmaps) {
  // The report's renames into a linked report/ would replace the files of the link's target.
  if (const std::string link = sweep::linked_run_folder(run_dir); !link.empty()) throw core::FatalError(link);
  auto data = report::RunData::load(run_dir);
  if (!data) throw core::FatalError(run_dir.string() + ": " + data.error().message + " (is it a kvsweep run directory?)");
  const report::RunSummary summary = report::summarize_run(*data);
  WrittenReport out;
  out.files = report::render_report(*data, summary, formats, report::this_build(), heatmaps);
  for (const auto& o : data->outside_grid())
    std::fprintf(stderr,
                 "kvsweep: warning: %zu record(s) of cell %s, which is not in this run's grid, are not reported "
                 "(appended by hand or by another run?)\n",
                 o.records, o.cell.label().c_str());
  const std::filesystem::path out_dir = run_dir / "report";
  // All files new or none: a report is never half this run's and half an earlier one's.
  std::vector<sweep::FileText> files;
  for (const auto& file : out.files) files.push_back({out_dir / file.path, file.text});
  if (auto written = sweep::write_files_atomic(files); !written) throw core::FatalError(written.error().message);
  out.summary = report::render_text(report::brief_document(*data, summary, run_dir));
  out.status = report::run_status(*data);
  return out;
}

std::optional<std::string> report_after_run(const std::filesystem::path& run_dir) {
  try {
    const WrittenReport written = write_report(run_dir, *report::parse_format("all"));
    std::printf("\n%s", written.summary.c_str());
    return written.status;
  } catch (const core::FatalError& e) {
    std::fprintf(stderr, "kvsweep: the run is complete, but its report could not be written: %s; retry with: kvsweep report %s\n",
                 e.what(), run_dir.c_str());
    return std::nullopt;
  }
}

}  // namespace kvsweep::cli
