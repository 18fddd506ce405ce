#include "kvsweep/sweep/store/run_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "kvsweep/core/no_follow.hpp"
#include "kvsweep/core/read_file.hpp"
#include "kvsweep/core/redact.hpp"
#include "kvsweep/probe/record_fields.hpp"
#include "kvsweep/sweep/store/cell_journal.hpp"
#include "kvsweep/sweep/store/manifest.hpp"

namespace kvsweep::sweep {

namespace {

/// A file of the run directory, never read through a link planted in its place.
core::Expected<std::string> slurp(const std::filesystem::path& p) {
  std::optional<std::string> bytes = core::read_file(p, core::Links::refuse);
  if (!bytes) return core::fail(core::ErrorKind::io, errno == ELOOP ? core::link_refusal(p) : "cannot read " + p.string());
  return std::move(*bytes);
}

// Splits complete lines; returns the byte length of the valid prefix (every line
// terminated by '\n' and parseable). Anything after is a torn tail.
std::size_t parse_lines(const std::string& data, std::vector<nlohmann::json>& out, std::string& error) {
  std::size_t pos = 0, valid = 0, line_no = 0;
  while (pos < data.size()) {
    std::size_t nl = data.find('\n', pos);
    if (nl == std::string::npos) break;  // no newline: torn
    ++line_no;
    std::string_view line(data.data() + pos, nl - pos);
    if (!line.empty()) {
      try {
        auto record = nlohmann::json::parse(line);
        // Whole and JSON, but not a record: corruption (an edit, another file's lines), never a torn tail.
        if (!record.is_object() || !record.contains("cell") || !record["cell"].is_object()) {
          error = "line " + std::to_string(line_no) + " is not a record (a JSON object with a \"cell\" object), it is " +
                  (record.is_object() ? std::string("an object without one") : "the " + std::string(record.type_name()) +
                                                                                  " " + record.dump().substr(0, 40)) +
                  "; fix or remove that line";
          break;
        }
        // A field of another type would read as empty: a metric "0" as missing, not as a measurement.
        if (const std::string why = probe::record_type_error(record); !why.empty()) {
          error = "line " + std::to_string(line_no) + ": " + why + "; fix or remove that line";
          break;
        }
        out.push_back(std::move(record));
      } catch (const std::exception& e) {
        // A bad line in the middle is corruption, not a torn tail: stop and report.
        if (nl + 1 < data.size()) {
          error = "line " + std::to_string(line_no) + " is not JSON (" + e.what() +
                  "); only a torn last line is repaired: fix or remove that line";
        }
        break;
      }
    }
    pos = nl + 1;
    valid = pos;
  }
  return valid;
}

/// The pid a lock file holds ("unknown" when empty).
std::string pid_in(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

/// A run's records are a regular file: a directory (or a device) in its place would read as none,
/// and a report written from that would overwrite a good one with "0 records".
core::Expected<void> regular_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(std::filesystem::symlink_status(path, ec)) ||
      std::filesystem::is_regular_file(path, ec))
    return {};
  return core::fail(core::ErrorKind::io, path.string() + " is not a regular file (" +
                                             (std::filesystem::is_directory(path, ec) ? "a directory" : "something else") +
                                             "): a run's records are one JSON line per item; move it away");
}

/// Holds `dir`'s lock (flock on .kvsweep.lock, which holds the owner's pid) for as long as the
/// returned descriptor stays open; the kernel drops it when the process ends, even by a crash.
core::Expected<int> lock_run_dir(const std::filesystem::path& dir) {
  const auto path = dir / ".kvsweep.lock";
  int fd = core::open_no_follow(path, O_RDWR | O_CREAT);
  if (fd < 0) return core::fail(core::ErrorKind::io, core::open_failure(path));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string pid = pid_in(fd);
    ::close(fd);
    if (err == EWOULDBLOCK)
      return core::fail(core::ErrorKind::invalid, dir.string() + " is in use by another kvsweep (pid " + pid +
                                                      "); wait for it or stop it");
    return core::fail(core::ErrorKind::io, "cannot lock " + path.string() + ": " + std::strerror(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The lock holds without the pid; a second run then says "pid unknown".
  }
  return fd;
}

/// Writes all of `text` to `fd`; false (errno set) when a write fails.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

/// Appends `line` to `fd` (opened O_APPEND) and fsyncs. A write or fsync that fails (a full
/// disk) may leave part of the line: it is cut off, so the file stays whole lines and the next
/// append (after space is freed) starts on a fresh one.
core::Expected<void> append_line(int fd, const std::filesystem::path& path, const std::string& line) {
  const off_t before = ::lseek(fd, 0, SEEK_END);
  auto fail = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    const bool cut = before >= 0 && ::ftruncate(fd, before) == 0;
    return core::fail(core::ErrorKind::io, what + " " + path.string() + ": " + reason +
                                               (cut ? "" : " (a partial line may remain; resume repairs it)"));
  };
  if (!write_all(fd, line)) return fail("cannot append to");
  if (::fsync(fd) != 0) return fail("cannot fsync");
  return {};
}

}  // namespace

