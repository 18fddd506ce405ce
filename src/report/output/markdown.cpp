#include "kvsweep/report/output/markdown.hpp"

#include "kvsweep/report/output/report_document.hpp"

namespace kvsweep::report {

std::string write_markdown(const RunData& data, const RunSummary& summary, std::span<const Figure> figures) {
  return render_markdown(report_document(data, summary, figures, bundle_files(data, summary)));
}

}  // namespace kvsweep::report
