#include "kvsweep/sweep/run/attention_paths.hpp"

namespace kvsweep::sweep {

std::optional<CellAttention> cell_attention(const ManifestCell& cell) {
  if (!cell.effective || !cell.effective->attention.is_object()) return std::nullopt;
  const nlohmann::json& attention = cell.effective->attention;
  CellAttention out;
  out.key = cell.key();
  out.is_reference = cell.reference();
  out.own = {server::attention_path_from_string(attention.value("path", "unknown")), attention.value("reason", "")};
  out.splits = server::splits_from_json(attention.value("splits", nlohmann::json()));
  out.fa_quants = attention.value("fa_quants", "");
  return out;
}

std::map<core::CellKey, server::PathVerdict> resolve_attention_paths(const std::vector<CellAttention>& cells) {
  std::map<core::CellKey, server::PathVerdict> out;
  for (const auto& cell : cells) {
    server::PathVerdict verdict = cell.own;
    if (!cell.is_reference) {
      for (const auto& ref : cells) {
        if (!ref.is_reference || ref.key.group() != cell.key.group()) continue;
        verdict = server::against_reference(cell.own, cell.splits, ref.splits, cell.key.type_k, cell.key.type_v,
                                            cell.fa_quants);
      }
    }
    out[cell.key] = verdict;
  }
  return out;
}

std::map<core::CellKey, server::PathVerdict> resolve_attention_paths(std::vector<ManifestCell>& cells) {
  std::vector<CellAttention> read;
  for (const auto& cell : cells)
    if (auto a = cell_attention(cell)) read.push_back(std::move(*a));
  auto verdicts = resolve_attention_paths(read);
  for (auto& cell : cells) {
    if (!cell_attention(cell)) continue;
    const auto& verdict = verdicts.at(cell.key());
    cell.effective->path = std::string(server::to_string(verdict.path));
    cell.effective->path_reason = verdict.reason;
  }
  return verdicts;
}

}  // namespace kvsweep::sweep
