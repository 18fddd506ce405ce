#pragma once
/// The record's schema as one list, llama-bench's `test::get_fields()`: every field of a records.jsonl
/// line with its type and its value in a Record. `to_json(Record)` writes exactly these, long.csv's
/// record columns render them, `Record::from_json` reads exactly these back, and ARCHITECTURE.md's table
/// ("The record") lists them in this order: a new field is a member of Record and an entry here.

#include <optional>
#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kvsweep/probe/record.hpp"

namespace kvsweep::probe {

struct RecordField {
  std::string_view name;
  std::string_view type;  // as ARCHITECTURE.md says it: string, int, number, object, any
  /// The field's value in `record`; nullopt when the record does not carry it (`metrics` on a failed
  /// record, `error` on an ok one, …).
  std::optional<nlohmann::json> (*value)(const Record& record);
  /// Sets the field of `record` from a line's value, leniently (records kvsweep wrote itself): a value of
  /// another type reads as the field's empty value. Called only when the line has the key.
  void (*read)(Record& record, const nlohmann::json& value);
};

/// Every field, in the schema's order.
std::span<const RecordField> record_fields();

/// The field called `name`; nullptr when the schema has none.
const RecordField* record_field(std::string_view name);

/// Why a line's fields are not of their schema types ("metrics.match_reference: got string \"0\", expected a
/// number or boolean"); "" when each present field is. Every reader of records.jsonl checks it (the run
/// store's line parser): a field read leniently as empty would make a measurement read as missing.
std::string record_type_error(const nlohmann::json& line);

}  // namespace kvsweep::probe
