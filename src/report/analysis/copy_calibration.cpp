#include "kvsweep/report/analysis/copy_calibration.hpp"

#include <algorithm>
#include <cmath>

#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

bool is_copy_model(const RunData& data, const std::string& model) {
  for (const auto& m : data.manifest().models)
    if (m.is_object() && m.value("name", "") == model && m.contains("copy_model")) return true;
  return false;
}

/// The longest prompt (corpus + question tokens) among the reference's counted items; 0 when unknown.
long long longest_prompt(const RunData& data, std::size_t reference, const std::string& probe) {
  long long longest = 0;
  for (const ItemOutcome& item : data.items(reference, probe)) {
    if (!item.ok) continue;
    const auto& response = data.records()[item.record].response;
    if (!response.is_object()) continue;
    const auto count = [&](const char* key) {
      const auto it = response.find(key);
      return it != response.end() && it->is_number_integer() ? it->get<long long>() : 0LL;
    };
    longest = std::max(longest, count("corpus_tokens") + count("question_tokens"));
  }
  return longest;
}

}  // namespace

std::string tokens_label(long long tokens) {
  if (tokens < 1000) return std::to_string(tokens);
  return std::to_string(static_cast<long long>(std::llround(static_cast<double>(tokens) / 1000.0))) + "K";
}

std::string copy_model_warning(const RunData& data, std::size_t reference, const ProbeDef& probe, double mean) {
  if (probe.kind != "recall" || !std::isfinite(mean)) return "";
  const CellDef& cell = data.cells()[reference];
  if (!is_copy_model(data, cell.model)) return "";
  const double lo = probe.calibration_lo, hi = probe.calibration_hi;
  if (mean >= lo + copy_model_ceiling_share * (hi - lo)) return "";
  const long long tokens = longest_prompt(data, reference, probe.name);
  const bool random_bodies = probe.config.is_object() && probe.config.contains("corpus") &&
                             probe.config["corpus"].is_object() && probe.config["corpus"].contains("random_bodies");
  return "Warning: the reference recalls " + fixed(mean, 2) + " of " + shortest(hi) +
         " lines: this corpus is too ambiguous for the copy model" +
         (tokens > 0 ? " at " + tokens_label(tokens) + " tokens" : std::string()) + "; " +
         (random_bodies ? "use longer values (corpus.random_bodies.value_len; bench/copy-knobs length measures "
                          "where each value length stops recalling)"
                        : "use a corpus whose lines share less text") +
         ". Until then a cell that scores above the reference is not better.";
}

}  // namespace kvsweep::report
