#include "kvsweep/sweep/estimate/previous_run.hpp"

#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::sweep {

std::string model_name_in(const Manifest& manifest, const std::string& path, std::optional<std::uintmax_t> size) {
  if (!manifest.models.is_array()) return "";
  for (const auto& m : manifest.models) {
    if (!m.is_object() || m.value("path", "") != path) continue;
    const auto recorded = m.find("size");
    if (size && recorded != m.end() && recorded->is_number_integer() && recorded->get<std::uintmax_t>() != *size)
      continue;
    return m.value("name", "");
  }
  return "";
}

std::string model_name_in(const nlohmann::json& manifest, const std::string& path, std::optional<std::uintmax_t> size) {
  const std::optional<Manifest> read = Manifest::from_json(manifest);
  return read ? model_name_in(*read, path, size) : "";
}

std::optional<RunRates> previous_rates(const std::filesystem::path& runs_dir, const std::string& model_path) {
  std::error_code ec;
  std::optional<std::uintmax_t> size;
  if (const auto bytes = std::filesystem::file_size(model_path, ec); !ec) size = bytes;
  std::filesystem::path best;
  std::string best_finished;
  std::string best_model;
  Manifest best_manifest;
  for (const auto& entry : std::filesystem::directory_iterator(runs_dir, ec)) {
    if (!entry.is_directory(ec) || !std::filesystem::exists(entry.path() / "manifest.json", ec)) continue;
    auto manifest = RunStore::read_manifest(entry.path());
    if (!manifest || manifest->status_text() != "complete") continue;
    const std::string model = model_name_in(*manifest, model_path, size);
    const std::string finished = manifest->finished_at.value_or("");
    // ISO-8601 UTC stamps of one format order as text.
    if (model.empty() || (!best.empty() && finished <= best_finished)) continue;
    best = entry.path();
    best_finished = finished;
    best_model = model;
    best_manifest = std::move(*manifest);
  }
  if (best.empty()) return std::nullopt;
  auto records = RunStore::read_records(best);
  if (!records) return std::nullopt;
  return rates_from_run(best.filename().string(), best_manifest, *records, best_model);
}

}  // namespace kvsweep::sweep
