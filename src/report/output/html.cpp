#include "kvsweep/report/output/html.hpp"

#include "kvsweep/report/output/report_document.hpp"

namespace kvsweep::report {

std::string write_html(const RunData& data, const RunSummary& summary, std::span<const Figure> figures) {
  return render_html(report_document(data, summary, figures, bundle_files(data, summary)));
}

}  // namespace kvsweep::report
