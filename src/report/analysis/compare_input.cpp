#include "kvsweep/report/analysis/compare.hpp"

// What compare reads from a path: a run directory summarized as its summary.json would hold it, or a
// summary.json (in its run, or kept apart as a CI baseline), with the manifest and identity beside it.

#include <algorithm>
#include <filesystem>
#include <map>
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

sweep::Manifest manifest_parts(const Summary& summary) {
  static const nlohmann::json kNone = nlohmann::json::object();
  const nlohmann::json& context = summary.context.is_object() ? summary.context : kNone;
  const auto part = [&](const char* key, nlohmann::json absent) {
    const auto it = context.find(key);
    return it == context.end() || it->is_null() ? absent : *it;
  };
  sweep::Manifest m;
  m.server = part("server", nlohmann::json::object());
  m.kvsweep = part("kvsweep", nlohmann::json::object());
  m.models = part("models", nlohmann::json::array());
  m.compute = part("compute", nullptr);
  if (const nlohmann::json n_ctx = part("n_ctx", nullptr); n_ctx.is_number_integer()) m.n_ctx = n_ctx.get<int>();
  // An environment of strings, as the run recorded it; anything else is not one (read as not recorded).
  if (const nlohmann::json env = part("server_env", nullptr);
      env.is_object() && std::ranges::all_of(env, [](const nlohmann::json& v) { return v.is_string(); }))
    m.server_env = env.get<std::map<std::string, std::string>>();
  if (!summary.config_hash.empty()) m.config_hash = summary.config_hash;
  m.cells.emplace();
  for (const SummaryCell& c : summary.cells) {
    if (!c.effective) continue;
    sweep::ManifestCell cell;
    cell.set_key(c.key());
    cell.id = c.id;
    cell.effective = c.effective;
    m.cells->push_back(std::move(cell));
  }
  return m;
}

std::optional<sweep::Manifest> load_manifest(const std::filesystem::path& path, const Summary& summary) {
  std::error_code ec;
  std::filesystem::path dir = path;
  if (!std::filesystem::is_directory(path, ec)) {
    // RUN_DIR/report/summary.json: the manifest is the run's; a summary kept apart carries its parts.
    const bool in_run = path.filename() == "summary.json" && path.parent_path().filename() == "report" &&
                        std::filesystem::exists(path.parent_path().parent_path() / "manifest.json", ec);
    if (!in_run) return summary.context.is_object() ? std::optional(manifest_parts(summary)) : std::nullopt;
    dir = path.parent_path().parent_path();
  }
  auto manifest = sweep::RunStore::read_manifest(dir);
  if (!manifest) return std::nullopt;
  return std::move(*manifest);
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
  if (!manifest->config_hash && !manifest->mistyped("config_hash")) manifest->config_hash = "";
  auto identity = sweep::read_identity(*manifest);
  if (!identity)
    return core::fail(core::ErrorKind::invalid, (dir / "manifest.json").string() + ": " + identity.error().message +
                                                    "; what the run was made of cannot be told, so a change "
                                                    "between the runs could not be named");
  return std::optional<sweep::RunIdentity>{std::move(*identity)};
}

}  // namespace kvsweep::report
