#include "kvsweep/core/file_name.hpp"

#include <cctype>

namespace kvsweep::core {

std::string file_safe(std::string_view s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  return out;
}

}  // namespace kvsweep::core
