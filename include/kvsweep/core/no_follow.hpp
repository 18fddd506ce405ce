#pragma once
/// Opening a file of a run directory for writing without following a symbolic link: a link planted
/// there (`.kvsweep.lock` → ~/.bashrc) must not make kvsweep truncate or append to its target.

#include <filesystem>
#include <string>

namespace kvsweep::core {

/// ::open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode); -1 with errno set on failure.
int open_no_follow(const std::filesystem::path& path, int flags, int mode = 0644);

/// "P is a symbolic link; kvsweep writes no file of a run directory through a link (remove it)".
std::string link_refusal(const std::filesystem::path& path);

/// Why open_no_follow failed, from errno: "cannot open P: R", or, for a link (ELOOP), "P is a
/// symbolic link; kvsweep writes no file of a run directory through a link (remove it)".
std::string open_failure(const std::filesystem::path& path);

/// Writes `text` to `path` (created or truncated) without following a link at `path`.
bool write_file_no_follow(const std::filesystem::path& path, const std::string& text);

}  // namespace kvsweep::core
