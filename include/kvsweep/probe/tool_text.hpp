#pragma once
/// Text helpers the probes that run a llama.cpp tool share: file-name-safe names, a command line
/// for records and messages, and reading a tool's output (its lines, the last ones for messages).

#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::probe {

/// `s` with every character other than [A-Za-z0-9._-] replaced by '_', for file names.
std::string safe_name(std::string_view s);

/// argv joined with spaces (for records and messages; never run through a shell).
std::string command_line(const std::vector<std::string>& argv);

/// The lines of a tool's output, without their '\r'.
std::vector<std::string_view> split_lines(std::string_view text);

/// `s` with runs of spaces and tabs made one space, and none at either end.
std::string collapse(std::string_view s);

/// The last `n` non-empty lines of a tool's output, each on a new indented line, for messages
/// (" (no output)" when there is none).
std::string output_tail(std::string_view output, std::size_t n = 12);

}  // namespace kvsweep::probe
