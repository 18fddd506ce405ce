#pragma once
/// A token-id prompt written as JSON text, the part it shares with the previous prompt copied from
/// that one's text: every raw recall request of a cell begins with the same corpus ids (18K tokens
/// are ~99 KB of JSON), so each request writes only the ids of its own question.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvsweep::server {

/// Remembers the last id array it wrote. Not thread-safe: one per server connection (LlamaApi).
class IdsJsonWriter {
 public:
  /// Appends `ids` as a JSON array ("[1,15043,29871]"), byte for byte what
  /// nlohmann::json(ids).dump() writes; the leading ids equal to the last call's are copied from
  /// its text, found by comparing the ids (never assumed).
  void append(std::string& out, std::span<const std::int32_t> ids);
  /// How many leading ids the last append copied rather than wrote.
  std::size_t reused() const { return m_reused; }

 private:
  std::vector<std::int32_t> m_ids;  // the last array written
  std::string m_text;               // its text without the closing ']'
  std::vector<std::size_t> m_ends;  // m_ends[i]: the size of m_text up to and with id i
  std::size_t m_reused = 0;
};

/// `body` (a JSON object) as nlohmann's compact dump writes it (invalid UTF-8 replaced), with the
/// value of its top-level key `key` written by `value` in place of the one `body` holds (a placeholder):
/// a large value built once as text is spliced in, never held as JSON nodes.
template <class WriteValue>
std::string dump_with(const nlohmann::json& body, const std::string& key, WriteValue&& value) {
  const auto dump = [](const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
  std::string out = "{";
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (it != body.begin()) out += ',';
    out += dump(nlohmann::json(it.key()));
    out += ':';
    if (it.key() == key) value(out);
    else out += dump(it.value());
  }
  out += '}';
  return out;
}

}  // namespace kvsweep::server
