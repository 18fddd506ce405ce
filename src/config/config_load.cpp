#include "kvsweep/config/config.hpp"

// Reading a config file: JSON with comments, a key given twice in one object refused, nesting bounded,
// a parse error named by its line; the document then goes to from_json().

#include <algorithm>
#include <functional>
#include <set>

#include "kvsweep/core/error.hpp"
#include "kvsweep/core/read_file.hpp"

namespace kvsweep::config {

namespace {

constexpr int kMaxNesting = 64;

/// The parser callback that refuses a key given twice in one object (JSON keeps only the last, so
/// the first would be silently ignored), naming its path; it also runs `inner` (the depth bound).
class KeyCheck {
 public:
  using Inner = std::function<bool(int, nlohmann::json::parse_event_t, nlohmann::json&)>;
  KeyCheck(std::filesystem::path file, Inner inner) : m_file(std::move(file)), m_inner(std::move(inner)) {}
  bool operator()(int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      // The new container's path: its key in an object, "[]" after its array ("probes[].kind").
      std::string path = m_frames.empty() ? "" : m_frames.back().object ? m_key : m_frames.back().path + "[]";
      m_frames.push_back({event == E::object_start, {}, std::move(path)});
    } else if (event == E::object_end || event == E::array_end) {
      if (!m_frames.empty()) m_frames.pop_back();
    } else if (event == E::key && !m_frames.empty()) {
      auto& frame = m_frames.back();
      const std::string key = parsed.is_string() ? parsed.get<std::string>() : parsed.dump();
      m_key = frame.path.empty() ? key : frame.path + "." + key;
      if (!frame.keys.insert(key).second)
        throw core::FatalError(m_file.string() + ": " + m_key + ": given twice in one object; JSON keeps only the "
                               "last, so the first would be silently ignored: remove one");
    }
    return m_inner(depth, event, parsed);
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string path;
  };
  std::filesystem::path m_file;
  Inner m_inner;
  std::vector<Frame> m_frames;
  std::string m_key;  // the path of the last key read
};

}  // namespace

Config load(const std::filesystem::path& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw core::FatalError(file.string() + ": is a directory, not a config file; give the JSON file itself "
                           "(e.g. configs/demo.json)");
  const std::optional<std::string> text = core::read_file(file, core::Links::follow);
  if (!text) throw core::FatalError(file.string() + ": cannot open config file");
  nlohmann::json doc;
  try {
    // Nesting is bounded: a document nested 100,000 deep would exhaust the stack when copied.
    const auto bounded = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxNesting)
        throw core::FatalError(file.string() + ": nested deeper than " + std::to_string(kMaxNesting) +
                               " levels; a kvsweep config needs a handful");
      return true;
    };
    doc = nlohmann::json::parse(*text, KeyCheck(file, bounded), true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the offset of the error; turn it into a line number.
    std::size_t line =
        1 + static_cast<std::size_t>(std::count(text->begin(), text->begin() + std::min(e.byte, text->size()), '\n'));
    throw core::FatalError(file.string() + ":" + std::to_string(line) + ": not valid JSON: " + e.what());
  }
  return from_json(doc, file);
}

}  // namespace kvsweep::config
