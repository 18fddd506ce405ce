#pragma once
/// A whole file (or its tail from a byte offset) read into a string: the one place kvsweep does it.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace kvsweep::core {

/// Whether a read goes through a symbolic link: a file of a run directory (records, manifest, cell
/// journal, logs) is never read through one, as none is written through one (`no_follow.hpp`); a
/// file a user names (a config, a corpus, a published document, a model) is.
enum class Links { follow, refuse };

/// The bytes of `path` from byte `offset` on (empty when the file is shorter); nullopt when it
/// cannot be opened or read, with errno saying why (ELOOP: a link refused). Callers word the
/// failure: each knows what the file was for.
std::optional<std::string> read_file(const std::filesystem::path& path, Links links, std::size_t offset = 0);

}  // namespace kvsweep::core
