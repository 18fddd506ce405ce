#pragma once
/// What a run failed to measure, so that a failure never reads as an answer: the groups whose reference
/// cell has no ok record (nothing measured: no cell can be compared with it, nothing is advised, and a
/// run that ended so has the status "failed"), and the probes that failed on every cell they ran in,
/// with the class of their failures (the records' status and error). The analysis returns values;
/// explain() words a probe's failure for every document that names it.

#include <cstddef>
#include <string>
#include <vector>

#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/input/run_data.hpp"

namespace kvsweep::report {

/// Whether any item of any probe has an ok record in `cell`.
bool measured(const RunData& data, std::size_t cell);

/// The groups (RunData::groups(), in that order) whose reference cell has no ok record.
std::vector<std::string> unmeasured_groups(const RunData& data);

/// The run's status as its reports say it: the manifest's, except "failed" for a run that ended
/// ("complete") with a group whose reference cell measured nothing.
std::string run_status(const RunData& data);

/// A probe none of whose items has an ok record in any cell, though some were recorded failed.
struct ProbeFailure {
  std::string probe;
  std::size_t cells = 0;  // the cells it recorded items in: every one failed
  /// One class of failure: the records' status (the error kind: "process", "timeout", …) and the first
  /// line of their error, with how many of the items ended so.
  struct Class {
    std::string status;
    std::string error;
    std::size_t items = 0;
  };
  std::vector<Class> classes;  // most items first, then in the order seen
};

/// The probes that failed on every cell, in RunData::probes() order.
std::vector<ProbeFailure> failed_probes(const RunData& data);

/// "speed: failed on every cell (4 cells; process: llama-bench killed by signal 11 (Segmentation fault))".
std::string explain(const ProbeFailure& failure);

/// The lines a summary opens with after its status: one warning paragraph per probe that failed on
/// every cell. Adds nothing when none did.
void failures_section(Document& doc, const RunData& data);

}  // namespace kvsweep::report
