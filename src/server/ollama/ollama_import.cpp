#include "kvsweep/server/ollama/ollama.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "kvsweep/core/host.hpp"
#include "kvsweep/core/read_file.hpp"

// kvsweep's Ollama store for imported GGUFs: the tag named by a file's content, and the import itself.

namespace kvsweep::server {

std::filesystem::path ollama_import_store() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::filesystem::path cache =
      xdg && *xdg ? std::filesystem::path(xdg) : std::filesystem::path(home && *home ? home : "/tmp") / ".cache";
  return cache / "kvsweep" / "ollama-models";
}

std::filesystem::path ollama_store_for(const CellSpec& spec) {
  for (const auto& [name, value] : spec.env)
    if (name == "OLLAMA_MODELS") return value;
  return ollama_import_store();
}

std::optional<core::Expected<OllamaImport>> ollama_import_for(const std::string& model_path) {
  std::error_code ec;
  const std::filesystem::path file(model_path);
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".gguf" || !std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  const auto size = std::filesystem::file_size(file, ec);
  const auto mtime = std::filesystem::last_write_time(file, ec).time_since_epoch().count();
  // One hash per file per process: every cell of a run names the same GGUF.
  static std::mutex mutex;
  static std::map<std::string, std::tuple<std::uintmax_t, long long, std::string>> hashes;
  std::lock_guard lock(mutex);
  const std::string key = std::filesystem::absolute(file, ec).string();
  auto it = hashes.find(key);
  if (it == hashes.end() || std::get<0>(it->second) != size || std::get<1>(it->second) != mtime) {
    auto hex = core::sha256_file(file);
    if (!hex) return core::Expected<OllamaImport>(std::unexpected(hex.error()));
    it = hashes.insert_or_assign(key, std::tuple{size, static_cast<long long>(mtime), *hex}).first;
  }
  const std::string& hex = std::get<2>(it->second);
  // Ollama's name rule: letters, digits, '_', '-', '.'; the tag part at most 128 characters.
  std::string stem = file.stem().string();
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '-';
  if (stem.empty() || !std::isalnum(static_cast<unsigned char>(stem.front()))) stem = "m" + stem;
  if (stem.size() > 64) stem.resize(64);
  return core::Expected<OllamaImport>(OllamaImport{"kvsweep/" + stem + ":" + hex.substr(0, 12), hex, file});
}

namespace {

/// Whether the store's layer blob for `sha256` (content-addressed: blobs/sha256-<hex>) holds the
/// GGUF's bytes. A blob of other content (replaced, corrupted) is removed so the import writes it again:
/// Ollama's POST /api/blobs keeps a blob that exists without reading it. Hashed once per blob (size
/// and mtime unchanged) per process, like the GGUF itself.
core::Expected<bool> layer_intact(const std::filesystem::path& store, const std::string& sha256) {
  const std::filesystem::path blob = store / "blobs" / ("sha256-" + sha256);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(blob, ec)) return false;
  const auto size = std::filesystem::file_size(blob, ec);
  const auto mtime = std::filesystem::last_write_time(blob, ec).time_since_epoch().count();
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::uintmax_t, long long>> verified;
  std::lock_guard lock(mutex);
  const auto it = verified.find(blob.string());
  if (it != verified.end() && it->second == std::pair<std::uintmax_t, long long>{size, mtime}) return true;
  auto hex = core::sha256_file(blob);
  if (!hex) return std::unexpected(hex.error());
  if (*hex == sha256) {
    verified[blob.string()] = {size, static_cast<long long>(mtime)};
    return true;
  }
  verified.erase(blob.string());
  if (!std::filesystem::remove(blob, ec) && ec)
    return core::fail(core::ErrorKind::io, blob.string() + " holds other content than " + sha256 + " (sha256 " + *hex +
                                               ") and cannot be removed: " + ec.message());
  return false;
}

}  // namespace

core::Expected<bool> ollama_ensure_import(http::Client& client, const OllamaImport& import,
                                          const std::filesystem::path& store) {
  auto show = client.post_for_json("/api/show", {{"model", import.tag}});
  if (show) {
    // The tag names the GGUF's content, but the store answers by name: its layer must be those bytes.
    auto intact = layer_intact(store, import.sha256);
    if (!intact) return std::unexpected(intact.error());
    if (*intact) return false;
  } else if (show.error().kind != core::ErrorKind::http_status) {
    return std::unexpected(show.error());  // nothing answered: no import can help
  }
  // Not there (404), or its manifest unreadable (a torn file answers 500): imported again, which
  // writes the tag's manifest anew, instead of every later run of this GGUF failing to load.
  std::optional<std::string> bytes = core::read_file(import.file, core::Links::follow);
  if (!bytes) return core::fail(core::ErrorKind::io, "cannot read " + import.file.string() + " to import it into Ollama");
  const std::string digest = "sha256:" + import.sha256;
  auto blob = client.post_text("/api/blobs/" + digest, std::move(*bytes));
  if (!blob) return std::unexpected(blob.error());
  if (blob->status / 100 != 2)
    return core::fail(core::ErrorKind::http_status, "POST /api/blobs/" + digest + " answered " +
                                                        std::to_string(blob->status) + ": " + blob->body.substr(0, 300));
  auto created = client.post_for_json(
      "/api/create", {{"model", import.tag}, {"files", {{import.file.filename().string(), digest}}}, {"stream", false}});
  if (!created) return std::unexpected(created.error());
  if (created->value("status", "") != "success")
    return core::fail(core::ErrorKind::parse, "/api/create " + import.tag + " answered " + created->dump());
  return true;
}

}  // namespace kvsweep::server
