#pragma once
/// The kvsweep version and the git sha it was built from.

#include <string_view>

namespace kvsweep::core {
std::string_view version();
std::string_view git_sha();
}  // namespace kvsweep::core