std::string triple_key(const core::CellKey& cell, const std::string& probe, const std::string& item) {
  return cell.model + "\x1f" + cell.variant + "\x1f" + cell.type_k + "\x1f" + cell.type_v + "\x1f" + probe + "\x1f" + item;
}

std::string triple_key_of(const probe::Record& r) { return triple_key(r.cell, r.probe, r.item); }

RunStore::RunStore(RunStore&& o) noexcept
    : m_dir(std::move(o.m_dir)), m_fd(std::exchange(o.m_fd, -1)), m_lock_fd(std::exchange(o.m_lock_fd, -1)),
      m_cells_fd(std::exchange(o.m_cells_fd, -1)), m_records(std::move(o.m_records)),
      m_ok(std::move(o.m_ok)), m_repaired(o.m_repaired) {}

RunStore::~RunStore() {
  if (m_fd >= 0) ::close(m_fd);
  if (m_lock_fd >= 0) ::close(m_lock_fd);
  if (m_cells_fd >= 0) ::close(m_cells_fd);
}

core::Expected<std::vector<probe::Record>> RunStore::read_records(const std::filesystem::path& dir) {
  auto lines = read_lines(dir);
  if (!lines) return std::unexpected(lines.error());
  return probe::records_from_json(*lines);
}

core::Expected<std::vector<nlohmann::json>> RunStore::read_lines(const std::filesystem::path& dir) {
  auto path = dir / "records.jsonl";
  std::vector<nlohmann::json> out;
  if (!std::filesystem::exists(path)) return out;
  if (auto plain = regular_file(path); !plain) return std::unexpected(plain.error());
  auto data = slurp(path);
  if (!data) return std::unexpected(data.error());
  std::string error;
  parse_lines(*data, out, error);
  if (!error.empty()) return core::fail(core::ErrorKind::parse, path.string() + ": " + error);
  return out;
}

core::Expected<Manifest> RunStore::read_manifest(const std::filesystem::path& dir) {
  const auto path = dir / "manifest.json";
  auto data = slurp(path);
  if (!data) return std::unexpected(data.error());
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(*data);
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, path.string() + ": " + e.what());
  }
  std::optional<Manifest> manifest = Manifest::from_json(doc);
  if (!manifest) return core::fail(core::ErrorKind::parse, path.string() + ": not a JSON object");
  // The journal is written before the manifest that holds it: what a crash kept out of the manifest is
  // there, after the entries the manifest says it holds.
  auto journal = read_cells(dir);
  if (!journal) return std::unexpected(journal.error());
  const std::size_t held = std::min<std::size_t>(static_cast<std::size_t>(std::max(manifest->journaled.value_or(0), 0)),
                                                 journal->size());
  if (held < journal->size())
    manifest->cells = rebuild_cells(manifest->cell_list(), std::span(*journal).subspan(held));
  return std::move(*manifest);
}

std::optional<std::string> RunStore::lock_holder(const std::filesystem::path& dir) {
  const auto path = dir / ".kvsweep.lock";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> holder;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) holder = pid_in(fd);
  }
  ::close(fd);  // drops the shared lock, if taken
  return holder;
}

core::Expected<RunStore> RunStore::create(const std::filesystem::path& dir) { return open_impl(dir, true); }
core::Expected<RunStore> RunStore::open(const std::filesystem::path& dir) { return open_impl(dir, false); }

