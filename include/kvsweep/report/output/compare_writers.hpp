#pragma once
/// The outputs of `kvsweep compare`: a Markdown table for people, JSON for other tools, JUnit XML for CI.

#include <string>

#include "kvsweep/report/analysis/compare.hpp"
#include "kvsweep/report/document/document.hpp"

namespace kvsweep::report {

/// Which checks the table lists: only those not `ok` (the default: an identical pair of runs prints a
/// few lines), or every check.
enum class CheckRows { not_ok, all };

/// What the manifests say changed (manifest_changes_section), what else differs (config hash, items),
/// the checks (per `rows`) as a Markdown table, then per-probe counts, the one-line summary (with why
/// any check is inconclusive: the items per cell and the items needed) and one line per failing or
/// inconclusive check with its reason.
Document compare_document(const Comparison& comparison, CheckRows rows = CheckRows::not_ok);
/// compare_document() as Markdown.
std::string write_compare_table(const Comparison& comparison, CheckRows rows = CheckRows::not_ok);

/// Every check as JSON ({"schema_version", "kind": "kvsweep-compare", counts, changes[] (what the manifests
/// say changed: area, name, before, after — null when absent —, text), differences[], warnings[], checks[]}).
std::string write_compare_json(const Comparison& comparison);

/// JUnit XML: one <testcase> per check (classname kvsweep.<probe>, name "<cell> <metric>"), a
/// <failure> for a regression (and an inconclusive check with fail_inconclusive), <skipped> with the
/// reason for an inconclusive check otherwise and when neither run has values; the suite's
/// <system-out> lists what the manifests say changed, when anything did.
std::string write_junit(const Comparison& comparison);

/// "2 inconclusive: telephone has 2 items per cell; at least 6 are needed to detect a change of this
/// size" — one clause per probe with inconclusive checks; empty when there are none.
std::string inconclusive_summary(const Comparison& comparison);

}  // namespace kvsweep::report
