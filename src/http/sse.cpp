#include "kvsweep/http/sse.hpp"

namespace kvsweep::http {

void SseDecoder::take_line(std::string_view line, std::vector<std::string>& out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) {  // end of an event
    if (m_has_data) out.push_back(std::move(m_data));
    m_data.clear();
    m_has_data = false;
    return;
  }
  if (line.front() == ':') return;  // a comment (keep-alive)
  const auto colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  if (field != "data") return;
  std::string_view value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (m_has_data) m_data += '\n';
  m_data += value;
  m_has_data = true;
}

std::vector<std::string> SseDecoder::feed(std::string_view bytes) {
  std::vector<std::string> out;
  while (!bytes.empty()) {
    const auto nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      m_line += bytes;
      break;
    }
    if (m_line.empty()) {
      take_line(bytes.substr(0, nl), out);
    } else {
      m_line += bytes.substr(0, nl);
      take_line(m_line, out);
      m_line.clear();
    }
    bytes.remove_prefix(nl + 1);
  }
  return out;
}

std::vector<std::string> SseDecoder::finish() {
  std::vector<std::string> out;
  if (!m_line.empty()) {
    take_line(m_line, out);
    m_line.clear();
  }
  if (m_has_data) out.push_back(std::move(m_data));
  m_data.clear();
  m_has_data = false;
  return out;
}

}  // namespace kvsweep::http
