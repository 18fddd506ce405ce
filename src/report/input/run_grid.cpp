#include "kvsweep/report/input/run_grid.hpp"

#include <algorithm>

#include "kvsweep/report/input/json_fields.hpp"
#include "kvsweep/stats/precision.hpp"

namespace kvsweep::report {

namespace {

std::vector<std::string> string_list(const nlohmann::json& j) {
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    if (e.is_string()) out.push_back(e.get<std::string>());
  }
  return out;
}

void append_missing(std::vector<std::string>& list, const std::string& type) {
  if (!type.empty() && std::find(list.begin(), list.end(), type) == list.end()) list.push_back(type);
}

/// Highest precision first; unknown types after, by name.
void sort_by_bits(std::vector<std::string>& types) {
  std::stable_sort(types.begin(), types.end(), [](const std::string& a, const std::string& b) {
    const double ba = stats::bits_per_value(a).value_or(-1.0);
    const double bb = stats::bits_per_value(b).value_or(-1.0);
    if (ba != bb) return ba > bb;
    return a < b;
  });
}

}  // namespace

bool in_config_grid(const sweep::Manifest& m, const nlohmann::json& config, const core::CellKey& key) {
  const auto names = [](const nlohmann::json& list) {
    std::vector<std::string> out;
    if (list.is_array())
      for (const auto& e : list) append_missing(out, string_field(e, "name"));
    return out;
  };
  const auto has = [](const std::vector<std::string>& list, const std::string& v) {
    return std::find(list.begin(), list.end(), v) != list.end();
  };
  std::vector<std::string> models = names(config.is_object() ? config.value("models", nlohmann::json()) : nlohmann::json());
  if (models.empty()) models = names(m.models);
  if (!models.empty() && !has(models, key.model)) return false;
  const std::vector<std::string> variants =
      names(config.is_object() ? config.value("variants", nlohmann::json()) : nlohmann::json());
  if (variants.empty() ? !key.variant.empty() : !has(variants, key.variant)) return false;
  const nlohmann::json grid = config.is_object() ? config.value("grid", nlohmann::json()) : nlohmann::json();
  if (!grid.is_object() || !grid.contains("k") || !grid["k"].is_array()) return true;
  const auto pairs = [&](const char* name) {
    std::vector<core::KvPair> out;
    for (const auto& text : string_list(grid.value(name, nlohmann::json())))
      if (auto pair = core::KvPair::parse(text)) out.push_back(*pair);
    return out;
  };
  const core::KvPair pair{key.type_k, key.type_v};
  const auto listed = [&pair](const std::vector<core::KvPair>& list) {
    return std::find(list.begin(), list.end(), pair) != list.end();
  };
  if (listed(pairs("include"))) return true;
  if (grid.contains("reference") && grid["reference"].is_string() &&
      core::KvPair::parse(grid["reference"].get<std::string>()) == pair)
    return true;
  const std::vector<std::string> k = string_list(grid["k"]);
  std::vector<std::string> v = string_list(grid.value("v", nlohmann::json()));
  if (v.empty()) v = k;  // "same-as-k"
  if (!has(k, key.type_k) || !has(v, key.type_v)) return false;
  if (grid.value("tied", false) && key.type_k != key.type_v) return false;
  return !listed(pairs("exclude"));
}

void order_groups(const sweep::Manifest& m, const nlohmann::json& config, const std::vector<CellDef>& cells,
                  std::vector<std::string>& models, std::vector<std::string>& variants,
                  std::vector<std::string>& groups) {
  if (m.models.is_array()) {
    for (const auto& model : m.models) append_missing(models, string_field(model, "name"));
  }
  for (const auto& cell : cells) append_missing(models, cell.model);
  if (config.is_object() && config.contains("variants") && config["variants"].is_array()) {
    for (const auto& v : config["variants"]) append_missing(variants, string_field(v, "name"));
  }
  for (const auto& cell : cells) append_missing(variants, cell.variant);
  for (const auto& model : models) {
    for (const auto& cell : cells)
      if (cell.model == model && cell.variant.empty()) append_missing(groups, cell.group());
    for (const auto& variant : variants) {
      for (const auto& cell : cells)
        if (cell.model == model && cell.variant == variant) append_missing(groups, cell.group());
    }
  }
  // A model the manifest lists whose cells have not started yet is still a (no-variant) grid.
  if (variants.empty()) groups = models;
}

void order_axes(const nlohmann::json& grid, const std::vector<CellDef>& cells, std::vector<std::string>& k_types,
                std::vector<std::string>& v_types) {
  k_types = string_list(grid.is_object() ? grid.value("k", nlohmann::json()) : nlohmann::json());
  v_types = string_list(grid.is_object() ? grid.value("v", nlohmann::json()) : nlohmann::json());
  if (v_types.empty()) v_types = k_types;
  std::vector<std::string> extra_k, extra_v;
  for (const auto& cell : cells) {
    if (std::find(k_types.begin(), k_types.end(), cell.type_k) == k_types.end()) append_missing(extra_k, cell.type_k);
    if (std::find(v_types.begin(), v_types.end(), cell.type_v) == v_types.end()) append_missing(extra_v, cell.type_v);
  }
  sort_by_bits(extra_k);
  sort_by_bits(extra_v);
  k_types.insert(k_types.end(), extra_k.begin(), extra_k.end());
  v_types.insert(v_types.end(), extra_v.begin(), extra_v.end());
}

void infer_reference(const nlohmann::json& grid, std::vector<CellDef>& cells) {
  const bool any_reference = std::any_of(cells.begin(), cells.end(), [](const CellDef& c) { return c.is_reference; });
  if (any_reference || !grid.is_object() || !grid.contains("reference") || !grid["reference"].is_string()) return;
  const std::string ref = grid["reference"].get<std::string>();
  const core::KvPair pair = core::KvPair::parse(ref).value_or(core::KvPair{ref, ref});
  for (auto& cell : cells) cell.is_reference = cell.pair() == pair;
}

}  // namespace kvsweep::report
