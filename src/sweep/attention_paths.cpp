#include "kvsweep/sweep/attention_paths.hpp"

#include "kvsweep/server/attention_path.hpp"

namespace kvsweep::sweep {

namespace {

std::string group_of(const nlohmann::json& cell) { return cell.value("model", "") + "\n" + cell.value("variant", ""); }

const nlohmann::json* attention_of(const nlohmann::json& cell) {
  if (!cell.contains("effective") || !cell["effective"].is_object()) return nullptr;
  const auto& e = cell["effective"];
  return e.contains("attention") && e["attention"].is_object() ? &e["attention"] : nullptr;
}

}  // namespace

void resolve_attention_paths(nlohmann::json& cells) {
  if (!cells.is_array()) return;
  for (auto& cell : cells) {
    const nlohmann::json* attention = attention_of(cell);
    if (attention == nullptr) continue;
    auto& effective = cell["effective"];
    const std::string type_k = cell.value("type_k", ""), type_v = cell.value("type_v", "");
    const std::string fa_quants = attention->value("fa_quants", "");
    // The cell's own verdict, as its log gave it.
    const server::PathVerdict own{server::attention_path_from_string(attention->value("path", "unknown")),
                                  attention->value("reason", "")};
    server::PathVerdict verdict = own;
    if (!cell.value("is_reference", false)) {
      for (const auto& ref : cells) {
        const nlohmann::json* ref_attention = attention_of(ref);
        if (ref_attention == nullptr || !ref.value("is_reference", false) || group_of(ref) != group_of(cell)) continue;
        verdict = server::against_reference(own, server::splits_from_json(attention->value("splits", nlohmann::json())),
                                            server::splits_from_json(ref_attention->value("splits", nlohmann::json())),
                                            type_k, type_v, fa_quants);
      }
    }
    effective["path"] = std::string(server::to_string(verdict.path));
    effective["path_reason"] = verdict.reason;
  }
}

}  // namespace kvsweep::sweep
