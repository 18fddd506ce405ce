#include "kvsweep/report/analysis/compare.hpp"

// What compare reads from a path: a run directory summarized as its summary.json would hold it, or a
// summary.json (in its run, or kept apart as a CI baseline), with the manifest and identity beside it.

#include <filesystem>
#include <optional>
#include <string>

#include "kvsweep/core/read_file.hpp"
#include "kvsweep/report/analysis/run_summary.hpp"
#include "kvsweep/report/input/run_data.hpp"
#include "kvsweep/report/analysis/summary.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::report {

core::Expected<Summary> load_summary(const std::filesystem::path& path, const Generator& generator) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    auto data = RunData::load(path);
    if (!data) return core::fail(data.error().kind, path.string() + ": " + data.error().message);
    return make_summary(*data, summarize_run(*data), generator);
  }
  const std::optional<std::string> text = core::read_file(path, core::Links::follow);
  if (!text) return core::fail(core::ErrorKind::io, path.string() + ": cannot read (no such file or directory?)");
  // Ordered: a result's metrics and a metric's items keep the order they were written in.
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(*text, nullptr, false);
  if (doc.is_discarded()) {
    return core::fail(core::ErrorKind::parse, path.string() + ": not valid JSON (expected a summary.json from kvsweep report)");
  }
  return Summary::from_json(doc, path.string());
}

namespace {

std::optional<sweep::Manifest> manifest_of_summary(const std::filesystem::path& path) {
  const auto text = core::read_file(path, core::Links::follow);
  if (!text) return std::nullopt;
  const nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  if (!doc.is_object() || !doc.contains("context") || !doc["context"].is_object()) return std::nullopt;
  const nlohmann::json& context = doc["context"];
  nlohmann::json m = {{"server", context.value("server", nlohmann::json::object())},
                      {"kvsweep", context.value("kvsweep", nlohmann::json::object())},
                      {"models", context.value("models", nlohmann::json::array())}};
  for (const char* key : {"n_ctx", "server_env", "compute"})
    if (context.contains(key)) m[key] = context[key];
  if (context.contains("run") && context["run"].is_object() && context["run"].contains("config_hash"))
    m["config_hash"] = context["run"]["config_hash"];
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : doc.value("cells", nlohmann::json::array()))
    if (c.is_object() && c.contains("effective")) cells.push_back(c);
  m["cells"] = cells;
  return sweep::Manifest::from_json(m);
}

}  // namespace

std::optional<sweep::Manifest> load_manifest(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path dir = path;
  if (!std::filesystem::is_directory(path, ec)) {
    // RUN_DIR/report/summary.json: the manifest is the run's; a summary kept apart carries its parts.
    const bool in_run = path.filename() == "summary.json" && path.parent_path().filename() == "report" &&
                        std::filesystem::exists(path.parent_path().parent_path() / "manifest.json", ec);
    if (!in_run) return manifest_of_summary(path);
    dir = path.parent_path().parent_path();
  }
  auto manifest = sweep::RunStore::read_manifest(dir);
  if (!manifest) return std::nullopt;
  return sweep::Manifest::from_json(*manifest);
}

core::Expected<std::optional<sweep::RunIdentity>> load_identity(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path dir = path;
  if (!std::filesystem::is_directory(path, ec)) {
    // As load_manifest: a summary.json inside its run is the run's; one kept apart has no identity.
    const bool in_run = path.filename() == "summary.json" && path.parent_path().filename() == "report" &&
                        std::filesystem::exists(path.parent_path().parent_path() / "manifest.json", ec);
    if (!in_run) return std::optional<sweep::RunIdentity>{};
    dir = path.parent_path().parent_path();
  }
  auto manifest = sweep::RunStore::read_manifest(dir);
  if (!manifest) return std::optional<sweep::RunIdentity>{};
  if (manifest->is_object() && !manifest->contains("config_hash")) (*manifest)["config_hash"] = "";
  auto identity = sweep::read_identity(*manifest);
  if (!identity)
    return core::fail(core::ErrorKind::invalid, (dir / "manifest.json").string() + ": " + identity.error().message +
                                                    "; what the run was made of cannot be told, so a change "
                                                    "between the runs could not be named");
  return std::optional<sweep::RunIdentity>{std::move(*identity)};
}

}  // namespace kvsweep::report
