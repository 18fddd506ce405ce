#include "kvsweep/probe/tool_text.hpp"

#include "kvsweep/core/file_name.hpp"

namespace kvsweep::probe {

std::string safe_name(std::string_view s) { return core::file_safe(s); }

std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace kvsweep::probe
