#pragma once
/// The one rule that makes a name safe as one component of a file name: cell ids, tool logs.

#include <string>
#include <string_view>

namespace kvsweep::core {

/// `s` with every character other than [A-Za-z0-9._-] replaced by '_'.
std::string file_safe(std::string_view s);

}  // namespace kvsweep::core
