#include "kvsweep/report/output/summary_json.hpp"

namespace kvsweep::report {

nlohmann::ordered_json summary_document(const RunData& data, const RunSummary& summary, const Generator& generator) {
  return to_json(make_summary(data, summary, generator));
}

std::string write_summary_json(const RunData& data, const RunSummary& summary, const Generator& generator) {
  return summary_document(data, summary, generator).dump(2) + "\n";
}

}  // namespace kvsweep::report
