#include "kvsweep/probe/tool_text.hpp"

#include "kvsweep/core/file_name.hpp"

namespace kvsweep::probe {

std::string safe_name(std::string_view s) { return core::file_safe(s); }

std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    pos = nl + 1;
  }
  return out;
}

/// Whitespace trimmed and runs of spaces collapsed ("Mean    KLD" → "Mean KLD").
std::string collapse(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string output_tail(std::string_view text, std::size_t n) {
  auto lines = split_lines(text);
  std::vector<std::string_view> kept;
  for (auto it = lines.rbegin(); it != lines.rend() && kept.size() < n; ++it)
    if (!collapse(*it).empty()) kept.push_back(*it);
  std::string out;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) out += "\n  " + std::string(*it);
  return out.empty() ? " (no output)" : out;
}

}  // namespace kvsweep::probe
