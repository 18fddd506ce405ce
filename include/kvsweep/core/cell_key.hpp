#pragma once
/// What names a cell of a sweep in every layer: the model, the variant and the K/V cache types.
/// The planner's cell, the server's launch spec, the probe's view, the report's cell and the
/// summary's cell each hold one (as their base), so a cell has one id rule, one label, one group
/// and one JSON form everywhere; a "K/V" pair is parsed once, by `KvPair::parse`.

#include <compare>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvsweep::core {

/// A K/V cache-type pair as configs and filters spell it: "q8_0/f16".
struct KvPair {
  std::string type_k = "f16";
  std::string type_v = "f16";

  /// "K/V".
  std::string text() const { return type_k + "/" + type_v; }
  /// "K/V" with both halves non-empty; nullopt otherwise (the caller says where the text came from).
  static std::optional<KvPair> parse(std::string_view text);
  auto operator<=>(const KvPair&) const = default;
};

struct CellKey {
  std::string model;    // the config's model name
  std::string variant;  // the config's variant name; empty when the config has no variants
  std::string type_k;
  std::string type_v;

  /// This cell's key (for a layer's struct that holds it as its base).
  const CellKey& key() const { return *this; }
  /// Sets this key (only the key's part of a layer's struct), e.g. `spec.set_key(cell.key())`.
  void set_key(const CellKey& other) { *this = other; }
  KvPair pair() const { return {type_k, type_v}; }
  /// "K/V", e.g. "q8_0/f16".
  std::string types() const { return type_k + "/" + type_v; }
  /// "model/k/v" (or "model/variant/k/v"), the human label.
  std::string label() const;
  /// A file-name-safe id, e.g. "tiny-q8_0-f16" (or "tiny-rot-off-q8_0-f16"): every character but
  /// letters, digits, '-', '_' and '.' becomes '_'.
  std::string id() const;
  /// The cells that share a reference cell and form one grid: "model", or "model/variant".
  std::string group() const { return group_of(model, variant); }
  static std::string group_of(const std::string& model, const std::string& variant) {
    return variant.empty() ? model : model + "/" + variant;
  }
  /// {"model":…, ["variant":…,] "type_k":…, "type_v":…} as records and manifests hold it; "variant"
  /// only when there is one, so runs without variants keep their records and keys.
  nlohmann::json to_json() const;
  /// The key of a record's or a manifest's cell object; a missing or non-string field reads "".
  static CellKey from_json(const nlohmann::json& cell);
  auto operator<=>(const CellKey&) const = default;
};

}  // namespace kvsweep::core
