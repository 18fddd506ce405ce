#pragma once
/// summary.json's schema as field lists, one per kind of object (probe/record_fields' way, llama-bench's
/// `test::get_fields()`): each field's name, how a part of a Summary writes it and how it is read back,
/// checked, with the key path of what is wrong. to_json(Summary) and Summary::from_json() walk these
/// lists and nothing else: a new field is a member and an entry here.

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/report/analysis/summary.hpp"

namespace kvsweep::report {

/// An object of summary.json being read: its checked values (`obj`), the same object in the file's
/// order (`ordered`: for the keys that are names, a result's metrics and a metric's items) and where it
/// is. Every getter fails "<which>: <path>.<key>: expected …, got …" on a value of another type.
struct SummaryIn {
  const nlohmann::json& obj;
  const nlohmann::ordered_json& ordered;
  config::Site site;

  bool has(const char* key) const { return obj.contains(key); }
  std::string text(const char* key) const;    // "" when absent
  double number(const char* key) const;       // NaN when absent or null
  std::size_t count(const char* key) const;   // 0 when absent or null
  bool flag(const char* key, bool fallback) const;
  std::vector<std::string> texts(const char* key) const;  // empty when absent
  const nlohmann::json& array(const char* key) const;     // an empty array when absent
  /// obj[key] as [lower, upper]: NaN where null, both NaN when absent or empty.
  std::pair<double, double> interval(const char* key) const;
  /// obj[key], which must be an object.
  SummaryIn member(const char* key) const;
  /// The array obj[key] of objects, each read by `read` (empty when absent).
  template <class T>
  std::vector<T> objects(const char* key, T (*read)(const SummaryIn&)) const;
};

template <class T>
struct SummaryField {
  std::string_view name;
  /// Sets out[name] from `part`, or nothing where the document leaves the field out.
  void (*write)(const T& part, nlohmann::ordered_json& out);
  /// Sets the field of `part` from the object being read (absent: the field's empty value).
  void (*read)(T& part, const SummaryIn& in);
};

/// The fields of each kind of object, in writing order.
std::span<const SummaryField<Summary>> summary_fields();
std::span<const SummaryField<SummaryProbe>> summary_probe_fields();
std::span<const SummaryField<SummaryCell>> summary_cell_fields();
std::span<const SummaryField<SummaryResult>> summary_result_fields();
std::span<const SummaryField<SummaryMetric>> summary_metric_fields();
std::span<const SummaryField<SummaryTest>> summary_test_fields();
std::span<const SummaryField<SummaryGrid>> summary_grid_fields();
std::span<const SummaryField<SummaryHeadline>> summary_headline_fields();
std::span<const SummaryField<SummaryVariantEffect>> summary_variant_effect_fields();

template <class T>
nlohmann::ordered_json write_fields(std::span<const SummaryField<T>> fields, const T& part) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const SummaryField<T>& f : fields) f.write(part, out);
  return out;
}

template <class T>
T read_fields(std::span<const SummaryField<T>> fields, const SummaryIn& in) {
  T part;
  for (const SummaryField<T>& f : fields) f.read(part, in);
  return part;
}

template <class T>
std::vector<T> SummaryIn::objects(const char* key, T (*read)(const SummaryIn&)) const {
  // config::get_objects' checks and messages, with the file's order beside each object.
  std::vector<T> out;
  if (!obj.is_object() || !obj.contains(key)) return out;
  const nlohmann::json& list = obj[key];
  const config::Site at = site.child(key);
  if (!list.is_array()) at.fail("expected an array of objects, got " + config::shown(list));
  const nlohmann::ordered_json& ordered_list = ordered[key];
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_object()) at.index(i).fail("expected an object, got " + config::shown(list[i]));
    out.push_back(read(SummaryIn{list[i], ordered_list[i], at.index(i)}));
  }
  return out;
}

}  // namespace kvsweep::report
