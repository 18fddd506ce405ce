#pragma once
/// One line of records.jsonl as a type: what one item of one cell produced, or why it did not. The
/// runner writes it, the run store appends it, probes read the reference cell's, adaptive, merge and
/// the report read them back; to_json and Record::from_json are its one JSON mapping (the schema is
/// ARCHITECTURE.md's "The record").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/cell_key.hpp"

namespace kvsweep::probe {

/// What became of an item. The line writes it as `status`: "ok", "skipped", or the failure's class.
enum class ItemStatus {
  ok,       // answered and scored
  skipped,  // not run: an adaptive sweep settled the cell's verdicts first (reason "settled")
  failed,   // the failure's class is in Record::failure
};

struct Record {
  static constexpr int kSchemaVersion = 1;

  int schema_version = kSchemaVersion;
  core::CellKey cell;
  std::string probe;  // the probe's name in the run
  std::string kind;   // the probe's kind
  std::string item;   // the item's key: (cell, probe, item) is the resume key
  ItemStatus status = ItemStatus::failed;
  /// failed: the failure's class ("crashed", "timeout", or core::to_string(ErrorKind)); a line whose
  /// status is missing reads as failed with an empty class, as it was written.
  std::string failure;
  nlohmann::json spec;  // the item's spec, as the probe planned it
  double wall_s = 0;
  int attempt = 1;     // 1 + the cell's server restarts before it
  std::string time;    // ISO 8601, UTC
  // ok: what the server produced, the item's metrics and the server's timings (server::to_json).
  nlohmann::json response;
  nlohmann::json metrics = nlohmann::json::object();
  nlohmann::json timings = nlohmann::json::object();
  // failed: the message, the HTTP status when there was one, the server log's tail when it died.
  std::optional<std::string> error;
  int http_status = 0;
  std::optional<std::string> log_tail;
  // skipped: why ("settled") and the adaptive decision.
  std::string reason;
  nlohmann::json adaptive;

  bool ok() const { return status == ItemStatus::ok; }
  /// Not run: an adaptive sweep settled the cell's verdicts first.
  bool settled() const { return status == ItemStatus::skipped && reason == "settled"; }
  /// `status` as the line writes it: "ok", "skipped", or the failure's class.
  std::string status_text() const;
  /// Sets status (and failure) from a line's `status`: "ok", "skipped", else failed with that class.
  void set_status(std::string_view text);

  /// A line read back (records kvsweep wrote itself, read leniently: a missing or mistyped field reads
  /// as empty); nullopt when it is not a record (no "cell" object).
  static std::optional<Record> from_json(const nlohmann::json& j);
};

/// The record's JSON line: the envelope, then response/metrics/timings for an ok record, error
/// (http_status, log_tail) for a failed one, reason/adaptive for a skipped one.
nlohmann::json to_json(const Record& record);

/// Every line that is a record, in order.
std::vector<Record> records_from_json(const std::vector<nlohmann::json>& lines);

}  // namespace kvsweep::probe
