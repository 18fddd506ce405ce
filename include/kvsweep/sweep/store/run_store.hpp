#pragma once
/// The run store: the only code that writes a run directory — manifest.json (replaced
/// atomically) and records.jsonl (append-only, fsync per record, torn last line repaired).

#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/record.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::sweep {

inline constexpr int kSchemaVersion = 1;

/// The resume key of a record: cell (model, variant, K, V), probe and item.
std::string triple_key(const core::CellKey& cell, const std::string& probe, const std::string& item);
std::string triple_key_of(const probe::Record& record);

/// Safe to share between the threads of cells run in parallel: append, has_ok, select and
/// write_manifest hold one lock (a record is written and fsynced whole before the next).
class RunStore {
 public:
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;
  RunStore(RunStore&& other) noexcept;
  RunStore& operator=(RunStore&&) = delete;
  ~RunStore();

  /// A new run directory; fails if it already holds records (use resume). Both create and open
  /// lock the directory for as long as the store lives: a second kvsweep is refused with its pid.
  static core::Expected<RunStore> create(const std::filesystem::path& dir);
  /// An existing run directory: loads records; a torn last line (a crash mid-write) is
  /// cut off so the next append starts on a fresh line.
  static core::Expected<RunStore> open(const std::filesystem::path& dir);
  /// Read-only view of a run directory's records (tolerates a torn last line).
  static core::Expected<std::vector<probe::Record>> read_records(const std::filesystem::path& dir);
  /// The same lines as written, every key kept (merge copies them into the merged run unchanged).
  static core::Expected<std::vector<nlohmann::json>> read_lines(const std::filesystem::path& dir);
  /// manifest.json as a Manifest, with the entries of the outcomes journal (cells.jsonl) after those it
  /// holds (Manifest::journaled) folded into its cells (rebuild_cells): a manifest a crash left behind its
  /// journal reads with the cells it lost. Fails
  /// naming the file when manifest.json cannot be read, is not JSON or not an object, and when a journal
  /// line is not a cell as kvsweep writes it (read_cells).
  static core::Expected<Manifest> read_manifest(const std::filesystem::path& dir);
  /// The pid of the kvsweep that holds `dir`'s lock (a run still going), "unknown" when it wrote
  /// none; nullopt when no process holds it.
  static std::optional<std::string> lock_holder(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return m_dir; }
  /// Every record; only while no other thread appends (use select() then).
  const std::vector<probe::Record>& records() const { return m_records; }
  /// A copy of the records for which `pred` holds.
  std::vector<probe::Record> select(const std::function<bool(const probe::Record&)>& pred) const;
  /// Bytes dropped from a torn last line when the store was opened (0 when clean).
  std::size_t repaired_bytes() const { return m_repaired; }
  bool has_ok(const std::string& key) const;

  /// Appends one record as a JSON line (probe::to_json, secrets redacted) and fsyncs. Refuses a second `ok`
  /// record for a triple.
  core::Expected<void> append(const probe::Record& record);
  /// The same for a line another run wrote (merge): appended as it was written, every key kept.
  core::Expected<void> append_as_written(const nlohmann::json& line);
  /// Appends one cell's outcome to cells.jsonl and fsyncs. Written before the manifest that
  /// holds it, so that a manifest which lost cells is rebuilt from it (sweep/store/cell_journal.hpp).
  core::Expected<void> append_cell(const ManifestCell& cell);
  /// Every whole line of a run directory's cells.jsonl as a cell, in order (none when absent). A line that
  /// does not parse is a write a crash tore (append_cell ends it with a newline before the next), left
  /// out; a whole JSON line that is not an object, or whose field has another type
  /// (ManifestCell::type_error), is an invalid error naming the file and the line: read as missing it
  /// would rebuild a cell wrongly.
  static core::Expected<std::vector<ManifestCell>> read_cells(const std::filesystem::path& dir);
  /// Writes manifest.json atomically (temp file, fsync, rename), secrets redacted.
  core::Expected<void> write_manifest(const Manifest& manifest);
  std::filesystem::path log_path(const std::string& cell_id) const { return m_dir / "logs" / (cell_id + ".log"); }

 private:
  RunStore() = default;
  static core::Expected<RunStore> open_impl(const std::filesystem::path& dir, bool must_be_empty);
  std::filesystem::path m_dir;
  int m_fd = -1;
  int m_lock_fd = -1;
  int m_cells_fd = -1;  // cells.jsonl, opened on the first append_cell  // holds the run directory's lock (.kvsweep.lock) while open
  core::Expected<void> append_checked(const nlohmann::json& line);
  std::vector<probe::Record> m_records;  // what records.jsonl holds, read back
  std::set<std::string> m_ok;
  std::size_t m_repaired = 0;
  mutable std::mutex m_mutex;  // guards m_fd and m_cells_fd writes, m_records, m_ok and manifest.json
};

/// One file for write_files_atomic: where, and what.
struct FileText {
  std::filesystem::path path;
  std::string_view text;
};

/// Writes every file or none: each to a temp name of its own beside it (pid and count: concurrent
/// writers never share one), fsynced, and only when all are written, renamed over the old ones.
/// A failure (a full disk) removes the temp files and names the file that failed.
core::Expected<void> write_files_atomic(std::span<const FileText> files);

/// Writes `text` to `path` atomically (a temp file of its own, fsync, rename).
core::Expected<void> write_file_atomic(const std::filesystem::path& path, const std::string& text);

}  // namespace kvsweep::sweep
