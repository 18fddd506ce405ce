#pragma once
/// Text helpers the probes that run a llama.cpp tool share: file-name-safe names and a command line
/// for records and messages.

#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::probe {

/// `s` with every character other than [A-Za-z0-9._-] replaced by '_', for file names.
std::string safe_name(std::string_view s);

/// argv joined with spaces (for records and messages; never run through a shell).
std::string command_line(const std::vector<std::string>& argv);

}  // namespace kvsweep::probe