core::Expected<RunStore> RunStore::open_impl(const std::filesystem::path& dir, bool must_be_empty) {
  std::error_code ec;
  std::filesystem::create_directories(dir / "logs", ec);
  if (ec) return core::fail(core::ErrorKind::io, "cannot create " + (dir / "logs").string() + ": " + ec.message());
  RunStore store;
  store.m_dir = dir;
  auto lock = lock_run_dir(dir);
  if (!lock) return std::unexpected(lock.error());
  store.m_lock_fd = *lock;
  auto path = dir / "records.jsonl";
  // A new run never inherits a directory's old cells: a run that wrote no records still left its
  // manifest and cell journal, which the new run's manifest would take in.
  if (must_be_empty) {
    for (const char* left : {"manifest.json", "cells.jsonl"}) {
      if (std::filesystem::exists(std::filesystem::symlink_status(dir / left, ec)))
        return core::fail(core::ErrorKind::invalid, dir.string() + " already holds a run (" + left +
                                                        "); use --resume to continue it, or choose another -o");
    }
  }
  // Read, repaired (truncated) and appended to: never through a link planted in its place.
  if (std::filesystem::is_symlink(path, ec))
    return core::fail(core::ErrorKind::io, core::link_refusal(path));
  if (std::filesystem::exists(path)) {
    if (auto plain = regular_file(path); !plain) return std::unexpected(plain.error());
    auto data = slurp(path);
    if (!data) return std::unexpected(data.error());
    if (must_be_empty && !data->empty()) {
      return core::fail(core::ErrorKind::invalid,
                        dir.string() + " already holds records; use --resume to continue it, or choose another -o");
    }
    std::string error;
    std::vector<nlohmann::json> lines;
    std::size_t valid = parse_lines(*data, lines, error);
    if (!error.empty()) return core::fail(core::ErrorKind::parse, path.string() + ": " + error);
    if (valid < data->size()) {
      store.m_repaired = data->size() - valid;
      if (::truncate(path.c_str(), static_cast<off_t>(valid)) != 0)
        return core::fail(core::ErrorKind::io, "cannot repair " + path.string() + ": " + std::strerror(errno));
    }
    store.m_records = probe::records_from_json(lines);
  }
  for (const auto& r : store.m_records)
    if (r.ok()) store.m_ok.insert(triple_key_of(r));
  store.m_fd = core::open_no_follow(path, O_WRONLY | O_CREAT | O_APPEND);
  if (store.m_fd < 0) return core::fail(core::ErrorKind::io, core::open_failure(path));
  return store;
}

bool RunStore::has_ok(const std::string& key) const {
  std::lock_guard lock(m_mutex);
  return m_ok.contains(key);
}

std::vector<probe::Record> RunStore::select(const std::function<bool(const probe::Record&)>& pred) const {
  std::lock_guard lock(m_mutex);
  std::vector<probe::Record> out;
  std::copy_if(m_records.begin(), m_records.end(), std::back_inserter(out), pred);
  return out;
}

core::Expected<void> RunStore::append(const probe::Record& record) { return append_checked(probe::to_json(record)); }

core::Expected<void> RunStore::append_as_written(const nlohmann::json& line) { return append_checked(line); }

core::Expected<void> RunStore::append_checked(const nlohmann::json& record) {
  std::lock_guard lock(m_mutex);  // check, write and remember as one step: no duplicate slips in
  nlohmann::json clean = core::redact_json(record);  // what the file holds is what the store remembers
  std::optional<probe::Record> read = probe::Record::from_json(clean);
  if (!read) return core::fail(core::ErrorKind::invalid, "refusing a line that is not a record (no \"cell\" object)");
  std::string key = triple_key_of(*read);
  if (read->ok() && m_ok.contains(key)) {
    return core::fail(core::ErrorKind::invalid, "refusing a duplicate ok record for " + record["cell"].dump() + " " +
                                                    read->probe + " " + read->item);
  }
  std::string line = clean.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (auto written = append_line(m_fd, m_dir / "records.jsonl", line); !written) return written;
  if (read->ok()) m_ok.insert(key);
  m_records.push_back(std::move(*read));
  return {};
}

namespace {

/// A temp name next to `path` that no other writer uses: another process (a second `kvsweep
/// report`) has another pid, another thread of this one another count.
std::filesystem::path unique_temp(const std::filesystem::path& path) {
  static std::atomic<unsigned long> counter{0};
  auto tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  return tmp;
}

}  // namespace

