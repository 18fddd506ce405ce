#pragma once
/// Facts about this machine and files for provenance blocks: host, CPU, GPUs, sha256.

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"

namespace kvsweep::core {

/// {"hostname", "cpu", "cores", "mem_gib", "gpus": [...]}.
nlohmann::json host_info();

/// Hex sha256 of a file's contents.
Expected<std::string> sha256_file(const std::filesystem::path& path);
/// Hex sha256 of bytes in memory.
std::string sha256_hex(std::string_view bytes);

}  // namespace kvsweep::core
