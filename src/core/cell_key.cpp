#include "kvsweep/core/cell_key.hpp"

#include "kvsweep/core/file_name.hpp"

namespace kvsweep::core {

std::optional<KvPair> KvPair::parse(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size()) return std::nullopt;
  return KvPair{std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
}

std::string CellKey::label() const {
  return model + "/" + (variant.empty() ? "" : variant + "/") + type_k + "/" + type_v;
}

std::string CellKey::id() const {
  return file_safe(model + "-" + (variant.empty() ? "" : variant + "-") + type_k + "-" + type_v);
}

nlohmann::json CellKey::to_json() const {
  nlohmann::json j = {{"model", model}};
  if (!variant.empty()) j["variant"] = variant;
  j["type_k"] = type_k;
  j["type_v"] = type_v;
  return j;
}

CellKey CellKey::from_json(const nlohmann::json& cell) {
  auto field = [&](const char* name) -> std::string {
    if (!cell.is_object()) return "";
    const auto it = cell.find(name);
    return it != cell.end() && it->is_string() ? it->get<std::string>() : "";
  };
  return {field("model"), field("variant"), field("type_k"), field("type_v")};
}

}  // namespace kvsweep::core