core::Expected<void> write_files_atomic(std::span<const FileText> files) {
  std::vector<std::filesystem::path> temps;
  const auto remove_temps = [&temps] {
    for (const auto& t : temps) ::unlink(t.c_str());
  };
  // Messages name the file the caller asked for; the temp file only says how it failed.
  const auto fail = [&](const std::filesystem::path& path, const std::filesystem::path& tmp, const std::string& reason) {
    remove_temps();
    const std::string dir = path.has_parent_path() ? path.parent_path().string() : ".";
    const std::string others = files.size() > 1 ? "; none of the " + std::to_string(files.size()) +
                                                      " files was replaced"
                                                : "";
    return core::fail(core::ErrorKind::io, "cannot write " + path.string() + ": " + reason + " (writing " +
                                               tmp.filename().string() + " in " + dir + " first" + others +
                                               "; check that the directory is writable and has space)");
  };
  // Every file to a temp name first: a full disk or any failure leaves the old files as they were.
  for (const auto& file : files) {
    std::error_code ec;
    if (file.path.has_parent_path()) std::filesystem::create_directories(file.path.parent_path(), ec);
    const auto tmp = unique_temp(file.path);
    int fd = core::open_no_follow(tmp, O_WRONLY | O_CREAT | O_EXCL);
    if (fd < 0) return fail(file.path, tmp, std::strerror(errno));
    temps.push_back(tmp);
    const std::string clean = core::redact(file.text);  // every file of a run directory is written here or appended above
    if (!write_all(fd, clean) || ::fsync(fd) != 0) {
      const std::string reason = std::strerror(errno);
      ::close(fd);
      return fail(file.path, tmp, reason);
    }
    if (::close(fd) != 0) return fail(file.path, tmp, std::strerror(errno));
  }
  // Then the renames, which need no space.
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(temps[i], files[i].path, ec);
    if (ec) {
      const std::string reason = ec.message() + (i > 0 ? " (" + std::to_string(i) + " of the " +
                                                             std::to_string(files.size()) + " files already replaced)"
                                                       : "");
      temps.erase(temps.begin(), temps.begin() + static_cast<std::ptrdiff_t>(i));
      return fail(files[i].path, temps.front(), reason);
    }
  }
  return {};
}

core::Expected<void> write_file_atomic(const std::filesystem::path& path, const std::string& text) {
  const FileText file{path, text};
  return write_files_atomic(std::span(&file, 1));
}

core::Expected<void> RunStore::append_cell(const ManifestCell& cell) {
  std::lock_guard lock(m_mutex);
  const auto path = m_dir / "cells.jsonl";
  if (m_cells_fd < 0) {
    // Read as well as written: the torn-line check below preads the last byte (EBADF on a write-only fd,
    // when a torn line then swallowed the first new one).
    m_cells_fd = core::open_no_follow(path, O_RDWR | O_CREAT | O_APPEND);
    if (m_cells_fd < 0) return core::fail(core::ErrorKind::io, core::open_failure(path));
    // A torn last line (a crash mid-write) must not swallow the first new one.
    const off_t size = ::lseek(m_cells_fd, 0, SEEK_END);
    char last = '\n';
    if (size > 0 && ::pread(m_cells_fd, &last, 1, size - 1) == 1 && last != '\n') {
      if (auto fixed = append_line(m_cells_fd, path, "\n"); !fixed) return fixed;
    }
  }
  return append_line(m_cells_fd, path,
                     core::redact_json(to_json(cell)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

core::Expected<std::vector<ManifestCell>> RunStore::read_cells(const std::filesystem::path& dir) {
  std::vector<ManifestCell> out;
  const auto path = dir / "cells.jsonl";
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return out;
  auto data = slurp(path);
  if (!data) return std::unexpected(data.error());
  std::size_t pos = 0, line_no = 0;
  while (pos < data->size()) {
    std::size_t nl = data->find('\n', pos);
    if (nl == std::string::npos) break;  // a torn last line
    ++line_no;
    const std::string_view line = std::string_view(*data).substr(pos, nl - pos);
    pos = nl + 1;
    auto j = nlohmann::json::parse(line, nullptr, false);
    // Not JSON: a write a crash tore, closed by the next append's newline.
    if (j.is_discarded() || line.empty()) continue;
    // Whole and JSON, but a field of another type would read as absent and rebuild the cell wrongly.
    if (const std::string why = ManifestCell::type_error(j); !why.empty())
      return core::fail(core::ErrorKind::invalid, path.string() + ": line " + std::to_string(line_no) + ": " + why +
                                                      "; fix or remove that line");
    if (auto cell = ManifestCell::from_json(j)) out.push_back(std::move(*cell));
  }
  return out;
}

core::Expected<void> RunStore::write_manifest(const Manifest& manifest) {
  std::lock_guard lock(m_mutex);  // one writer of manifest.json.tmp at a time
  return write_file_atomic(m_dir / "manifest.json", core::redact_json(to_json(manifest)).dump(2) + "\n");
}

}  // namespace kvsweep::sweep
