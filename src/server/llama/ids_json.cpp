#include "kvsweep/server/llama/ids_json.hpp"

#include <algorithm>
#include <charconv>

namespace kvsweep::server {

void IdsJsonWriter::append(std::string& out, std::span<const std::int32_t> ids) {
  const std::size_t shared =
      static_cast<std::size_t>(std::mismatch(ids.begin(), ids.end(), m_ids.begin(), m_ids.end()).first - ids.begin());
  // Keep the text of the shared ids, write the rest: the work is the new ids', not the prompt's.
  m_text.resize(shared == 0 ? 0 : m_ends[shared - 1]);
  m_ends.resize(shared);
  m_ids.assign(ids.begin(), ids.end());
  if (m_text.empty()) m_text = "[";
  char buf[16];
  for (std::size_t i = shared; i < ids.size(); ++i) {
    if (i > 0) m_text += ',';
    const auto end = std::to_chars(buf, buf + sizeof buf, ids[i]).ptr;
    m_text.append(buf, end);
    m_ends.push_back(m_text.size());
  }
  m_reused = shared;
  out += m_text;
  out += ']';
}

}  // namespace kvsweep::server
