#pragma once
/// Everything `kvsweep report` writes, as (relative path, text) pairs: the caller writes the files.

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kvsweep/report/figures/figures.hpp"
#include "kvsweep/report/input/context.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"

namespace kvsweep::report {

enum class Format { md, csv, json, svg, html };

/// "md", "csv", "json", "svg", "html" → that format; "all" → every one; anything else → nullopt.
std::optional<std::set<Format>> parse_format(std::string_view name);

struct OutputFile {
  std::filesystem::path path;  // relative to RUN_DIR/report/
  std::string text;
};

/// md → report.md; csv → long.csv and grids/<probe>-<metric>.csv; json → summary.json;
/// svg → every figure (heat maps as `heatmaps` says); html → index.html (figures inlined).
std::vector<OutputFile> render_report(const RunData& data, const RunSummary& summary, const std::set<Format>& formats,
                                      const Generator& generator, Heatmaps heatmaps = Heatmaps::gated);

}  // namespace kvsweep::report
