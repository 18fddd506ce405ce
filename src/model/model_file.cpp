#include "kvsweep/model/model_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kvsweep/model/gguf.hpp"

namespace kvsweep::model {

core::Expected<void> check_model_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) return core::fail(core::ErrorKind::invalid, "no such file");
  if (!std::filesystem::is_regular_file(status)) return core::fail(core::ErrorKind::invalid, "not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::fail(core::ErrorKind::invalid, std::string("cannot be read: ") + std::strerror(errno));
  // Every GGUF file starts with the four bytes "GGUF" (ggml's docs/gguf.md, "File Structure").
  char magic[4] = {};
  in.read(magic, sizeof magic);
  if (in.gcount() != 4 || std::string_view(magic, 4) != "GGUF")
    return core::fail(core::ErrorKind::invalid, "not a GGUF file (it does not start with the bytes \"GGUF\")");
  // Whole: its header parses and the file holds every tensor the header places (offset + bytes past
  // the data section's start). A cut download or copy fails here, not in every cell's server. What
  // this reader does not know (a newer value or tensor type) is left for the server to judge.
  in.clear();
  in.seekg(0);
  auto header = parse_gguf(in);
  if (!header) {
    // A header this reader cannot follow: cut short (it reads past the end, or counts more entries than
    // the bytes left can hold), or malformed. A version it does not know is the server's to judge.
    const std::string& why = header.error().message;
    if (header.error().kind != core::ErrorKind::parse) return {};
    const bool cut = why.find("truncated") != std::string::npos || why.find("past end of file") != std::string::npos ||
                     why.find("implausible counts") != std::string::npos;
    return core::fail(core::ErrorKind::invalid, (cut ? "truncated: its header ends early (" : "not a valid GGUF header (") +
                                                    why + ")" + (cut ? "; an interrupted download or copy?" : ""));
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return {};
  std::uint64_t needed = 0;
  std::string last;
  for (const auto& t : header->tensors) {
    auto bytes = tensor_bytes(t.type, t.shape);
    if (!bytes) continue;
    const std::uint64_t end = header->data_offset + t.offset + *bytes;
    if (end > needed) {
      needed = end;
      last = t.name;
    }
  }
  if (needed > size)
    return core::fail(core::ErrorKind::invalid, "truncated: " + std::to_string(size) + " bytes, but its tensor " + last +
                                                    " ends at byte " + std::to_string(needed) +
                                                    "; an interrupted download or copy?");
  return {};
}

}  // namespace kvsweep::model
