#pragma once
/// Server-sent events as llama-server streams them: `data: <json>` lines, events separated by a
/// blank line, `data: [DONE]` at the end of OpenAI-style streams. Bytes arrive in arbitrary
/// pieces; the decoder hands out whole events.

#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::http {

class SseDecoder {
 public:
  /// Feeds the next piece of the body; returns the `data` payloads of the events it completed,
  /// in order (several `data:` lines of one event are joined with "\n"; other fields, comments
  /// and "\r" line ends are ignored).
  std::vector<std::string> feed(std::string_view bytes);
  /// The payload of an event the stream ended in without its closing blank line, if any.
  std::vector<std::string> finish();

 private:
  void take_line(std::string_view line, std::vector<std::string>& out);
  std::string m_line;   // the incomplete line so far
  std::string m_data;   // data of the event being read
  bool m_has_data = false;
};

}  // namespace kvsweep::http
